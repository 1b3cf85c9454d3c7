// SPDX-License-Identifier: Apache-2.0
// An adapter whose table tail runs the spec's parameter checks (ordo::table_tail,
// docs/adapter-guide.md, "The exception boundary") refuses bad input with the code the
// loader's validation layer gives, with no layer loaded. Each case below breaks a rule
// of the spec and, where two rules are broken, the adapter's own checks would pick
// another one first: the same calls run through the loader without and with
// UR_LAYER_PARAMETER_VALIDATION and must answer the same, the spec's code.
//
// SharedRules: the rules written once in source/ordo (queue_rules.hpp, device_info.hpp)
// that no layer checks: a compute queue index the device does not have, a device-info
// value between the spec's values, one of the spec's the adapter does not answer.
//
// The adapter is the one UR_ADAPTERS_FORCE_LOAD names, its devices the ones
// ONEAPI_DEVICE_SELECTOR selects (ctest param_checks_<adapter>).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ur_api.h"

namespace {

struct Objects {
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
};

struct Case {
  const char *what;
  ur_result_t spec; // the code the spec's first broken rule gives
  std::function<ur_result_t(const Objects &)> call;
};

const ur_queue_flags_t kNoSuchQueueFlag = ur_queue_flags_t(1u) << 31;
const ur_usm_advice_flags_t kNoSuchAdvice = ur_usm_advice_flags_t(1u) << 31;

std::vector<Case> cases() {
  return {
      {"urQueueGetInfo: a value that is no ur_queue_info_t, and a buffer with size 0",
       UR_RESULT_ERROR_INVALID_ENUMERATION,
       [](const Objects &o) {
         uint32_t value = 0;
         return urQueueGetInfo(o.queue, ur_queue_info_t(0x7fff), 0, &value, nullptr);
       }},
      {"urDeviceGetInfo: a value that is no ur_device_info_t, and a buffer with size 0",
       UR_RESULT_ERROR_INVALID_ENUMERATION,
       [](const Objects &o) {
         uint32_t value = 0;
         return urDeviceGetInfo(o.device, ur_device_info_t(0x7fff0000), 0, &value, nullptr);
       }},
      {"urUSMHostAlloc: an alignment that is no power of two, and size 0", UR_RESULT_ERROR_INVALID_VALUE,
       [](const Objects &o) {
         ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, 3};
         void *p = nullptr;
         return urUSMHostAlloc(o.context, &desc, nullptr, 0, &p);
       }},
      {"urUSMDeviceAlloc: an advice flag the spec does not have, and size 0", UR_RESULT_ERROR_INVALID_ENUMERATION,
       [](const Objects &o) {
         ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, nullptr, kNoSuchAdvice, 0};
         void *p = nullptr;
         return urUSMDeviceAlloc(o.context, o.device, &desc, nullptr, 0, &p);
       }},
      {"urQueueCreate: a flag the spec does not have, and no place for the queue", UR_RESULT_ERROR_INVALID_NULL_POINTER,
       [](const Objects &o) {
         ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, kNoSuchQueueFlag};
         return urQueueCreate(o.context, o.device, &props, nullptr);
       }},
      {"urQueueCreate: high and low priority", UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES,
       [](const Objects &o) {
         ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr,
                                     UR_QUEUE_FLAG_PRIORITY_HIGH | UR_QUEUE_FLAG_PRIORITY_LOW};
         ur_queue_handle_t q = nullptr;
         return urQueueCreate(o.context, o.device, &props, &q);
       }},
      {"urContextCreate: no devices", UR_RESULT_ERROR_INVALID_SIZE,
       [](const Objects &o) {
         ur_context_handle_t c = nullptr;
         return urContextCreate(0, &o.device, nullptr, &c);
       }},
      {"urDeviceGet: a device type the spec does not have", UR_RESULT_ERROR_INVALID_ENUMERATION,
       [](const Objects &o) {
         uint32_t n = 0;
         return urDeviceGet(o.platform, ur_device_type_t(0x1234), 0, nullptr, &n);
       }},
  };
}

// Every case's answer through the loader, with or without the validation layer.
std::vector<ur_result_t> answers(bool validation, const std::vector<Case> &all = cases()) {
  std::vector<ur_result_t> out;
  ur_loader_config_handle_t config = nullptr;
  EXPECT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  if (validation) {
    EXPECT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_PARAMETER_VALIDATION"), UR_RESULT_SUCCESS);
  }
  EXPECT_EQ(urLoaderInit(0, config), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
  Objects o;
  uint32_t n = 0;
  if (urAdapterGet(1, &o.adapter, &n) == UR_RESULT_SUCCESS && n == 1 &&
      urPlatformGet(o.adapter, 1, &o.platform, nullptr) == UR_RESULT_SUCCESS &&
      urDeviceGet(o.platform, UR_DEVICE_TYPE_ALL, 1, &o.device, nullptr) == UR_RESULT_SUCCESS &&
      urContextCreate(1, &o.device, nullptr, &o.context) == UR_RESULT_SUCCESS &&
      urQueueCreate(o.context, o.device, nullptr, &o.queue) == UR_RESULT_SUCCESS) {
    for (const Case &c : all) out.push_back(c.call(o));
  }
  if (o.queue) {
    EXPECT_EQ(urQueueRelease(o.queue), UR_RESULT_SUCCESS);
  }
  if (o.context) {
    EXPECT_EQ(urContextRelease(o.context), UR_RESULT_SUCCESS);
  }
  if (o.adapter) {
    EXPECT_EQ(urAdapterRelease(o.adapter), UR_RESULT_SUCCESS);
  }
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  return out;
}

} // namespace

TEST(AdapterParamChecks, BadInputGetsTheValidationLayersCodeWithoutTheLayer) {
  const std::vector<ur_result_t> without = answers(false);
  const std::vector<ur_result_t> with = answers(true);
  const std::vector<Case> all = cases();
  ASSERT_EQ(without.size(), all.size()) << "no adapter, device, context or queue (UR_ADAPTERS_FORCE_LOAD, "
                                           "ONEAPI_DEVICE_SELECTOR)";
  ASSERT_EQ(with.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(with[i], all[i].spec) << all[i].what << " (validation layer)";
    EXPECT_EQ(without[i], all[i].spec) << all[i].what << " (no layer: the adapter's table tail)";
  }
}

TEST(AdapterParamChecks, SharedRulesNoLayerChecks) {
  const std::vector<Case> rules = {
      {"urQueueCreate: compute queue index 1 of a device that has one (ordo::check_queue_properties)",
       UR_RESULT_ERROR_INVALID_VALUE,
       [](const Objects &o) {
         ur_queue_index_properties_t index{UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES, nullptr, 1};
         ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, &index, 0};
         ur_queue_handle_t q = nullptr;
         const ur_result_t r = urQueueCreate(o.context, o.device, &props, &q);
         if (q) urQueueRelease(q);
         return r;
       }},
      {"urDeviceGetInfo: 0x5000, below the spec's largest value but none of its values "
       "(ordo::device_info_default)",
       UR_RESULT_ERROR_INVALID_ENUMERATION,
       [](const Objects &o) {
         size_t size = 0;
         return urDeviceGetInfo(o.device, ur_device_info_t(0x5000), 0, nullptr, &size);
       }},
      {"urDeviceGetInfo: UR_DEVICE_INFO_GPU_EU_COUNT, a query of the spec a CPU device does not answer",
       UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
       [](const Objects &o) {
         size_t size = 0;
         return urDeviceGetInfo(o.device, UR_DEVICE_INFO_GPU_EU_COUNT, 0, nullptr, &size);
       }},
  };
  for (bool validation : {false, true}) {
    const std::vector<ur_result_t> got = answers(validation, rules);
    ASSERT_EQ(got.size(), rules.size()) << "no adapter, device, context or queue";
    for (size_t i = 0; i < rules.size(); ++i)
      EXPECT_EQ(got[i], rules[i].spec) << rules[i].what << (validation ? " (validation layer)" : " (no layer)");
  }
}
