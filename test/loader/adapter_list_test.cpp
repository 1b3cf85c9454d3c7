// SPDX-License-Identifier: Apache-2.0
// Items 6 and 7 of issue 22: a loader named as an adapter is skipped, and urAdapterGet
// neither returns a null handle nor drops a working adapter when another adapter's
// urAdapterGet fails after it was loaded.
#include <climits>
#include <initializer_list>
#include <cstdlib>

#include "helpers.hpp"

using namespace loader_test;

namespace {

std::string real(const std::string &path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

} // namespace

// UR_ADAPTERS_FORCE_LOAD naming libur_loader.so.0 itself used to abort the process (the
// probe's urAdapterGet re-entered urLoaderInit's lock); a copy of the loader under an
// adapter's name used to start a second discovery that came back to the first.
TEST(LoaderAsAdapter, IsSkippedWithAWarningAndTheOthersLoad) {
  std::string dir = temp_dir("self");
  std::string copy = copy_to(loader_library(), dir, "libur_adapter_opencl.so.0");
  std::string good = copy_to(mock_library(), dir, "libur_adapter_good.so.0");
  std::string list = loader_library() + "," + copy + "," + good;
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", list.c_str());
  testing::internal::CaptureStderr();
  std::vector<std::string> files;
  {
    LoaderScope scope;
    for (ur_adapter_handle_t a : adapters()) {
      files.push_back(real(library_of(a)));
      urAdapterRelease(a);
    }
  }
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_EQ(files.size(), 1u) << log;
  EXPECT_EQ(files[0], real(good));
  for (const std::string &loader : {loader_library(), copy})
    EXPECT_EQ(count_lines_with(log, "[WARNING]: skipping adapter " + loader +
                                        " (UR_ADAPTERS_FORCE_LOAD): it is a UR loader (it defines urLoaderInit), "
                                        "not an adapter"),
              1u)
        << loader << "\n"
        << log;
}

// A loader copy under an adapter's name beside the loader: skipped by the search too.
// Run on a private copy of the loader, whose own directory holds nothing else, so that
// the search loads no real adapter into this process.
TEST(LoaderAsAdapter, IsSkippedByTheSearch) {
  std::string dir = temp_dir("self_search");
  std::string private_loader = copy_to(loader_library(), dir, "libur_loader.so.0");
  std::string copy = copy_to(loader_library(), dir, "libur_adapter_hip.so.0");
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", nullptr);
  EnvVar search("UR_ADAPTERS_SEARCH_PATH", nullptr);
  void *lib = dlopen(private_loader.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto init =
      reinterpret_cast<ur_result_t (*)(ur_device_init_flags_t, ur_loader_config_handle_t)>(dlsym(lib, "urLoaderInit"));
  auto adapter_get =
      reinterpret_cast<ur_result_t (*)(uint32_t, ur_adapter_handle_t *, uint32_t *)>(dlsym(lib, "urAdapterGet"));
  auto tear_down = reinterpret_cast<ur_result_t (*)()>(dlsym(lib, "urLoaderTearDown"));
  ASSERT_TRUE(init && adapter_get && tear_down);
  testing::internal::CaptureStderr();
  uint32_t count = 99;
  EXPECT_EQ(init(0, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(adapter_get(0, nullptr, &count), UR_RESULT_SUCCESS);
  EXPECT_EQ(tear_down(), UR_RESULT_SUCCESS);
  std::string log = testing::internal::GetCapturedStderr();
  dlclose(lib);
  EXPECT_EQ(count, 0u) << log;
  EXPECT_EQ(count_lines_with(log, "[WARNING]: skipping adapter " + copy + ": it is a UR loader"), 1u) << log;
}

namespace {

// The failing adapter (its urAdapterGet works for the loader's probe only) listed first,
// then a working mock, both force-loaded.
struct FailingThenWorking {
  std::string good = copy_to(mock_library(), temp_dir("get_once"), "libur_adapter_good.so.0");
  std::string flaky = broken_library("adapter_get_once");
  EnvVar force{"UR_ADAPTERS_FORCE_LOAD", (flaky + "," + good).c_str()};
};

} // namespace

// Every adapter the count promised comes back non-null: the failing one as the handle the
// loader holds since its probe (retained for the caller), the working one as itself.
TEST(AdapterGet, AFailingAdapterNeverYieldsANullHandleNorHidesTheOthers) {
  FailingThenWorking setup;
  EnvVar retain_works("ORDO_TEST_BROKEN_RETAIN_FAILS", nullptr);
  testing::internal::CaptureStderr();
  uint32_t count = 0, written = 0;
  ur_adapter_handle_t handles[2] = {nullptr, nullptr};
  std::string files[2];
  {
    LoaderScope scope;
    ASSERT_EQ(urAdapterGet(0, nullptr, &count), UR_RESULT_SUCCESS);
    ASSERT_EQ(urAdapterGet(2, handles, &written), UR_RESULT_SUCCESS);
    for (int i = 0; i < 2; ++i) {
      if (!handles[i]) continue;
      files[i] = real(library_of(handles[i]));
      EXPECT_EQ(urAdapterRelease(handles[i]), UR_RESULT_SUCCESS);
    }
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count, 2u) << log;
  EXPECT_EQ(written, 2u) << log;
  ASSERT_NE(handles[0], nullptr) << log;
  ASSERT_NE(handles[1], nullptr) << log;
  EXPECT_EQ(files[0], real(setup.flaky));
  EXPECT_EQ(files[1], real(setup.good));
  EXPECT_EQ(count_lines_with(log, "[WARNING]: urAdapterGet of " + setup.flaky +
                                      " failed with UR_RESULT_ERROR_DEVICE_LOST; handing out the handle it gave "
                                      "when loaded"),
            1u)
      << log;
}

// When even the retain of the held handle fails, the failing adapter is left out: the
// working one moves up into the first entry, and the count says one.
TEST(AdapterGet, AnAdapterThatCannotBeHandedOutLeavesTheOthersFirst) {
  FailingThenWorking setup;
  EnvVar retain_fails("ORDO_TEST_BROKEN_RETAIN_FAILS", "1");
  testing::internal::CaptureStderr();
  uint32_t written = 0;
  ur_adapter_handle_t both[2] = {nullptr, nullptr};
  ur_adapter_handle_t one = nullptr;
  std::string file_of_both, file_of_one;
  {
    LoaderScope scope;
    ASSERT_EQ(urAdapterGet(2, both, &written), UR_RESULT_SUCCESS);
    if (both[0]) {
      file_of_both = real(library_of(both[0]));
      urAdapterRelease(both[0]);
    }
    ASSERT_EQ(urAdapterGet(1, &one, nullptr), UR_RESULT_SUCCESS);
    if (one) {
      file_of_one = real(library_of(one));
      urAdapterRelease(one);
    }
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(written, 1u) << log;
  ASSERT_NE(both[0], nullptr) << log;
  EXPECT_EQ(file_of_both, real(setup.good));
  EXPECT_EQ(both[1], nullptr); // past the count the call reported
  ASSERT_NE(one, nullptr) << log;
  EXPECT_EQ(file_of_one, real(setup.good));
  EXPECT_EQ(count_lines_with(log, "urAdapterGet of " + setup.flaky +
                                      " failed with UR_RESULT_ERROR_DEVICE_LOST; "
                                      "leaving it out"),
            2u)
      << log;
}
