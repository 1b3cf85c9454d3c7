// SPDX-License-Identifier: Apache-2.0
// urLoaderConfig*: reference counting, queries, and refusal of bad handles.
#include <cstring>

#include "helpers.hpp"

using namespace loader_test;

TEST(LoaderConfig, CountsReferences) {
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderConfigRetain(config), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ASSERT_EQ(urLoaderConfigGetInfo(config, UR_LOADER_CONFIG_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
  // Gone: refused, not used.
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(urLoaderConfigRetain(config), UR_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_TRACING"), UR_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(LoaderConfig, ListsTheAvailableLayers) {
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  size_t size = 0;
  ASSERT_EQ(urLoaderConfigGetInfo(config, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS, 0, nullptr, &size),
            UR_RESULT_SUCCESS);
  std::string names(size, '\0');
  ASSERT_EQ(urLoaderConfigGetInfo(config, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS, size, &names[0], nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_STREQ(names.c_str(), "UR_LAYER_PARAMETER_VALIDATION;UR_LAYER_LEAK_CHECKING;UR_LAYER_FULL_VALIDATION;"
                              "UR_LAYER_BOUNDS_CHECKING;UR_LAYER_TRACING");
  char small[4];
  EXPECT_EQ(urLoaderConfigGetInfo(config, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS, sizeof small, small, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(urLoaderConfigGetInfo(config, static_cast<ur_loader_config_info_t>(7), sizeof small, small, nullptr),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
}

TEST(LoaderConfig, RefusesNullArguments) {
  EXPECT_EQ(urLoaderConfigCreate(nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urLoaderConfigRetain(nullptr), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(urLoaderConfigRelease(nullptr), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(urLoaderConfigSetMockingEnabled(nullptr, true), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderConfigSetCodeLocationCallback(config, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
}
