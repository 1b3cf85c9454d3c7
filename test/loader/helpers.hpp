// SPDX-License-Identifier: Apache-2.0
// Shared by the loader tests: environment guards, copies of the mock adapter under other
// names, and a scope that initialises the loader and tears it down.
#pragma once
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "ordo_mock.h"
#include "ur_api.h"

namespace loader_test {

// Sets (or with nullptr unsets) an environment variable for one scope.
class EnvVar {
public:
  EnvVar(const char *name, const char *value);
  ~EnvVar();
  EnvVar(const EnvVar &) = delete;
  EnvVar &operator=(const EnvVar &) = delete;

private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

// A fresh directory under the test's temporary root, removed at exit.
std::string temp_dir(const std::string &tag);
// Copies `from` to `dir`/`name` (a distinct file, so dlopen loads it as its own library).
std::string copy_to(const std::string &from, const std::string &dir, const std::string &name);
void write_text(const std::string &path, const std::string &text);

// How many lines of `text` contain `needle`.
size_t count_lines_with(const std::string &text, const std::string &needle);

// Whether some line of `text` matches `pattern`, where '*' stands for any run of
// characters (std::regex trips a GCC 12 warning in sanitizer builds).
bool any_line_matches(const std::string &text, const std::string &pattern);

// Built files (paths from CMake).
std::string mock_library();
std::string loader_library();
std::string broken_library(const std::string &kind); // nogetters, failing_getter, wrong_version

// The file of the library whose dispatch table a handle points at.
std::string library_of(const void *handle);

// Initialises the loader (optionally with mocking or layers) for one scope.
class LoaderScope {
public:
  explicit LoaderScope(bool mocking = false, const std::vector<std::string> &layers = {});
  ~LoaderScope();
  ur_result_t init_result() const { return init_; }

private:
  ur_result_t init_ = UR_RESULT_SUCCESS;
};

// All adapters, and the first platform / device / context / queue of one adapter.
std::vector<ur_adapter_handle_t> adapters();
struct MockObjects {
  ur_adapter_handle_t adapter = nullptr;
  ur_platform_handle_t platform = nullptr;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
  void create(ur_adapter_handle_t a); // asserts each step
  void release();
};

} // namespace loader_test
