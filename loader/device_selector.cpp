// SPDX-License-Identifier: Apache-2.0
// urDeviceGetSelected: a platform's devices as ONEAPI_DEVICE_SELECTOR allows them.
//
//   ONEAPI_DEVICE_SELECTOR = term[;term...]
//   term    = [!]backend:filter[,filter...]
//   backend = * | level_zero | opencl | cuda | hip | native_cpu | offload
//   filter  = * | cpu | gpu | fpga | <index> | <sub-device>
//   sub-device = (<index> | *) . (<index> | *) [ . (<index> | *) ]
//
// Terms for other backends are ignored; '!' terms remove devices; when the whole string
// has only '!' terms, everything they do not remove is accepted. An index counts every device of the adapter (all
// types, over its platforms in order). A sub-device filter ("0.1", "*.*") names partitions, which a runtime makes with
// urDevicePartition: it selects no root device here (so
// "*:0.4321" alone selects nothing, successfully). A malformed term makes the call
// fail with UR_RESULT_ERROR_INVALID_VALUE and a log line saying why, rather than
// select something else.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "loader_state.hpp"
#include "ordo/secure_env.hpp"
#include "param_checks.gen.hpp"

namespace ordo {
namespace loader {
namespace {

struct Filter {
  enum Kind { any, type, index } kind = any;
  ur_device_type_t device_type = UR_DEVICE_TYPE_ALL;
  unsigned long device_index = 0;
};

struct Term {
  bool discard = false;
  std::vector<Filter> filters;
};

const struct {
  const char *name;
  ur_backend_t backend;
} kBackends[] = {{"level_zero", UR_BACKEND_LEVEL_ZERO},
                 {"opencl", UR_BACKEND_OPENCL},
                 {"cuda", UR_BACKEND_CUDA},
                 {"hip", UR_BACKEND_HIP},
                 {"native_cpu", UR_BACKEND_NATIVE_CPU},
                 {"offload", UR_BACKEND_OFFLOAD}};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

std::string trim_lower(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

ur_result_t invalid(const std::string &selector, const std::string &why) {
  ORDO_LOG(log(), error, "ONEAPI_DEVICE_SELECTOR=\"%s\": %s", selector.c_str(), why.c_str());
  return UR_RESULT_ERROR_INVALID_VALUE;
}

// "0.1", "0.*", "*.*", "0.1.2": each part an index or '*', a parent before every child.
bool sub_device_filter(const std::string &f) {
  std::vector<std::string> parts = split(f, '.');
  if (parts.size() < 2 || parts.size() > 3 || f.back() == '.') return false;
  bool wild = false;
  for (const std::string &p : parts) {
    if (p == "*") {
      wild = true;
      continue;
    }
    if (p.empty() || wild || p.size() >= 10 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  }
  return true;
}

// Parses the terms that concern `backend`; any malformed term fails the whole string.
// `any_accept` says whether the string has an accepting term for any backend at all.
ur_result_t parse(const std::string &selector, ur_backend_t backend, std::vector<Term> &terms, bool &any_accept) {
  any_accept = false;
  for (std::string raw : split(selector, ';')) {
    std::string text = trim_lower(raw);
    if (text.empty()) continue;
    Term term;
    if (text[0] == '!') {
      term.discard = true;
      text.erase(0, 1);
    }
    auto colon = text.find(':');
    if (colon == std::string::npos) return invalid(selector, "term \"" + text + "\" is not backend:devices");
    std::string name = text.substr(0, colon);
    bool mine = name == "*";
    if (!mine) {
      auto it = std::find_if(std::begin(kBackends), std::end(kBackends), [&](const auto &b) { return name == b.name; });
      if (it == std::end(kBackends))
        return invalid(selector, "unknown backend \"" + name +
                                     "\" (known: level_zero, opencl, cuda, hip, native_cpu, offload, *)");
      mine = it->backend == backend;
    }
    std::string list = text.substr(colon + 1);
    if (list.empty()) return invalid(selector, "term \"" + text + "\" names no devices");
    for (std::string f : split(list, ',')) {
      Filter filter;
      if (f.empty()) return invalid(selector, "empty device in term \"" + text + "\"");
      if (f.find('.') != std::string::npos) {
        if (!sub_device_filter(f))
          return invalid(selector, "\"" + f + "\" is not a sub-device filter (N.M, N.*, *.*, N.M.K)");
        continue; // selects partitions, never a root device
      }
      if (f == "*")
        filter.kind = Filter::any;
      else if (f == "cpu" || f == "gpu" || f == "fpga") {
        filter.kind = Filter::type;
        filter.device_type = f == "cpu" ? UR_DEVICE_TYPE_CPU : f == "gpu" ? UR_DEVICE_TYPE_GPU : UR_DEVICE_TYPE_FPGA;
      } else if (f.find_first_not_of("0123456789") == std::string::npos && f.size() < 10) {
        filter.kind = Filter::index;
        filter.device_index = std::stoul(f);
      } else {
        return invalid(selector, "\"" + f + "\" is not *, cpu, gpu, fpga or a device index");
      }
      term.filters.push_back(filter);
    }
    any_accept |= !term.discard;
    if (mine) terms.push_back(term);
  }
  return UR_RESULT_SUCCESS;
}

struct Candidate {
  ur_device_handle_t device;
  ur_device_type_t type;
  unsigned long index;
};

bool matches(const Term &term, const Candidate &c) {
  for (const Filter &f : term.filters) {
    if (f.kind == Filter::any) return true;
    if (f.kind == Filter::type && f.device_type == c.type) return true;
    if (f.kind == Filter::index && f.device_index == c.index) return true;
  }
  return false;
}

// Devices come from urDeviceGet with a reference each; the ones not handed to the
// caller give theirs back.
void release_devices(const std::vector<ur_device_handle_t> &devices) {
  for (ur_device_handle_t d : devices) urDeviceRelease(d);
}

ur_result_t root_devices(ur_platform_handle_t platform, std::vector<ur_device_handle_t> &out) {
  uint32_t n = 0;
  ur_result_t r = urDeviceGet(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, &n);
  if (r == UR_RESULT_ERROR_DEVICE_NOT_FOUND) return UR_RESULT_SUCCESS; // no devices
  if (r != UR_RESULT_SUCCESS) return r;
  out.resize(n);
  if (n == 0) return UR_RESULT_SUCCESS;
  return urDeviceGet(platform, UR_DEVICE_TYPE_ALL, n, out.data(), nullptr);
}

// Where this platform's devices start in the adapter-wide device numbering.
ur_result_t first_index(ur_platform_handle_t platform, unsigned long &first) {
  first = 0;
  ur_adapter_handle_t adapter = nullptr;
  ur_result_t r = urPlatformGetInfo(platform, UR_PLATFORM_INFO_ADAPTER, sizeof adapter, &adapter, nullptr);
  if (r != UR_RESULT_SUCCESS) return r;
  uint32_t n = 0;
  if ((r = urPlatformGet(adapter, 0, nullptr, &n)) != UR_RESULT_SUCCESS) return r;
  std::vector<ur_platform_handle_t> platforms(n);
  if (n && (r = urPlatformGet(adapter, n, platforms.data(), nullptr)) != UR_RESULT_SUCCESS) return r;
  for (ur_platform_handle_t p : platforms) {
    if (p == platform) break;
    std::vector<ur_device_handle_t> devices;
    if ((r = root_devices(p, devices)) != UR_RESULT_SUCCESS) return r;
    first += devices.size();
    release_devices(devices);
  }
  return UR_RESULT_SUCCESS;
}

} // namespace
} // namespace loader
} // namespace ordo

using namespace ordo::loader;

extern "C" UR_APIEXPORT ur_result_t UR_APICALL urDeviceGetSelected(ur_platform_handle_t hPlatform,
                                                                   ur_device_type_t DeviceType, uint32_t NumEntries,
                                                                   ur_device_handle_t *phDevices,
                                                                   uint32_t *pNumDevices) {
  const char *why = nullptr;
  if (ur_result_t r = check_urDeviceGetSelected(&why, hPlatform, DeviceType, NumEntries, phDevices, pNumDevices))
    return r;
  if (NumEntries > 0 && !phDevices) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (NumEntries == 0 && !pNumDevices) return UR_RESULT_ERROR_INVALID_SIZE;

  ur_backend_t backend = UR_BACKEND_UNKNOWN;
  if (urPlatformGetInfo(hPlatform, UR_PLATFORM_INFO_BACKEND, sizeof backend, &backend, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_PLATFORM;

  std::vector<Term> terms;
  bool any_accept = false; // in the whole string, for any backend
  const char *env = ordo::secure_env("ONEAPI_DEVICE_SELECTOR");
  const bool have_selector = env != nullptr;
  if (have_selector) {
    if (ur_result_t r = parse(env, backend, terms, any_accept)) return r;
  }
  bool any_index = false;
  for (const Term &t : terms)
    for (const Filter &f : t.filters) any_index |= f.kind == Filter::index;

  std::vector<ur_device_handle_t> devices;
  if (ur_result_t r = root_devices(hPlatform, devices)) return r;
  unsigned long first = 0;
  if (any_index) {
    if (ur_result_t r = first_index(hPlatform, first)) {
      release_devices(devices);
      return r;
    }
  }

  std::vector<ur_device_handle_t> selected, dropped;
  for (size_t i = 0; i < devices.size(); ++i) {
    Candidate c{devices[i], UR_DEVICE_TYPE_DEFAULT, first + i};
    if (urDeviceGetInfo(devices[i], UR_DEVICE_INFO_TYPE, sizeof c.type, &c.type, nullptr) != UR_RESULT_SUCCESS)
      c.type = UR_DEVICE_TYPE_DEFAULT;
    bool keep;
    if (DeviceType != UR_DEVICE_TYPE_ALL && DeviceType != UR_DEVICE_TYPE_DEFAULT && DeviceType != c.type)
      keep = false;
    else if (!have_selector)
      keep = true;
    else {
      keep = !any_accept; // only '!' terms anywhere: everything not excluded is accepted
      for (const Term &t : terms)
        if (!t.discard && matches(t, c)) keep = true;
      for (const Term &t : terms)
        if (t.discard && matches(t, c)) keep = false;
    }
    (keep ? selected : dropped).push_back(c.device);
  }

  const size_t handed = phDevices ? std::min<size_t>(NumEntries, selected.size()) : 0;
  std::copy(selected.begin(), selected.begin() + handed, phDevices);
  dropped.insert(dropped.end(), selected.begin() + handed, selected.end());
  release_devices(dropped);
  if (pNumDevices) *pNumDevices = static_cast<uint32_t>(selected.size());
  return UR_RESULT_SUCCESS;
}
