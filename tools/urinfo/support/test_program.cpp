// SPDX-License-Identifier: Apache-2.0
// Choosing, reading and building the test-kernel program for a device.
#include "test_program.hpp"

#include <fstream>
#include <iterator>
#include <vector>

#include "info_tables.hpp"

namespace urinfo {

namespace {

bool read_file(const std::string &path, std::vector<uint8_t> &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !out.empty();
}

bool exists(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return static_cast<bool>(in);
}

std::string build_log_of(ur_program_handle_t program, ur_device_handle_t device) {
  size_t size = 0;
  if (urProgramGetBuildInfo(program, device, UR_PROGRAM_BUILD_INFO_LOG, 0, nullptr, &size) != UR_RESULT_SUCCESS ||
      size == 0)
    return "";
  std::string log(size, '\0');
  if (urProgramGetBuildInfo(program, device, UR_PROGRAM_BUILD_INFO_LOG, size, &log[0], nullptr) != UR_RESULT_SUCCESS)
    return "";
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  return log;
}

} // namespace

std::string TestProgram::problem() const {
  if (!skip_reason.empty()) return skip_reason;
  if (program) return "";
  std::string s = how + " / urProgramBuild of " + path + " failed with " + result_name(result);
  if (!build_log.empty()) s += "; build log: " + build_log;
  return s;
}

bool test_program_file(const std::string &kernel_dir, const FoundDevice &device, std::string &path, bool &as_il,
                       std::string &why_not) {
  const std::string base = kernel_dir + "/" + device.backend_name + "/ordo_test_kernels";
  as_il = false;
  switch (device.backend) {
  case UR_BACKEND_NATIVE_CPU: path = base + ".so"; break;
  case UR_BACKEND_CUDA: path = base + ".ptx"; break;
  case UR_BACKEND_HIP: {
    // PTX on HIP's NVIDIA platform; an AMD GPU takes a code object (docs/hip.md).
    uint32_t vendor = 0;
    urDeviceGetInfo(device.device, UR_DEVICE_INFO_VENDOR_ID, sizeof(vendor), &vendor, nullptr);
    path = base + (vendor == 0x10de ? ".ptx" : ".hsaco");
    break;
  }
  case UR_BACKEND_LEVEL_ZERO:
    // SPIR-V where the device takes IL; otherwise the native binary (on the CPU test
    // driver, a native-CPU kernel program: docs/level-zero.md).
    as_il = !device_string(device.device, UR_DEVICE_INFO_IL_VERSION).empty();
    path = base + (as_il ? ".spv" : ".native");
    break;
  case UR_BACKEND_OPENCL:
    // SPIR-V only where the device says it takes IL; PoCL, for one, takes SPIR bitcode.
    as_il = !device_string(device.device, UR_DEVICE_INFO_IL_VERSION).empty();
    path = base + (as_il ? ".spv" : ".bc");
    break;
  default: why_not = "no test-kernel variant for backend " + device.backend_name + " yet"; return false;
  }
  if (!exists(path)) {
    why_not = "test kernels for " + device.backend_name + " not built: " + path + " is missing";
    return false;
  }
  return true;
}

TestProgram load_test_program(const std::string &kernel_dir, ur_context_handle_t context, const FoundDevice &device,
                              bool build) {
  return load_test_program(kernel_dir, context, device, {device.device}, build);
}

TestProgram load_test_program(const std::string &kernel_dir, ur_context_handle_t context, const FoundDevice &device,
                              const std::vector<ur_device_handle_t> &devices, bool build) {
  TestProgram out;
  bool as_il = false;
  if (!test_program_file(kernel_dir, device, out.path, as_il, out.skip_reason)) return out;
  std::vector<uint8_t> bytes;
  if (!read_file(out.path, bytes)) {
    out.skip_reason = "cannot read " + out.path;
    return out;
  }
  ur_program_handle_t program = nullptr;
  if (as_il) {
    out.how = "urProgramCreateWithIL";
    out.result = urProgramCreateWithIL(context, bytes.data(), bytes.size(), nullptr, &program);
  } else {
    out.how = "urProgramCreateWithBinary";
    std::vector<ur_device_handle_t> devs(devices);
    std::vector<size_t> lengths(devices.size(), bytes.size());
    std::vector<const uint8_t *> data(devices.size(), bytes.data());
    out.result = urProgramCreateWithBinary(context, static_cast<uint32_t>(devs.size()), devs.data(), lengths.data(),
                                           data.data(), nullptr, &program);
  }
  if (out.result != UR_RESULT_SUCCESS) return out;
  if (build) {
    out.result = urProgramBuild(context, program, nullptr);
    if (out.result != UR_RESULT_SUCCESS) {
      out.build_log = build_log_of(program, device.device);
      urProgramRelease(program);
      return out;
    }
  }
  out.program = program;
  return out;
}

} // namespace urinfo
