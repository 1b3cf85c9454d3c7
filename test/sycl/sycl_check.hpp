// SPDX-License-Identifier: Apache-2.0
// Shared by Ordo's host-only SYCL programs (test/sycl/*.cpp): picking the device under
// test, and checks that print one line each:
//   [ok]   <name>
//   [FAIL] <name> -- <what was wrong>
//   [info] <name> = <value>
//   [skip] <name> -- <why>
// run.sh lines up the <name>s of two runs (Ordo's adapters, the runtime's own) side by side.
// A program exits 0 when every check passed, 1 when one failed, 77 when it has no device.
#pragma once

#include <sycl/sycl.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace ordo_sycl {

inline std::string one_line(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

class Checker {
public:
  explicit Checker(const char *program) : program_(program) {}

  bool check(bool cond, const std::string &name, const std::string &detail = "") {
    if (cond) {
      ++passed_;
      std::printf("[ok]   %s\n", name.c_str());
    } else {
      ++failed_;
      std::printf("[FAIL] %s%s%s\n", name.c_str(), detail.empty() ? "" : " -- ", one_line(detail).c_str());
    }
    std::fflush(stdout);
    return cond;
  }
  bool fail(const std::string &name, const std::string &detail) { return check(false, name, detail); }

  template <class T> void info(const std::string &name, const T &value) {
    std::ostringstream os;
    os << value;
    std::printf("[info] %s = %s\n", name.c_str(), one_line(os.str()).c_str());
    std::fflush(stdout);
  }
  void skip(const std::string &name, const std::string &why) {
    std::printf("[skip] %s -- %s\n", name.c_str(), one_line(why).c_str());
    std::fflush(stdout);
  }

  // Runs one group of checks; an exception that escapes it fails the group with the
  // exception's message, and the program goes on with the next group.
  template <class F> void section(const std::string &name, F &&body) {
    try {
      body();
    } catch (const sycl::exception &e) {
      fail(name, std::string("sycl::exception: ") + e.what() + " (" + e.code().message() + ")");
    } catch (const std::exception &e) {
      fail(name, std::string("exception: ") + e.what());
    }
  }

  // Expects `body` to throw a sycl::exception; returns its message ("" when none).
  template <class F> std::string expect_throw(const std::string &name, F &&body) {
    try {
      body();
    } catch (const sycl::exception &e) {
      check(true, name);
      info(name + ".message", e.what());
      return e.what();
    }
    fail(name, "no exception");
    return "";
  }

  int finish() {
    std::printf("== %s: %d checks passed, %d failed\n", program_, passed_, failed_);
    return failed_ ? 1 : 0;
  }

private:
  const char *program_;
  int passed_ = 0;
  int failed_ = 0;
};

// Whether the runtime makes queue::fill / handler::fill of USM a kernel on this device:
// on Level Zero its headers submit a parallel_for of __usmfill<T> instead of a UR fill,
// and a program built with the host compiler alone has no device image for it (the
// runtime crashes before calling UR; docs/sycl.md, "Level Zero"). Such checks skip there.
inline bool usm_fill_is_a_kernel(const sycl::device &d) {
  return d.get_backend() == sycl::backend::ext_oneapi_level_zero;
}
inline const char *const kUsmFillKernelWhy =
    "on Level Zero the runtime turns a USM fill into a __usmfill kernel, which needs a device image this "
    "host-compiled program does not have (docs/sycl.md)";

inline std::string env_or(const char *name, const char *fallback) {
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline std::string backend_name(sycl::backend b) {
  std::ostringstream os;
  os << b;
  return os.str();
}

// The device under test: the first device whose platform name contains
// $ORDO_SYCL_PLATFORM (any when unset), among those ONEAPI_DEVICE_SELECTOR lets the
// runtime see. Every device seen is printed. Exits 77 when there is none.
inline sycl::device pick_device(Checker &c) {
  const std::string want = env_or("ORDO_SYCL_PLATFORM", "");
  std::vector<sycl::device> seen = sycl::device::get_devices();
  c.info("devices.count", seen.size());
  const sycl::device *chosen = nullptr;
  for (const sycl::device &d : seen) {
    const std::string plat = d.get_platform().get_info<sycl::info::platform::name>();
    std::printf("[info] devices.seen = %s | %s | %s\n", backend_name(d.get_backend()).c_str(), plat.c_str(),
                d.get_info<sycl::info::device::name>().c_str());
    if (!chosen && plat.find(want) != std::string::npos) chosen = &d;
  }
  if (!chosen) {
    c.skip("device", "no device on a platform named like '" + want + "'");
    std::printf("== no device\n");
    std::exit(77);
  }
  c.info("device.platform", chosen->get_platform().get_info<sycl::info::platform::name>());
  c.info("device.backend", backend_name(chosen->get_backend()));
  c.info("device.name", chosen->get_info<sycl::info::device::name>());
  return *chosen;
}

template <class T> std::string first_mismatch(const std::vector<T> &got, const std::vector<T> &want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i])) {
      std::ostringstream os;
      os << "element " << i << " is " << +got[i] << ", expected " << +want[i];
      return os.str();
    }
  return "";
}

} // namespace ordo_sycl
