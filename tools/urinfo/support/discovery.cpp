// SPDX-License-Identifier: Apache-2.0
// Device discovery through the loader, collecting the reasons when nothing turns up.
#include "discovery.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>

#include "info_tables.hpp"

namespace urinfo {

namespace {

std::string lower_after(const std::string &name, const std::string &prefix) {
  std::string s = name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Adapter log messages seen while asking for platforms: the likeliest place for
// "no driver" and similar reasons. Info is enough: a backend that is not installed says
// so at info (docs/loader.md, "Logging"), unless it said it while the loader loaded it.
struct LogSink {
  std::mutex mutex;
  std::vector<std::string> lines;
};

void collect_log(ur_logger_level_t level, const char *msg, void *user) {
  if (!msg || level < UR_LOGGER_LEVEL_INFO) return;
  auto *sink = static_cast<LogSink *>(user);
  std::lock_guard<std::mutex> lock(sink->mutex);
  std::string line(msg);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (sink->lines.size() < 8) sink->lines.push_back(line);
}

LogSink &new_sink() {
  static std::mutex mutex;
  static std::deque<LogSink> sinks;
  std::lock_guard<std::mutex> lock(mutex);
  return sinks.emplace_back();
}

std::string adapter_backend(ur_adapter_handle_t adapter) {
  ur_backend_t backend = UR_BACKEND_UNKNOWN;
  if (urAdapterGetInfo(adapter, UR_ADAPTER_INFO_BACKEND, sizeof backend, &backend, nullptr) != UR_RESULT_SUCCESS)
    return "unknown";
  return backend_name(backend);
}

std::string last_adapter_error(ur_adapter_handle_t adapter) {
  const char *message = nullptr;
  int32_t error = 0;
  if (urAdapterGetLastError(adapter, &message, &error) == UR_RESULT_SUCCESS && message && *message)
    return std::string(message) + " (native error " + std::to_string(error) + ")";
  return "";
}

void add_devices_of(ur_adapter_handle_t adapter, Discovery &found, std::map<std::string, uint32_t> &per_backend) {
  const std::string backend = adapter_backend(adapter);
  // The adapter keeps the callback's user data, so the sink must outlive this call.
  LogSink &sink = new_sink();
  // Not every adapter takes a callback; a failure here only loses the reasons.
  bool logging = urAdapterSetLoggerCallback(adapter, collect_log, &sink, UR_LOGGER_LEVEL_INFO) == UR_RESULT_SUCCESS;
  auto with_log = [&](std::string note) {
    if (note.empty()) return note;
    std::lock_guard<std::mutex> lock(sink.mutex);
    for (const std::string &l : sink.lines) note += "; adapter log: " + l;
    return note;
  };

  uint32_t num_platforms = 0;
  ur_result_t r = urPlatformGet(adapter, 0, nullptr, &num_platforms);
  std::vector<ur_platform_handle_t> platforms(num_platforms);
  if (r == UR_RESULT_SUCCESS && num_platforms) r = urPlatformGet(adapter, num_platforms, platforms.data(), nullptr);
  std::string note;
  if (r != UR_RESULT_SUCCESS) {
    note = "adapter " + backend + ": urPlatformGet failed with " + result_name(r);
    if (r == UR_RESULT_ERROR_ADAPTER_SPECIFIC) note += ": " + last_adapter_error(adapter);
  } else if (num_platforms == 0) {
    note = "adapter " + backend + ": no platform";
  }

  uint32_t devices_here = 0;
  for (ur_platform_handle_t platform : platforms) {
    uint32_t all = 0, selected = 0;
    urDeviceGet(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, &all);
    ur_result_t rs = urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, 0, nullptr, &selected);
    std::vector<ur_device_handle_t> devices(selected);
    if (rs == UR_RESULT_SUCCESS && selected)
      rs = urDeviceGetSelected(platform, UR_DEVICE_TYPE_ALL, selected, devices.data(), nullptr);
    const std::string pname = platform_string(platform, UR_PLATFORM_INFO_NAME);
    if (rs != UR_RESULT_SUCCESS) {
      note = "adapter " + backend + ", platform '" + pname + "': urDeviceGetSelected failed with " + result_name(rs);
      continue;
    }
    if (selected == 0) {
      const char *selector = std::getenv("ONEAPI_DEVICE_SELECTOR");
      note = "adapter " + backend + ", platform '" + pname + "': " +
             (all ? std::to_string(all) +
                        " device(s), none selected by ONEAPI_DEVICE_SELECTOR=" + (selector ? selector : "")
                  : std::string("no device"));
    }
    for (ur_device_handle_t device : devices) {
      FoundDevice d;
      d.adapter = adapter;
      d.platform = platform;
      d.device = device;
      urPlatformGetInfo(platform, UR_PLATFORM_INFO_BACKEND, sizeof d.backend, &d.backend, nullptr);
      d.backend_name = backend_name(d.backend);
      ur_device_type_t type = UR_DEVICE_TYPE_DEFAULT;
      device_value(device, UR_DEVICE_INFO_TYPE, type);
      d.type_name = device_type_name(type);
      d.name = device_string(device, UR_DEVICE_INFO_NAME);
      d.backend_index = per_backend[d.backend_name]++;
      found.devices.push_back(d);
      ++devices_here;
    }
  }
  if (logging) urAdapterSetLoggerCallbackLevel(adapter, UR_LOGGER_LEVEL_QUIET);
  if (devices_here == 0)
    found.notes.push_back(with_log(note.empty() ? "adapter " + backend + ": no device" : note));
  else
    found.notes.push_back("adapter " + backend + ": " + std::to_string(devices_here) + " device(s)");
}

} // namespace

std::string Discovery::why_no_devices() const {
  std::string log;
  for (const std::string &l : log_lines) log += "; log: " + l;
  if (notes.empty()) {
    const char *forced = std::getenv("UR_ADAPTERS_FORCE_LOAD");
    return std::string("the loader found no adapter") +
           (forced ? std::string(" (UR_ADAPTERS_FORCE_LOAD=") + forced + ")" : "") +
           "; UR_LOG_LOADER=level:info shows why" + log;
  }
  std::string s;
  for (const std::string &n : notes) s += (s.empty() ? "" : "; ") + n;
  // Backends that are not installed say so only on the loader's log.
  if (log.empty() && s.find("adapter log:") == std::string::npos) s += "; UR_LOG_LOADER=level:info shows why";
  return s + log;
}

void StderrCapture::start() {
  // A sanitizer report printed while stderr is set aside would die with the process
  // unseen; in those builds the report matters more than the reasons.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#endif
  if (file_) return;
  std::fflush(stderr);
  FILE *f = std::tmpfile();
  if (!f) return;
  saved_fd_ = dup(STDERR_FILENO);
  if (saved_fd_ < 0 || dup2(fileno(f), STDERR_FILENO) < 0) {
    if (saved_fd_ >= 0) close(saved_fd_);
    saved_fd_ = -1;
    std::fclose(f);
    return;
  }
  file_ = f;
}

std::vector<std::string> StderrCapture::stop() {
  std::vector<std::string> kept;
  if (!file_) return kept;
  FILE *f = static_cast<FILE *>(file_);
  std::fflush(stderr);
  dup2(saved_fd_, STDERR_FILENO);
  close(saved_fd_);
  saved_fd_ = -1;
  file_ = nullptr;
  std::rewind(f);
  char line[1024];
  while (std::fgets(line, sizeof line, f)) {
    std::fputs(line, stderr); // the user still sees everything, in order
    std::string l(line);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    if ((l.find("WARN") != std::string::npos || l.find("ERROR") != std::string::npos) && kept.size() < 8)
      kept.push_back(l);
  }
  std::fclose(f);
  return kept;
}

Discovery discover() {
  Discovery found;
  uint32_t count = 0;
  ur_result_t r = urAdapterGet(0, nullptr, &count);
  if (r != UR_RESULT_SUCCESS) {
    found.notes.push_back("urAdapterGet failed with " + result_name(r));
    return found;
  }
  found.adapters.resize(count);
  if (count && urAdapterGet(count, found.adapters.data(), nullptr) != UR_RESULT_SUCCESS) {
    found.notes.push_back("urAdapterGet failed on the second call");
    found.adapters.clear();
  }
  std::map<std::string, uint32_t> per_backend;
  for (ur_adapter_handle_t adapter : found.adapters) add_devices_of(adapter, found, per_backend);
  return found;
}

void release(Discovery &found) {
  for (FoundDevice &d : found.devices) urDeviceRelease(d.device);
  for (ur_adapter_handle_t a : found.adapters) urAdapterRelease(a);
  found.devices.clear();
  found.adapters.clear();
}

std::string backend_name(ur_backend_t backend) {
  return lower_after(enumerator_name("ur_backend_t", backend), "UR_BACKEND_");
}

std::string device_type_name(ur_device_type_t type) {
  return lower_after(enumerator_name("ur_device_type_t", type), "UR_DEVICE_TYPE_");
}

std::string device_string(ur_device_handle_t device, ur_device_info_t query) {
  size_t size = 0;
  if (urDeviceGetInfo(device, query, 0, nullptr, &size) != UR_RESULT_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (urDeviceGetInfo(device, query, size, &s[0], nullptr) != UR_RESULT_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

std::string platform_string(ur_platform_handle_t platform, ur_platform_info_t query) {
  size_t size = 0;
  if (urPlatformGetInfo(platform, query, 0, nullptr, &size) != UR_RESULT_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (urPlatformGetInfo(platform, query, size, &s[0], nullptr) != UR_RESULT_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

} // namespace urinfo
