// SPDX-License-Identifier: Apache-2.0
// Facts about the host CPU, read once from /proc/cpuinfo, sysfs and sysconf.
#pragma once
#include <cstdint>
#include <string>

namespace ordo::native_cpu {

struct CpuInfo {
  std::string model_name;  // "model name"
  std::string vendor_id;   // "vendor_id", e.g. GenuineIntel
  std::string vendor_name; // a readable vendor, e.g. "Intel(R) Corporation"
  uint32_t pci_vendor_id = 0;
  uint32_t device_id = 0;     // family << 16 | model << 8 | stepping
  uint32_t max_clock_mhz = 0; // cpufreq maximum, else "cpu MHz"
  uint32_t hardware_threads = 1;
  uint32_t cacheline = 64;
  uint64_t l1d_size = 0, l2_size = 0, l3_size = 0;
  uint64_t memory_size = 0;   // physical memory, bytes
  uint32_t vector_bits = 128; // widest SIMD register the kernels may use: 128, 256 or 512
  bool has_fma = false;
};

const CpuInfo &cpu_info();

// Memory the system could give us now (MemAvailable), bytes.
uint64_t available_memory();

} // namespace ordo::native_cpu
