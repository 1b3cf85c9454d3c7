// SPDX-License-Identifier: Apache-2.0
// The objects a batch works on (contexts, queues, USM, buffers, events, a kernel), made
// with valid calls so that the bad ones meet real state; and the judging of one call.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "bad_input.hpp"
#include "info_tables.hpp"
#include "test_program.hpp"

namespace bad_input {

size_t code_slot(ur_result_t r) {
  uint32_t v = static_cast<uint32_t>(r);
  if (v < 128) return v;
  if (v >= 0x1000 && v <= 0x1003) return 128 + (v - 0x1000);
  if (r == UR_RESULT_ERROR_UNKNOWN) return 132;
  return 133;
}

ur_result_t slot_code(size_t slot) {
  if (slot < 128) return static_cast<ur_result_t>(slot);
  if (slot < 132) return static_cast<ur_result_t>(0x1000 + (slot - 128));
  if (slot == 132) return UR_RESULT_ERROR_UNKNOWN;
  return UR_RESULT_FORCE_UINT32;
}

std::string result_text(ur_result_t r) {
  std::string n = urinfo::result_name(r);
  const char prefix[] = "UR_RESULT_";
  return n.rfind(prefix, 0) == 0 ? n.substr(sizeof(prefix) - 1) : n;
}

std::string hex(const void *p) {
  if (!p) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

std::string size_text(uint64_t v) {
  char b[48];
  if (v == SIZE_MAX) return "SIZE_MAX";
  if (v >= SIZE_MAX - 4096) {
    std::snprintf(b, sizeof b, "SIZE_MAX-%" PRIu64, static_cast<uint64_t>(SIZE_MAX - v));
  } else if (v >= (uint64_t{1} << 63)) {
    std::snprintf(b, sizeof b, "2^63+%" PRIu64, v - (uint64_t{1} << 63));
  } else if (v >= (uint64_t{1} << 32) && v - (uint64_t{1} << 32) < 65536) {
    std::snprintf(b, sizeof b, "2^32+%" PRIu64, v - (uint64_t{1} << 32));
  } else {
    std::snprintf(b, sizeof b, "%" PRIu64, v);
  }
  return b;
}

// ---- Call ----

void Call::begin(const char *function) {
  function_ = function;
  desc_ = std::string(function) + "(";
  why_.clear();
  allowed_.clear();
  extra_.clear();
  invalid_ = unspecified_ = false;
}

void Call::arg(const std::string &text) {
  if (desc_.back() != '(') desc_ += ", ";
  desc_ += text;
}

void Call::bad(const std::string &why, std::initializer_list<ur_result_t> codes) {
  invalid_ = true;
  why_ += why_.empty() ? why : "; " + why;
  allowed_.insert(allowed_.end(), codes.begin(), codes.end());
}

void Call::unspecified(const std::string &why) {
  unspecified_ = true;
  if (!invalid_) why_ += why_.empty() ? why : "; " + why;
}

void Call::publish() {
  desc_ += ")";
  ++shared_.call_index;
  std::snprintf(shared_.current, sizeof shared_.current, "%s%s%s%s", desc_.c_str(), why_.empty() ? "" : " [",
                why_.c_str(), why_.empty() ? "" : "]");
  if (opt.trace) std::fprintf(stderr, "call %" PRIu64 ": %s\n", shared_.call_index, shared_.current);
}

bool is_known_failure(const std::string &signature, std::string &reason); // calls.cpp

bool Call::judge(ur_result_t r) {
  if (opt.trace) std::fprintf(stderr, "  -> %s\n", result_text(r).c_str());
  ++tally_.calls;
  ++tally_.by_code[code_slot(r)];
  if (!invalid_) {
    if (unspecified_) {
      ++tally_.unspecified;
    } else {
      ++tally_.valid;
      if (r != UR_RESULT_SUCCESS) ++tally_.valid_refused;
    }
    return r == UR_RESULT_SUCCESS;
  }
  ++tally_.invalid;
  auto in = [&](const std::vector<ur_result_t> &v) { return std::find(v.begin(), v.end(), r) != v.end(); };
  // With an argument the spec leaves open as well, any refusal may be for that one.
  if (r != UR_RESULT_SUCCESS && (in(allowed_) || in(extra_) || unspecified_)) {
    ++tally_.refused_as_spec;
    return false;
  }
  std::string expected;
  for (ur_result_t a : allowed_)
    if (expected.find(result_text(a)) == std::string::npos) expected += (expected.empty() ? "" : "|") + result_text(a);
  std::string signature = function_ + " [" + why_ + "] -> " + result_text(r);
  std::string reason;
  if (is_known_failure(signature, reason)) {
    ++tally_.known;
  } else if (r == UR_RESULT_SUCCESS) {
    ++tally_.accepted_invalid;
  } else {
    ++tally_.wrong_code;
  }
  ++shared_.failures_seen;
  if (shared_.failure_count < kMaxFailures) {
    Failure &f = shared_.failures[shared_.failure_count++];
    std::snprintf(f.signature, sizeof f.signature, "%s", signature.c_str());
    char head[200];
    std::snprintf(head, sizeof head, "seed %" PRIu64 " call %" PRIu64 " on %s: ", shared_.seed, shared_.call_index,
                  shared_.device);
    std::string text = head + std::string(shared_.current) + " -> " + result_text(r) + " (expected " + expected + ")" +
                       (reason.empty() ? "" : "; known: " + reason);
    text.resize(std::min(text.size(), sizeof f.text - 1));
    std::memcpy(f.text, text.c_str(), text.size() + 1);
  }
  return r == UR_RESULT_SUCCESS;
}

// ---- the world ----

namespace {

template <class H> void drop(std::vector<H> &v, const void *h) {
  v.erase(std::remove(v.begin(), v.end(), static_cast<H>(const_cast<void *>(h))), v.end());
}

template <class H> void keep_released(std::vector<H> &v, H h) {
  if (v.size() >= 8) v.erase(v.begin());
  v.push_back(h);
}

bool alloc_usm(World &w, ur_context_handle_t ctx, const char *kind, size_t size, void **out) {
  *out = nullptr;
  ur_result_t r = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (std::strcmp(kind, "device") == 0) r = urUSMDeviceAlloc(ctx, w.device, nullptr, nullptr, size, out);
  if (std::strcmp(kind, "host") == 0) r = urUSMHostAlloc(ctx, nullptr, nullptr, size, out);
  if (std::strcmp(kind, "shared") == 0) r = urUSMSharedAlloc(ctx, w.device, nullptr, nullptr, size, out);
  return r == UR_RESULT_SUCCESS && *out;
}

} // namespace

void forget_released(World &w, const void *h) {
  if (!h) return;
  drop(w.released_queues, h);
  drop(w.released_contexts, h);
  drop(w.released_mems, h);
  drop(w.released_events, h);
  drop(w.events_with_callbacks, h);
  drop(w.released_kernels, h);
}

void note_new_alloc(World &w, const void *ptr, size_t size) {
  auto lo = reinterpret_cast<uintptr_t>(ptr), hi = lo + size;
  w.freed.erase(std::remove_if(w.freed.begin(), w.freed.end(),
                               [&](const Alloc &f) {
                                 auto flo = reinterpret_cast<uintptr_t>(f.ptr), fhi = flo + f.size;
                                 return flo < hi && lo < fhi;
                               }),
                w.freed.end());
  forget_released(w, ptr);
}

void retire_event(World &w, ur_event_handle_t e, bool keep_as_released) {
  urEventRelease(e);
  const auto with_callback = std::find(w.events_with_callbacks.begin(), w.events_with_callbacks.end(), e);
  if (with_callback != w.events_with_callbacks.end()) {
    w.events_with_callbacks.erase(with_callback);
    return; // may stay nameable until its callbacks have run
  }
  if (keep_as_released) keep_released(w.released_events, e);
}

std::string setup_world(World &w, const urinfo::FoundDevice &found, const Options &opt, Rng &rng) {
  w.found = found;
  w.device = found.device;
  w.host.assign(kHostBytes, 0);
  if (urContextCreate(1, &w.device, nullptr, &w.context) != UR_RESULT_SUCCESS) return "urContextCreate failed";
  if (urContextCreate(1, &w.device, nullptr, &w.other_context) != UR_RESULT_SUCCESS)
    return "a second urContextCreate failed";
  ur_queue_properties_t ooo{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE};
  if (urQueueCreate(w.context, w.device, nullptr, &w.queues[0]) != UR_RESULT_SUCCESS) return "urQueueCreate failed";
  if (urQueueCreate(w.context, w.device, &ooo, &w.queues[1]) != UR_RESULT_SUCCESS)
    urQueueCreate(w.context, w.device, nullptr, &w.queues[1]);
  if (urQueueCreate(w.other_context, w.device, nullptr, &w.other_queue) != UR_RESULT_SUCCESS)
    return "urQueueCreate on the second context failed";

  ur_device_usm_access_capability_flags_t caps = 0;
  w.usm_device = urinfo::device_value(w.device, UR_DEVICE_INFO_USM_DEVICE_SUPPORT, caps) == UR_RESULT_SUCCESS && caps;
  caps = 0;
  w.usm_host = urinfo::device_value(w.device, UR_DEVICE_INFO_USM_HOST_SUPPORT, caps) == UR_RESULT_SUCCESS && caps;
  caps = 0;
  w.usm_shared =
      urinfo::device_value(w.device, UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT, caps) == UR_RESULT_SUCCESS && caps;
  urinfo::device_value(w.device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, w.max_alloc);
  w.pocl = urinfo::platform_string(found.platform, UR_PLATFORM_INFO_NAME).find("Portable Computing Language") !=
           std::string::npos;

  const char *kinds[] = {"device", "host", "shared"};
  for (const char *kind : kinds) {
    void *p = nullptr;
    size_t size = 64 * rng.range(1, kMaxAllocBytes / 64);
    if (alloc_usm(w, w.context, kind, size, &p)) w.allocs.push_back({p, size, kind});
  }
  for (const char *kind : kinds) {
    void *p = nullptr;
    if (alloc_usm(w, w.other_context, kind, 4096, &p)) {
      w.other_alloc = {p, 4096, kind};
      break;
    }
  }
  for (int i = 0; i < 3; ++i) {
    Buffer b;
    b.size = 16 * rng.range(4, kMaxBufferBytes / 16);
    if (urMemBufferCreate(w.context, UR_MEM_FLAG_READ_WRITE, b.size, nullptr, &b.mem) == UR_RESULT_SUCCESS)
      w.buffers.push_back(b);
  }
  urMemBufferCreate(w.other_context, UR_MEM_FLAG_READ_WRITE, 4096, nullptr, &w.other_buffer);
  urEnqueueEventsWait(w.other_queue, 0, nullptr, &w.other_event);

  if (opt.kernels) {
    urinfo::TestProgram p = urinfo::load_test_program(opt.kernel_dir, w.context, found);
    if (p.ok()) {
      w.program = p.program;
      if (urKernelCreate(w.program, "fill", &w.kernel) != UR_RESULT_SUCCESS) w.kernel = nullptr;
      urinfo::TestProgram q = urinfo::load_test_program(opt.kernel_dir, w.other_context, found);
      if (q.ok()) {
        w.other_program = q.program;
        if (urKernelCreate(w.other_program, "fill", &w.other_kernel) != UR_RESULT_SUCCESS) w.other_kernel = nullptr;
      }
    }
  }

  // Released handles of each kind, made once (more appear as the batch releases things).
  if (opt.released_handles) {
    ur_context_handle_t c = nullptr;
    if (urContextCreate(1, &w.device, nullptr, &c) == UR_RESULT_SUCCESS) {
      urContextRelease(c);
      w.released_contexts.push_back(c);
    }
    ur_queue_handle_t q = nullptr;
    if (urQueueCreate(w.context, w.device, nullptr, &q) == UR_RESULT_SUCCESS) {
      urQueueRelease(q);
      w.released_queues.push_back(q);
    }
    ur_mem_handle_t m = nullptr;
    if (urMemBufferCreate(w.context, UR_MEM_FLAG_READ_WRITE, 256, nullptr, &m) == UR_RESULT_SUCCESS) {
      urMemRelease(m);
      w.released_mems.push_back(m);
    }
    ur_event_handle_t e = nullptr;
    if (urEnqueueEventsWait(w.queues[0], 0, nullptr, &e) == UR_RESULT_SUCCESS) {
      urEventWait(1, &e);
      urEventRelease(e);
      w.released_events.push_back(e);
    }
    ur_kernel_handle_t k = nullptr;
    if (w.program && urKernelCreate(w.program, "fill", &k) == UR_RESULT_SUCCESS) {
      urKernelRelease(k);
      w.released_kernels.push_back(k);
    }
  }
  // Addresses the objects made after those releases now hold are live, not released.
  for (const Alloc &a : w.allocs) note_new_alloc(w, a.ptr, a.size);
  for (const Buffer &b : w.buffers) forget_released(w, b.mem);
  return "";
}

void teardown_world(World &w) {
  for (ur_queue_handle_t q : w.queues)
    if (q) urQueueFinish(q);
  if (w.other_queue) urQueueFinish(w.other_queue);
  for (const Mapping &m : w.mappings) {
    ur_event_handle_t e = nullptr;
    if (urEnqueueMemUnmap(w.queues[0], m.mem, m.ptr, 0, nullptr, &e) == UR_RESULT_SUCCESS) {
      urEventWait(1, &e);
      urEventRelease(e);
    }
  }
  for (ur_queue_handle_t q : w.queues)
    if (q) urQueueFinish(q);
  for (ur_event_handle_t e : w.events) urEventRelease(e);
  if (w.other_event) urEventRelease(w.other_event);
  for (const Alloc &a : w.allocs) urUSMFree(w.context, a.ptr);
  if (w.other_alloc.ptr) urUSMFree(w.other_context, w.other_alloc.ptr);
  for (const Buffer &b : w.buffers)
    if (b.sub) urMemRelease(b.mem);
  for (const Buffer &b : w.buffers)
    if (!b.sub) urMemRelease(b.mem);
  if (w.other_buffer) urMemRelease(w.other_buffer);
  if (w.kernel) urKernelRelease(w.kernel);
  if (w.program) urProgramRelease(w.program);
  if (w.other_kernel) urKernelRelease(w.other_kernel);
  if (w.other_program) urProgramRelease(w.other_program);
  for (ur_queue_handle_t q : w.queues)
    if (q) urQueueRelease(q);
  if (w.other_queue) urQueueRelease(w.other_queue);
  if (w.other_context) urContextRelease(w.other_context);
  if (w.context) urContextRelease(w.context);
  w = World{};
}

} // namespace bad_input
