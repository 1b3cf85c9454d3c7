// SPDX-License-Identifier: Apache-2.0
// Argument pickers: each returns a valid value most of the time and otherwise a bad one
// (null, released, of another context, huge, zero, overflowing), telling the Call what
// the spec says about it. The codes are UR's (include/ur_api.h "Parameter rules" and the
// returns: lists of UR's scripts/core/*.yml at 578c2a84); docs/bad-input.md lists them.
#pragma once
#include <algorithm>

#include "bad_input.hpp"

namespace bad_input {

constexpr unsigned kBadPercent = 7; // per argument: most calls have none or one bad argument

inline uint64_t huge_size(Rng &rng) {
  static const uint64_t values[] = {
      SIZE_MAX,         SIZE_MAX - 15,  (uint64_t{1} << 63) + 8, uint64_t{1} << 63, (uint64_t{1} << 32) + 16,
      SIZE_MAX / 2 + 1, SIZE_MAX - 4095};
  return values[rng.below(sizeof values / sizeof values[0])];
}

// A value of `enum_name` no enumerator has (beyond the last or far out).
inline uint32_t bad_enum(Rng &rng, uint32_t last) {
  const uint32_t values[] = {last + 1, last + 100, 0x7ffffff0u, 0x12345678u};
  return values[rng.below(4)];
}

// A flag bit outside `valid_mask`'s complement (`invalid_mask` is the spec's *_FLAGS_MASK).
inline uint32_t bad_flag(Rng &rng, uint32_t invalid_mask) {
  for (;;) {
    uint32_t bit = 1u << rng.below(32);
    if (bit & invalid_mask) return bit;
  }
}

template <class H> const char *handle_name();
template <> inline const char *handle_name<ur_queue_handle_t>() { return "queue"; }
template <> inline const char *handle_name<ur_context_handle_t>() { return "context"; }
template <> inline const char *handle_name<ur_mem_handle_t>() { return "mem"; }
template <> inline const char *handle_name<ur_event_handle_t>() { return "event"; }
template <> inline const char *handle_name<ur_kernel_handle_t>() { return "kernel"; }
template <> inline const char *handle_name<ur_device_handle_t>() { return "device"; }

template <class H> ur_result_t invalid_code();
template <> inline ur_result_t invalid_code<ur_queue_handle_t>() { return UR_RESULT_ERROR_INVALID_QUEUE; }
template <> inline ur_result_t invalid_code<ur_context_handle_t>() { return UR_RESULT_ERROR_INVALID_CONTEXT; }
template <> inline ur_result_t invalid_code<ur_mem_handle_t>() { return UR_RESULT_ERROR_INVALID_MEM_OBJECT; }
template <> inline ur_result_t invalid_code<ur_event_handle_t>() { return UR_RESULT_ERROR_INVALID_EVENT; }
template <> inline ur_result_t invalid_code<ur_kernel_handle_t>() { return UR_RESULT_ERROR_INVALID_KERNEL; }
template <> inline ur_result_t invalid_code<ur_device_handle_t>() { return UR_RESULT_ERROR_INVALID_DEVICE; }

// A handle argument: `valid` mostly; null; a released one (with released handles on);
// `foreign` (of the other context) when given, with what the spec says of it: refused
// with `foreign_codes`, or open when that list is empty.
template <class H>
H pick_handle(Call &c, const char *param, H valid, const std::vector<H> *released, H foreign = nullptr,
              std::initializer_list<ur_result_t> foreign_codes = {}) {
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  std::string name = std::string(param) + "=";
  if (roll < kBadPercent / 2 + 1 || !valid) {
    c.arg(name + "null");
    c.bad(std::string(param) + " null", {UR_RESULT_ERROR_INVALID_NULL_HANDLE});
    return nullptr;
  }
  if (roll < kBadPercent && released && !released->empty() && c.opt.released_handles) {
    H h = (*released)[c.rng.below(released->size())];
    c.arg(name + "released " + handle_name<H>() + " " + hex(h));
    c.bad(std::string(param) + " released", {invalid_code<H>(), UR_RESULT_ERROR_INVALID_NULL_HANDLE});
    return h;
  }
  if (roll < kBadPercent + 3 && foreign) {
    c.arg(name + handle_name<H>() + " of the other context");
    if (foreign_codes.size() == 0) {
      c.unspecified(std::string(param) + " of another context");
    } else {
      c.bad(std::string(param) + " of another context", foreign_codes);
    }
    return foreign;
  }
  c.arg(name + hex(valid));
  return valid;
}

inline ur_queue_handle_t pick_queue(Call &c) {
  ur_queue_handle_t q = c.w.queues[c.rng.below(2)];
  return pick_handle<ur_queue_handle_t>(c, "hQueue", q, &c.w.released_queues);
}

inline ur_context_handle_t pick_context(Call &c) {
  return pick_handle<ur_context_handle_t>(c, "hContext", c.w.context, &c.w.released_contexts);
}

// An event wait list, with the count/pointer mismatches, null and released entries the
// spec refuses; events of the other context are allowed or refused as the adapter likes.
struct WaitList {
  std::vector<ur_event_handle_t> events;
  uint32_t count = 0;
  const ur_event_handle_t *list = nullptr;
};

inline WaitList pick_wait_list(Call &c) {
  WaitList wl;
  World &w = c.w;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  auto some_live = [&](size_t n) {
    for (size_t i = 0; i < n && !w.events.empty(); ++i) wl.events.push_back(w.events[c.rng.below(w.events.size())]);
  };
  const ur_result_t list_codes[] = {UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, UR_RESULT_ERROR_INVALID_EVENT,
                                    UR_RESULT_ERROR_INVALID_NULL_HANDLE};
  if (roll < 60) {
    c.arg("waitList=0/null");
    return wl;
  }
  if (roll < 82) {
    some_live(c.rng.range(1, 3));
  } else if (roll < 85) {
    wl.count = static_cast<uint32_t>(c.rng.range(1, 3));
    c.arg("waitList=" + std::to_string(wl.count) + "/null");
    c.bad("wait count > 0 with a null list", {UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST});
    return wl;
  } else if (roll < 88) {
    some_live(1);
    wl.events.resize(1);
    wl.count = 0;
    wl.list = wl.events.data();
    c.arg("waitList=0/non-null");
    c.bad("wait count 0 with a non-null list", {UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST});
    return wl;
  } else if (roll < 92) {
    some_live(c.rng.below(3));
    wl.events.insert(wl.events.begin() + static_cast<long>(c.rng.below(wl.events.size() + 1)), nullptr);
    c.bad("null event in the wait list", {list_codes[0], list_codes[1], list_codes[2]});
  } else if (roll < 96 && c.opt.released_handles && !w.released_events.empty()) {
    some_live(c.rng.below(2));
    wl.events.push_back(w.released_events[c.rng.below(w.released_events.size())]);
    c.bad("released event in the wait list", {list_codes[0], list_codes[1], list_codes[2]});
  } else if (w.other_event && !c.opt.avoids("foreign_event")) {
    some_live(c.rng.below(2));
    wl.events.push_back(w.other_event);
    c.unspecified("event of another context in the wait list");
  }
  if (wl.events.empty()) {
    c.arg("waitList=0/null");
    return wl;
  }
  wl.count = static_cast<uint32_t>(wl.events.size());
  wl.list = wl.events.data();
  std::string text = "waitList=" + std::to_string(wl.count) + "/{";
  for (size_t i = 0; i < wl.events.size(); ++i) text += (i ? "," : "") + hex(wl.events[i]);
  c.arg(text + "}");
  return wl;
}

// Where an enqueue's output event goes (null: none asked for).
inline ur_event_handle_t *pick_out_event(Call &c, ur_event_handle_t &slot) {
  slot = nullptr;
  if (c.rng.percent(15)) {
    c.arg("phEvent=null");
    return nullptr;
  }
  c.arg("phEvent=&e");
  return &slot;
}

// Keeps an event an enqueue returned; the oldest are released past a dozen.
inline void keep_event(World &w, const Options &opt, ur_event_handle_t e) {
  if (!e) return;
  forget_released(w, e);
  w.events.push_back(e);
  if (w.events.size() > 12) {
    retire_event(w, w.events.front(), opt.released_handles);
    w.events.pop_front();
  }
}

// A USM pointer argument: into a live allocation of the context (most often), of the
// other context, into a freed allocation, host memory that is not USM, or null.
// `room` is set to the bytes from the pointer to the end of what it points into.
enum class PtrKind { own, foreign, freed, host, null };

struct PickedPtr {
  void *ptr = nullptr;
  size_t room = 0;
  PtrKind kind = PtrKind::null;
};

// `freed_is_bad` false: a freed allocation has an answer of its own (urUSMGetMemAllocInfo's
// TYPE is UNKNOWN), so only "no crash" is checked for it.
inline PickedPtr pick_usm_ptr(Call &c, const char *param, size_t align = 4, bool freed_is_bad = true) {
  World &w = c.w;
  PickedPtr p;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  std::string name = std::string(param) + "=";
  auto offset_into = [&](size_t size) { return align * c.rng.below(size / align / 2 + 1); };
  if (roll < 3 || (w.allocs.empty() && roll < 90)) {
    c.arg(name + "null");
    c.bad(std::string(param) + " null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
    return p;
  }
  if (roll < 7 && !w.freed.empty() && !c.opt.avoids("freed_ptr")) {
    const Alloc &a = w.freed[c.rng.below(w.freed.size())];
    size_t off = offset_into(a.size);
    p = {static_cast<char *>(a.ptr) + off, a.size - off, PtrKind::freed};
    c.arg(name + "freed " + a.kind + " alloc " + hex(a.ptr) + "+" + std::to_string(off));
    if (!freed_is_bad)
      c.unspecified(std::string(param) + " freed");
    else
      c.bad(std::string(param) + " freed", {UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE,
                                            UR_RESULT_ERROR_INVALID_SIZE, UR_RESULT_ERROR_INVALID_CONTEXT});
    return p;
  }
  if (roll < 11 && w.other_alloc.ptr && !c.opt.avoids("foreign_ptr")) {
    size_t off = offset_into(w.other_alloc.size);
    p = {static_cast<char *>(w.other_alloc.ptr) + off, w.other_alloc.size - off, PtrKind::foreign};
    c.arg(name + "other context's " + w.other_alloc.kind + " alloc+" + std::to_string(off));
    c.unspecified(std::string(param) + " of another context");
    return p;
  }
  if (roll < 14 && !c.opt.avoids("host_ptr")) {
    size_t off = offset_into(kHostBytes / 2);
    p = {w.host.data() + off, kHostBytes - off, PtrKind::host};
    c.arg(name + "host memory+" + std::to_string(off));
    c.unspecified(std::string(param) + " not USM");
    return p;
  }
  const Alloc &a = w.allocs[c.rng.below(w.allocs.size())];
  size_t off = offset_into(a.size);
  p = {static_cast<char *>(a.ptr) + off, a.size - off, PtrKind::own};
  c.arg(name + a.kind + " alloc " + hex(a.ptr) + "+" + std::to_string(off) + " (size " + std::to_string(a.size) + ")");
  return p;
}

// A byte count for `ptr`, a multiple of `unit`: within room, or 0, past the end, or huge.
// Past the end (and huge) is refused only where the adapter can know the size: a USM
// allocation of this or the other context; host memory never gets more than its room.
inline size_t pick_usm_size(Call &c, const char *param, const PickedPtr &p, size_t unit = 1) {
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  std::string name = std::string(param) + "=";
  bool knowable = p.kind == PtrKind::own || p.kind == PtrKind::foreign;
  if (roll < 4) {
    c.arg(name + "0");
    c.bad(std::string(param) + " 0", {UR_RESULT_ERROR_INVALID_SIZE});
    return 0;
  }
  if (roll < 10 && knowable) {
    size_t v = huge_size(c.rng) / unit * unit;
    c.arg(name + size_text(v));
    c.bad(std::string(param) + " huge", {UR_RESULT_ERROR_INVALID_SIZE, UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                                         UR_RESULT_ERROR_INVALID_VALUE, UR_RESULT_ERROR_INVALID_CONTEXT});
    return v;
  }
  if (roll < 15 && knowable) {
    size_t v = (p.room / unit + c.rng.range(1, 4)) * unit;
    c.arg(name + std::to_string(v) + " (room " + std::to_string(p.room) + ")");
    c.bad(std::string(param) + " past the allocation",
          {UR_RESULT_ERROR_INVALID_SIZE, UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE,
           UR_RESULT_ERROR_INVALID_CONTEXT});
    return v;
  }
  size_t most = std::max<size_t>(p.room / unit, 1);
  size_t v = c.rng.range(1, std::min<size_t>(most, 1024)) * unit;
  if (p.room < unit) v = unit; // rare: a pointer at the very end
  c.arg(name + std::to_string(v));
  return v;
}

inline Buffer *pick_buffer_entry(Call &c) {
  return c.w.buffers.empty() ? nullptr : &c.w.buffers[c.rng.below(c.w.buffers.size())];
}

// A buffer argument; `size` is set to its size (0 when not a live buffer of the context).
// `foreign_open`: a buffer of another context (same device) is one the spec names no
// error for, and adapters take it for reads, writes and copies (CUDA, HIP, Level Zero).
inline ur_mem_handle_t pick_buffer(Call &c, const char *param, size_t &size, bool foreign_open = false) {
  Buffer *b = pick_buffer_entry(c);
  size = 0;
  ur_mem_handle_t m =
      foreign_open
          ? pick_handle<ur_mem_handle_t>(c, param, b ? b->mem : nullptr, &c.w.released_mems, c.w.other_buffer, {})
          : pick_handle<ur_mem_handle_t>(
                c, param, b ? b->mem : nullptr, &c.w.released_mems, c.w.other_buffer,
                {UR_RESULT_ERROR_INVALID_CONTEXT, UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE});
  if (b && m == b->mem) size = b->size;
  if (b && m == b->mem && b->sub) c.arg("(a sub-buffer)");
  if (m == c.w.other_buffer) size = 4096;
  return m;
}

// Whether live buffers `a` and `b` hold bytes of one buffer (the same one, or sub-buffers
// of it); `a_at` and `b_at` are then where their bytes start in it.
inline bool same_root(World &w, ur_mem_handle_t a, size_t &a_at, ur_mem_handle_t b, size_t &b_at) {
  const Buffer *ea = nullptr, *eb = nullptr;
  for (const Buffer &x : w.buffers) {
    if (x.mem == a) ea = &x;
    if (x.mem == b) eb = &x;
  }
  if (!ea || !eb) return false;
  a_at = ea->sub ? ea->origin : 0;
  b_at = eb->sub ? eb->origin : 0;
  return (ea->sub ? ea->parent : ea->mem) == (eb->sub ? eb->parent : eb->mem);
}

// An offset and size into a buffer of `buffer_size` bytes (multiples of `unit`).
inline void pick_range(Call &c, size_t buffer_size, size_t unit, size_t &offset, size_t &size) {
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  size_t units = std::max<size_t>(buffer_size / unit, 1);
  offset = unit * c.rng.below(units);
  size = unit * c.rng.range(1, std::max<size_t>(units - offset / unit, 1));
  if (roll < 4) {
    size = 0;
    c.bad("size 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 8) {
    size = huge_size(c.rng) / unit * unit;
    c.bad("size huge", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 12) {
    offset = huge_size(c.rng) / unit * unit;
    c.bad("offset huge", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 16) {
    size = buffer_size - offset + unit * c.rng.range(1, 4);
    c.bad("offset + size past the buffer", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  c.arg("offset=" + size_text(offset) + ", size=" + size_text(size) + " (buffer " + std::to_string(buffer_size) + ")");
}

} // namespace bad_input
