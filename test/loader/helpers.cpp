// SPDX-License-Identifier: Apache-2.0
#include "helpers.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace loader_test {

EnvVar::EnvVar(const char *name, const char *value) : name_(name) {
  if (const char *old = std::getenv(name)) {
    had_ = true;
    old_ = old;
  }
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

EnvVar::~EnvVar() {
  if (had_)
    setenv(name_.c_str(), old_.c_str(), 1);
  else
    unsetenv(name_.c_str());
}

namespace {
struct TempRoot {
  std::string path;
  TempRoot() {
    std::string tmpl = (fs::temp_directory_path() / "ordo-loader-test-XXXXXX").string();
    path = mkdtemp(&tmpl[0]) ? tmpl : std::string();
  }
  ~TempRoot() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};
TempRoot &temp_root() {
  static TempRoot root;
  return root;
}
} // namespace

std::string temp_dir(const std::string &tag) {
  static int counter = 0;
  fs::path dir = fs::path(temp_root().path) / (tag + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  return dir.string();
}

std::string copy_to(const std::string &from, const std::string &dir, const std::string &name) {
  fs::path to = fs::path(dir) / name;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  return to.string();
}

void write_text(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

size_t count_lines_with(const std::string &text, const std::string &needle) {
  size_t n = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.substr(pos, end - pos).find(needle) != std::string::npos) ++n;
    pos = end + 1;
  }
  return n;
}

namespace {
bool glob(const char *t, const char *p) {
  if (*p == '\0') return *t == '\0';
  if (*p == '*') return glob(t, p + 1) || (*t && glob(t + 1, p));
  return *t == *p && glob(t + 1, p + 1);
}
} // namespace

bool any_line_matches(const std::string &text, const std::string &pattern) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (glob(text.substr(pos, end - pos).c_str(), pattern.c_str())) return true;
    pos = end + 1;
  }
  return false;
}

std::string mock_library() { return ORDO_TEST_MOCK_ADAPTER; }
std::string loader_library() { return ORDO_TEST_LOADER; }
std::string broken_library(const std::string &kind) {
  return std::string(ORDO_TEST_BROKEN_DIR) + "/" + kind + "/libur_adapter_opencl.so.0";
}

std::string library_of(const void *handle) {
  Dl_info info;
  const void *table = *static_cast<const void *const *>(handle);
  if (!dladdr(table, &info) || !info.dli_fname) return "";
  return info.dli_fname;
}

LoaderScope::LoaderScope(bool mocking, const std::vector<std::string> &layers) {
  ur_loader_config_handle_t config = nullptr;
  EXPECT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  if (mocking) {
    EXPECT_EQ(urLoaderConfigSetMockingEnabled(config, true), UR_RESULT_SUCCESS);
  }
  for (const std::string &l : layers) EXPECT_EQ(urLoaderConfigEnableLayer(config, l.c_str()), UR_RESULT_SUCCESS);
  init_ = urLoaderInit(0, config);
  EXPECT_EQ(init_, UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
}

LoaderScope::~LoaderScope() { EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS); }

std::vector<ur_adapter_handle_t> adapters() {
  uint32_t n = 0;
  EXPECT_EQ(urAdapterGet(0, nullptr, &n), UR_RESULT_SUCCESS);
  std::vector<ur_adapter_handle_t> out(n);
  if (n) {
    EXPECT_EQ(urAdapterGet(n, out.data(), nullptr), UR_RESULT_SUCCESS);
  }
  return out;
}

void MockObjects::create(ur_adapter_handle_t a) {
  adapter = a;
  ASSERT_EQ(urPlatformGet(a, 1, &platform, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urDeviceGet(platform, UR_DEVICE_TYPE_ALL, 1, &device, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urContextCreate(1, &device, nullptr, &context), UR_RESULT_SUCCESS);
  ASSERT_EQ(urQueueCreate(context, device, nullptr, &queue), UR_RESULT_SUCCESS);
}

void MockObjects::release() {
  if (queue) {
    EXPECT_EQ(urQueueRelease(queue), UR_RESULT_SUCCESS);
  }
  if (context) {
    EXPECT_EQ(urContextRelease(context), UR_RESULT_SUCCESS);
  }
  if (device) {
    EXPECT_EQ(urDeviceRelease(device), UR_RESULT_SUCCESS);
  }
  queue = nullptr;
  context = nullptr;
  device = nullptr;
}

} // namespace loader_test
