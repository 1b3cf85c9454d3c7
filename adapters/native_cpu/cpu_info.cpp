// SPDX-License-Identifier: Apache-2.0
#include "cpu_info.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool has_flag(const std::string &flags, const char *flag) {
  std::istringstream in(flags);
  std::string f;
  while (in >> f)
    if (f == flag) return true;
  return false;
}

uint64_t sysconf_or(int name, uint64_t fallback) {
  long v = sysconf(name);
  return v > 0 ? static_cast<uint64_t>(v) : fallback;
}

CpuInfo read_cpu_info() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  unsigned family = 0, model = 0, stepping = 0;
  double mhz = 0;
  // The first processor block describes them all.
  while (std::getline(in, line)) {
    if (line.empty()) break;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), val = trim(line.substr(colon + 1));
    if (key == "model name")
      info.model_name = val;
    else if (key == "vendor_id")
      info.vendor_id = val;
    else if (key == "cpu family")
      family = static_cast<unsigned>(std::strtoul(val.c_str(), nullptr, 10));
    else if (key == "model")
      model = static_cast<unsigned>(std::strtoul(val.c_str(), nullptr, 10));
    else if (key == "stepping")
      stepping = static_cast<unsigned>(std::strtoul(val.c_str(), nullptr, 10));
    else if (key == "cpu MHz")
      mhz = std::strtod(val.c_str(), nullptr);
    else if (key == "flags")
      flags = val;
  }
  if (info.model_name.empty()) info.model_name = "Host CPU";
  if (info.vendor_id == "GenuineIntel") {
    info.vendor_name = "Intel(R) Corporation";
    info.pci_vendor_id = 0x8086;
  } else if (info.vendor_id == "AuthenticAMD") {
    info.vendor_name = "Advanced Micro Devices, Inc.";
    info.pci_vendor_id = 0x1022;
  } else {
    info.vendor_name = info.vendor_id.empty() ? "Unknown" : info.vendor_id;
  }
  info.device_id = (family & 0xffffu) << 16 | (model & 0xffu) << 8 | (stepping & 0xffu);

  std::ifstream fmax("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  uint64_t khz = 0;
  if (fmax >> khz && khz > 0)
    info.max_clock_mhz = static_cast<uint32_t>(khz / 1000);
  else
    info.max_clock_mhz = static_cast<uint32_t>(mhz + 0.5);

  if (has_flag(flags, "avx512f"))
    info.vector_bits = 512;
  else if (has_flag(flags, "avx2"))
    info.vector_bits = 256;
  info.has_fma = has_flag(flags, "fma");

  info.hardware_threads = hardware_threads();
  info.cacheline = static_cast<uint32_t>(sysconf_or(_SC_LEVEL1_DCACHE_LINESIZE, 64));
  info.l1d_size = sysconf_or(_SC_LEVEL1_DCACHE_SIZE, 0);
  info.l2_size = sysconf_or(_SC_LEVEL2_CACHE_SIZE, 0);
  info.l3_size = sysconf_or(_SC_LEVEL3_CACHE_SIZE, 0);
  info.memory_size = sysconf_or(_SC_PHYS_PAGES, 0) * sysconf_or(_SC_PAGESIZE, 4096);
  return info;
}

} // namespace

const CpuInfo &cpu_info() {
  static const CpuInfo *info = new CpuInfo(read_cpu_info());
  return *info;
}

uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return sysconf_or(_SC_AVPHYS_PAGES, 0) * sysconf_or(_SC_PAGESIZE, 4096);
}

} // namespace ordo::native_cpu
