// SPDX-License-Identifier: Apache-2.0
// Adapter discovery: forced loading, the search order, and libraries that cannot be used.
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "helpers.hpp"

using namespace loader_test;

namespace {

std::string real(const std::string &path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

std::vector<std::string> adapter_files() {
  std::vector<std::string> files;
  for (ur_adapter_handle_t a : adapters()) {
    files.push_back(real(library_of(a)));
    urAdapterRelease(a);
  }
  return files;
}

} // namespace

TEST(Discovery, ForceLoadLoadsExactlyTheListedLibraries) {
  std::string dir = temp_dir("force");
  std::string a = copy_to(mock_library(), dir, "libur_adapter_mock_a.so.0");
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", a.c_str());
  LoaderScope scope;
  auto files = adapter_files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], real(a));
}

TEST(Discovery, ForceLoadSkipsEachUnusableLibraryWithOneWarningNamingIt) {
  std::string dir = temp_dir("broken");
  std::string text = dir + "/libur_adapter_text.so.0";
  write_text(text, "this is not a shared library\n");
  std::string missing = dir + "/libur_adapter_missing.so.0";
  std::string good = copy_to(mock_library(), dir, "libur_adapter_good.so.0");
  struct Case {
    std::string path, reason;
  } cases[] = {
      {text, "file too short"},
      {missing, "No such file"},
      {broken_library("nogetters"), "not a UR adapter: it does not export urGetAdapterProcAddrTable"},
      {broken_library("failing_getter"), "urGetQueueProcAddrTable failed with UR_RESULT_ERROR_OUT_OF_RESOURCES"},
      {broken_library("wrong_version"), "does not support UR API version 0.12"},
      {broken_library("adapter_get"), "urAdapterGet failed with UR_RESULT_ERROR_UNSUPPORTED_VERSION"},
  };
  std::string list;
  for (auto &c : cases) list += c.path + ",";
  list += good;
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", list.c_str());

  testing::internal::CaptureStderr();
  std::vector<std::string> files;
  {
    LoaderScope scope;
    files = adapter_files();
  }
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_EQ(files.size(), 1u) << log;
  EXPECT_EQ(files[0], real(good));
  for (auto &c : cases) {
    EXPECT_EQ(count_lines_with(log, "skipping adapter " + c.path), 1u) << c.path << "\n" << log;
    EXPECT_EQ(count_lines_with(log, c.reason), 1u) << c.reason << "\n" << log;
    EXPECT_EQ(count_lines_with(log, "[WARNING]: skipping adapter " + c.path), 1u) << log;
  }
}

// An adapter with no driver behind it (urAdapterGet fails) beside a working one: the
// loader leaves it out, and the working adapter's devices are usable end to end.
TEST(Discovery, AdapterWhoseAdapterGetFailsIsSkippedAndTheOthersWork) {
  std::string dir = temp_dir("failing_get");
  std::string good = copy_to(mock_library(), dir, "libur_adapter_good.so.0");
  std::string list = broken_library("adapter_get") + "," + good;
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", list.c_str());
  testing::internal::CaptureStderr();
  uint32_t count = 0;
  ur_result_t got = UR_RESULT_ERROR_UNKNOWN;
  ur_adapter_handle_t handles[2] = {nullptr, nullptr};
  {
    LoaderScope scope;
    ASSERT_EQ(urAdapterGet(0, nullptr, &count), UR_RESULT_SUCCESS);
    got = urAdapterGet(2, handles, nullptr);
    ur_platform_handle_t platform = nullptr;
    uint32_t n = 0;
    if (handles[0]) {
      EXPECT_EQ(urPlatformGet(handles[0], 1, &platform, &n), UR_RESULT_SUCCESS);
      EXPECT_GE(n, 1u);
      urAdapterRelease(handles[0]);
    }
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count, 1u) << log;
  EXPECT_EQ(got, UR_RESULT_SUCCESS) << log;
  EXPECT_NE(handles[0], nullptr);
  EXPECT_EQ(handles[1], nullptr);
  EXPECT_EQ(count_lines_with(log, "skipping adapter " + broken_library("adapter_get")), 1u) << log;
}

TEST(Discovery, OneLibraryListedTwiceIsLoadedOnce) {
  std::string dir = temp_dir("twice");
  std::string a = copy_to(mock_library(), dir, "libur_adapter_mock_a.so.0");
  std::string both = a + "," + a;
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", both.c_str());
  testing::internal::CaptureStderr();
  size_t n;
  {
    LoaderScope scope;
    n = adapter_files().size();
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(count_lines_with(log, "already loaded"), 1u) << log;
}

TEST(Discovery, MockingLoadsOnlyTheMockAdapter) {
  std::string dir = temp_dir("mocking");
  std::string other = copy_to(mock_library(), dir, "libur_adapter_other.so.0");
  EnvVar force("UR_ADAPTERS_FORCE_LOAD", other.c_str()); // ignored while mocking
  LoaderScope scope(/*mocking=*/true);
  auto files = adapter_files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], real(mock_library()));
}

// The search order, on a private copy of the loader so that its own directory is one
// this test controls: UR_ADAPTERS_SEARCH_PATH, then the loader's directory.
class SearchOrder : public testing::Test {
protected:
  void SetUp() override {
    std::string base = temp_dir("search");
    loader_dir = base + "/loader";
    search_dir = base + "/search";
    std::filesystem::create_directories(loader_dir);
    std::filesystem::create_directories(search_dir);
    std::string copy = copy_to(loader_library(), loader_dir, "libur_loader.so.0");
    lib = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    init = reinterpret_cast<decltype(init)>(dlsym(lib, "urLoaderInit"));
    tear_down = reinterpret_cast<decltype(tear_down)>(dlsym(lib, "urLoaderTearDown"));
    adapter_get = reinterpret_cast<decltype(adapter_get)>(dlsym(lib, "urAdapterGet"));
    adapter_release = reinterpret_cast<decltype(adapter_release)>(dlsym(lib, "urAdapterRelease"));
    ASSERT_TRUE(init && tear_down && adapter_get && adapter_release);
  }
  void TearDown() override {
    if (lib) dlclose(lib);
  }
  // The files of the adapters this loader copy loads.
  std::vector<std::string> load() {
    std::vector<std::string> files;
    EXPECT_EQ(init(0, nullptr), UR_RESULT_SUCCESS);
    uint32_t n = 0;
    EXPECT_EQ(adapter_get(0, nullptr, &n), UR_RESULT_SUCCESS);
    std::vector<ur_adapter_handle_t> list(n);
    if (n) {
      EXPECT_EQ(adapter_get(n, list.data(), nullptr), UR_RESULT_SUCCESS);
    }
    for (auto a : list) {
      files.push_back(real(library_of(a)));
      adapter_release(a);
    }
    EXPECT_EQ(tear_down(), UR_RESULT_SUCCESS);
    return files;
  }
  std::string loader_dir, search_dir;
  void *lib = nullptr;
  ur_result_t (*init)(ur_device_init_flags_t, ur_loader_config_handle_t) = nullptr;
  ur_result_t (*tear_down)() = nullptr;
  ur_result_t (*adapter_get)(uint32_t, ur_adapter_handle_t *, uint32_t *) = nullptr;
  ur_result_t (*adapter_release)(ur_adapter_handle_t) = nullptr;
  EnvVar no_force{"UR_ADAPTERS_FORCE_LOAD", nullptr};
};

TEST_F(SearchOrder, LoaderDirectoryWhenNoSearchPath) {
  EnvVar search("UR_ADAPTERS_SEARCH_PATH", nullptr);
  std::string own = copy_to(mock_library(), loader_dir, "libur_adapter_hip.so.0");
  auto files = load();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], real(own));
}

TEST_F(SearchOrder, SearchPathComesBeforeLoaderDirectory) {
  EnvVar search("UR_ADAPTERS_SEARCH_PATH", ("/nonexistent/dir:" + search_dir).c_str());
  copy_to(mock_library(), loader_dir, "libur_adapter_hip.so.0");
  std::string first = copy_to(mock_library(), search_dir, "libur_adapter_hip.so.0");
  auto files = load();
  ASSERT_EQ(files.size(), 1u); // each name once: the first found wins
  EXPECT_EQ(files[0], real(first));
}

TEST_F(SearchOrder, UnusableFileIsSkippedForTheNextLocation) {
  EnvVar search("UR_ADAPTERS_SEARCH_PATH", search_dir.c_str());
  std::string bad = search_dir + "/libur_adapter_hip.so.0";
  write_text(bad, "not an ELF file, long enough to be read as one and refused as one\n");
  std::string own = copy_to(mock_library(), loader_dir, "libur_adapter_hip.so.0");
  testing::internal::CaptureStderr();
  auto files = load();
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], real(own));
  EXPECT_EQ(count_lines_with(log, "[WARNING]: skipping adapter " + bad), 1u) << log;
}

TEST_F(SearchOrder, EveryNameNotFoundIsLoggedAtInfo) {
  EnvVar search("UR_ADAPTERS_SEARCH_PATH", search_dir.c_str());
  testing::internal::CaptureStderr();
  auto files = load();
  std::string log = testing::internal::GetCapturedStderr();
  // Nothing in either directory; the system search may still find installed adapters.
  for (const char *name : {"native_cpu", "opencl", "cuda", "hip", "level_zero"}) {
    std::string file = std::string("libur_adapter_") + name + ".so.0";
    bool found = false;
    for (auto &f : files) found |= f.find(file) != std::string::npos;
    if (!found) {
      EXPECT_EQ(count_lines_with(log, "[INFO]: adapter " + file + " not found"), 1u) << log;
    }
  }
}
