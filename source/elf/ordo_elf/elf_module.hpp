// SPDX-License-Identifier: Apache-2.0
// One native CPU program binary loaded into the process: an ELF shared object written
// to a memfd and opened with dlopen("/proc/self/fd/N"). Its kernel table follows
// include/ur_native_cpu_kernel.h. Library ordo_elf: the native CPU adapter's programs and
// the CPU Level Zero test driver's modules (test/ze_cpu_driver) read binaries alike.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#define ORDO_NC_TYPES_ONLY
#include "ur_api.h"
#include "ur_native_cpu_kernel.h"

namespace ordo::native_cpu {

class ElfModule {
public:
  // Loads a copy of `data`. On failure returns null, with the error to return and
  // a message for the log: UR_RESULT_ERROR_INVALID_NATIVE_BINARY for bytes that are
  // no native CPU program, UR_RESULT_ERROR_INVALID_BINARY for a program built for
  // another version of the kernel ABI.
  static std::shared_ptr<ElfModule> load(const uint8_t *data, size_t size, ur_result_t *error, std::string *message);
  ~ElfModule();
  ElfModule(const ElfModule &) = delete;
  ElfModule &operator=(const ElfModule &) = delete;

  const std::vector<uint8_t> &binary() const { return binary_; }
  const std::vector<const ordo_nc_kernel_desc *> &kernels() const { return kernels_; }
  const ordo_nc_kernel_desc *find_kernel(const char *name) const;
  // An exported symbol's address and, when the ELF records one, its size.
  void *symbol(const char *name, size_t *size) const;

private:
  ElfModule() = default;
  // True when the binary exports ORDO_NC_ABI_VERSION_SYMBOL as a uint32_t equal to
  // ORDO_NC_ABI_VERSION; otherwise false with the reason. Calls nothing in the binary.
  bool check_abi_version(std::string *message) const;

  std::vector<uint8_t> binary_;
  void *handle_ = nullptr;
  int fd_ = -1; // kept open while loaded so that no other module can get the same /proc path
  std::vector<const ordo_nc_kernel_desc *> kernels_;
};

} // namespace ordo::native_cpu
