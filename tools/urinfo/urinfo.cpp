// SPDX-License-Identifier: Apache-2.0
// urinfo: lists the devices the UR loader finds, one line each,
//   [backend:type][backend:N] Platform, Device Version [Driver]
// and with -v every adapter, platform and device query with its value.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "discovery.hpp"
#include "info_tables.hpp"
#include "ur_api.h"

namespace {

const char kUsage[] = "usage: urinfo [-v] [--help]\n"
                      "Lists the devices the Unified Runtime loader finds, one per line:\n"
                      "  [backend:type][backend:N] Platform, Device Version [Driver]\n"
                      "N counts the devices of one backend, as ONEAPI_DEVICE_SELECTOR numbers them.\n"
                      "\n"
                      "  -v, --verbose  also print every adapter, platform and device query and its value\n"
                      "  -h, --help     print this help\n"
                      "\n"
                      "Environment: ONEAPI_DEVICE_SELECTOR picks devices (e.g. native_cpu:*, opencl:0);\n"
                      "UR_ADAPTERS_FORCE_LOAD names adapter libraries to load; UR_LOG_LOADER=level:info\n"
                      "says which adapters were tried and why any was skipped.\n";

// Any *GetInfo entry point, reduced to "fill this buffer for query id".
using InfoGetter = ur_result_t (*)(const void *object, uint32_t id, size_t size, void *value, size_t *size_ret);

void print_queries(const urinfo::InfoTable &table, const void *object, InfoGetter get, const char *indent) {
  for (const urinfo::InfoQuery &q : table) {
    size_t size = 0;
    ur_result_t r = get(object, q.id, 0, nullptr, &size);
    std::string text;
    if (r == UR_RESULT_SUCCESS && size == 0) {
      // An empty answer (no partition types, say): asking again with (0, NULL, NULL)
      // would only earn INVALID_NULL_POINTER, so print it as empty.
      text = urinfo::format_value(q, nullptr, 0);
    } else if (r == UR_RESULT_SUCCESS) {
      std::vector<unsigned char> buf(size);
      r = get(object, q.id, size, buf.data(), nullptr);
      if (r == UR_RESULT_SUCCESS) text = urinfo::format_value(q, buf.data(), size);
    }
    if (r != UR_RESULT_SUCCESS) text = "<" + urinfo::result_name(r) + ">";
    std::printf("%s%-52s %s\n", indent, q.name, text.c_str());
  }
}

ur_result_t adapter_info(const void *o, uint32_t id, size_t size, void *value, size_t *ret) {
  return urAdapterGetInfo(static_cast<ur_adapter_handle_t>(const_cast<void *>(o)), static_cast<ur_adapter_info_t>(id),
                          size, value, ret);
}
ur_result_t platform_info(const void *o, uint32_t id, size_t size, void *value, size_t *ret) {
  return urPlatformGetInfo(static_cast<ur_platform_handle_t>(const_cast<void *>(o)),
                           static_cast<ur_platform_info_t>(id), size, value, ret);
}
ur_result_t device_info(const void *o, uint32_t id, size_t size, void *value, size_t *ret) {
  return urDeviceGetInfo(static_cast<ur_device_handle_t>(const_cast<void *>(o)), static_cast<ur_device_info_t>(id),
                         size, value, ret);
}

void print_device_line(const urinfo::FoundDevice &d) {
  std::printf("[%s:%s][%s:%u] %s, %s %s [%s]\n", d.backend_name.c_str(), d.type_name.c_str(), d.backend_name.c_str(),
              d.backend_index, urinfo::platform_string(d.platform, UR_PLATFORM_INFO_NAME).c_str(), d.name.c_str(),
              urinfo::device_string(d.device, UR_DEVICE_INFO_VERSION).c_str(),
              urinfo::device_string(d.device, UR_DEVICE_INFO_DRIVER_VERSION).c_str());
}

void print_verbose(const urinfo::Discovery &found) {
  const urinfo::InfoTable &adapter_table = urinfo::info_table("ur_adapter_info_t");
  const urinfo::InfoTable &platform_table = urinfo::info_table("ur_platform_info_t");
  const urinfo::InfoTable &device_table = urinfo::info_table("ur_device_info_t");
  for (size_t a = 0; a < found.adapters.size(); ++a) {
    ur_adapter_handle_t adapter = found.adapters[a];
    std::printf("\nAdapter %zu\n", a);
    print_queries(adapter_table, adapter, adapter_info, "  ");
    std::vector<ur_platform_handle_t> seen;
    for (const urinfo::FoundDevice &d : found.devices) {
      if (d.adapter != adapter) continue;
      bool new_platform = true;
      for (ur_platform_handle_t p : seen) new_platform &= p != d.platform;
      if (new_platform) {
        seen.push_back(d.platform);
        std::printf("\n  Platform %s\n", urinfo::platform_string(d.platform, UR_PLATFORM_INFO_NAME).c_str());
        print_queries(platform_table, d.platform, platform_info, "    ");
      }
      std::printf("\n    Device [%s:%u] %s\n", d.backend_name.c_str(), d.backend_index, d.name.c_str());
      print_queries(device_table, d.device, device_info, "      ");
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-v") || !std::strcmp(argv[i], "--verbose")) {
      verbose = true;
    } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "urinfo: unknown option '%s'\n%s", argv[i], kUsage);
      return 2;
    }
  }

  // Adapters print why they find nothing while they load; keep that for the summary.
  urinfo::StderrCapture capture;
  capture.start();
  ur_result_t r = urLoaderInit(0, nullptr);
  if (r != UR_RESULT_SUCCESS) {
    capture.stop();
    std::fprintf(stderr, "urinfo: urLoaderInit failed with %s\n", urinfo::result_name(r).c_str());
    return 1;
  }
  urinfo::Discovery found = urinfo::discover();
  found.log_lines = capture.stop();
  for (const urinfo::FoundDevice &d : found.devices) print_device_line(d);
  if (found.devices.empty()) std::fprintf(stderr, "urinfo: no devices found: %s\n", found.why_no_devices().c_str());
  if (verbose) print_verbose(found);
  urinfo::release(found);
  urLoaderTearDown();
  return 0;
}
