// SPDX-License-Identifier: Apache-2.0
// The calls the tool makes, each with randomly bad arguments (pickers.hpp), and the list
// of failures already known (kept empty where possible: docs/bad-input.md).
#include <cstring>

#include "pickers.hpp"

namespace bad_input {

// Failures the tool knows of, by a piece of their signature ("function [why] -> result"),
// with the reason they do not fail the run. Prefer fixing to listing.
struct KnownFailure {
  const char *signature_part;
  const char *reason;
};
const KnownFailure kKnownFailures[] = {
    {nullptr, nullptr},
};

bool is_known_failure(const std::string &signature, std::string &reason) {
  for (const KnownFailure &k : kKnownFailures) {
    if (k.signature_part && signature.find(k.signature_part) != std::string::npos) {
      reason = k.reason;
      return true;
    }
  }
  return false;
}

namespace {

void after_enqueue(Call &c, ur_result_t r, ur_event_handle_t e) {
  if (c.judge(r)) {
    keep_event(c.w, c.opt, e);
  } else if (e && r == UR_RESULT_SUCCESS) {
    urEventRelease(e);
  }
}

// ---- *GetInfo: bad enums, sizes and null outputs ----

template <class H, class Fn>
void get_info(Call &c, const char *function, const char *param, H valid, const std::vector<H> *released,
              uint32_t good_query, uint32_t last_query, size_t good_size, Fn fn) {
  c.begin(function);
  H h = pick_handle<H>(c, param, valid, released);
  uint32_t query = good_query;
  if (c.rng.percent(kBadPercent)) {
    query = bad_enum(c.rng, last_query);
    c.bad("propName out of range", {UR_RESULT_ERROR_INVALID_ENUMERATION, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION});
  }
  c.arg("propName=" + std::to_string(query));
  alignas(8) unsigned char value[256] = {};
  size_t size_ret = 0;
  size_t prop_size = good_size;
  void *value_ptr = value;
  size_t *size_ret_ptr = c.rng.percent(50) ? &size_ret : nullptr;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 5) {
    prop_size = 0; // with a value pointer
    c.bad("propSize 0 with pPropValue", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 10) {
    value_ptr = nullptr; // with a size
    c.bad("pPropValue null with propSize != 0", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 14) {
    value_ptr = nullptr;
    prop_size = 0;
    size_ret_ptr = nullptr;
    c.bad("pPropValue and pPropSizeRet null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 18 && good_size > 1) {
    prop_size = 1;
    c.bad("propSize smaller than the value", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 25) {
    value_ptr = nullptr; // a size query
    prop_size = 0;
    if (!size_ret_ptr) size_ret_ptr = &size_ret;
  }
  c.arg("propSize=" + std::to_string(prop_size) + ", pPropValue=" + (value_ptr ? "buf" : "null") +
        ", pPropSizeRet=" + (size_ret_ptr ? "&n" : "null"));
  c.publish();
  c.judge(fn(h, query, prop_size, value_ptr, size_ret_ptr));
}

void context_get_info(Call &c) {
  get_info<ur_context_handle_t>(c, "urContextGetInfo", "hContext", c.w.context, &c.w.released_contexts,
                                UR_CONTEXT_INFO_NUM_DEVICES, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, sizeof(uint32_t),
                                [](ur_context_handle_t h, uint32_t q, size_t s, void *v, size_t *r) {
                                  return urContextGetInfo(h, static_cast<ur_context_info_t>(q), s, v, r);
                                });
}

void device_get_info(Call &c) {
  get_info<ur_device_handle_t>(c, "urDeviceGetInfo", "hDevice", c.w.device, nullptr, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE,
                               UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP, sizeof(uint64_t),
                               [](ur_device_handle_t h, uint32_t q, size_t s, void *v, size_t *r) {
                                 return urDeviceGetInfo(h, static_cast<ur_device_info_t>(q), s, v, r);
                               });
}

void queue_get_info(Call &c) {
  get_info<ur_queue_handle_t>(c, "urQueueGetInfo", "hQueue", c.w.queues[c.rng.below(2)], &c.w.released_queues,
                              UR_QUEUE_INFO_CONTEXT, UR_QUEUE_INFO_EMPTY, sizeof(ur_context_handle_t),
                              [](ur_queue_handle_t h, uint32_t q, size_t s, void *v, size_t *r) {
                                return urQueueGetInfo(h, static_cast<ur_queue_info_t>(q), s, v, r);
                              });
}

void event_get_info(Call &c) {
  ur_event_handle_t e = c.w.events.empty() ? nullptr : c.w.events[c.rng.below(c.w.events.size())];
  get_info<ur_event_handle_t>(c, "urEventGetInfo", "hEvent", e, &c.w.released_events,
                              UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, UR_EVENT_INFO_REFERENCE_COUNT,
                              sizeof(ur_event_status_t),
                              [](ur_event_handle_t h, uint32_t q, size_t s, void *v, size_t *r) {
                                return urEventGetInfo(h, static_cast<ur_event_info_t>(q), s, v, r);
                              });
}

void mem_get_info(Call &c) {
  Buffer *b = pick_buffer_entry(c);
  get_info<ur_mem_handle_t>(c, "urMemGetInfo", "hMemory", b ? b->mem : nullptr, &c.w.released_mems, UR_MEM_INFO_SIZE,
                            UR_MEM_INFO_REFERENCE_COUNT, sizeof(size_t),
                            [](ur_mem_handle_t h, uint32_t q, size_t s, void *v, size_t *r) {
                              return urMemGetInfo(h, static_cast<ur_mem_info_t>(q), s, v, r);
                            });
}

// ---- USM allocation and free ----

void usm_alloc(Call &c) {
  World &w = c.w;
  const char *kinds[] = {"device", "host", "shared"};
  const char *kind = kinds[c.rng.below(3)];
  std::string fn = std::string("urUSM") + (kind[0] == 'd' ? "Device" : kind[0] == 'h' ? "Host" : "Shared") + "Alloc";
  c.begin(fn.c_str());
  ur_context_handle_t ctx = pick_context(c);
  ur_device_handle_t dev = w.device;
  if (kind[0] != 'h') dev = pick_handle<ur_device_handle_t>(c, "hDevice", w.device, nullptr);
  ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, 0};
  const ur_usm_desc_t *pdesc = nullptr;
  if (c.rng.percent(40)) {
    pdesc = &desc;
    unsigned roll = static_cast<unsigned>(c.rng.below(100));
    if (roll < 15) {
      desc.align = static_cast<uint32_t>(c.rng.range(3, 4095)) | 1u; // odd: never a power of two
      c.bad("align not a power of two", {UR_RESULT_ERROR_INVALID_VALUE});
    } else if (roll < 30) {
      desc.hints = bad_flag(c.rng, UR_USM_ADVICE_FLAGS_MASK);
      c.bad("hints with an unknown bit", {UR_RESULT_ERROR_INVALID_ENUMERATION});
    } else {
      desc.align = 1u << c.rng.below(8);
    }
    c.arg("pUSMDesc={align=" + std::to_string(desc.align) + ", hints=" + std::to_string(desc.hints) + "}");
  } else {
    c.arg("pUSMDesc=null");
  }
  size_t size = 64 * c.rng.range(1, kMaxAllocBytes / 64);
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 6) {
    size = 0;
    c.bad("size 0", {UR_RESULT_ERROR_INVALID_USM_SIZE});
  } else if (roll < 12) {
    size = huge_size(c.rng);
    if (w.max_alloc && size > w.max_alloc) {
      c.bad("size beyond MAX_MEM_ALLOC_SIZE", {UR_RESULT_ERROR_INVALID_USM_SIZE, UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
                                               UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, UR_RESULT_ERROR_OUT_OF_RESOURCES});
    } else {
      c.unspecified("huge size");
    }
  }
  c.arg("pool=null, size=" + size_text(size));
  void *out = nullptr;
  void **pout = &out;
  if (c.rng.percent(3)) {
    pout = nullptr;
    c.bad("ppMem null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.arg(std::string("ppMem=") + (pout ? "&p" : "null"));
  c.publish();
  ur_result_t r = UR_RESULT_ERROR_UNKNOWN;
  if (kind[0] == 'd') r = urUSMDeviceAlloc(ctx, dev, pdesc, nullptr, size, pout);
  if (kind[0] == 'h') r = urUSMHostAlloc(ctx, pdesc, nullptr, size, pout);
  if (kind[0] == 's') r = urUSMSharedAlloc(ctx, dev, pdesc, nullptr, size, pout);
  bool ok = c.judge(r);
  if (r == UR_RESULT_SUCCESS && out) {
    if (ok && ctx == w.context && w.allocs.size() < 8 && size <= kMaxAllocBytes) {
      w.allocs.push_back({out, size, kind});
      note_new_alloc(w, out, size);
    } else {
      urUSMFree(ctx, out); // an accepted bad call, or enough live allocations
    }
  }
}

void usm_free(Call &c) {
  World &w = c.w;
  c.begin("urUSMFree");
  ur_context_handle_t ctx = pick_context(c);
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  void *p = nullptr;
  size_t live_index = SIZE_MAX;
  bool foreign = false;
  if (roll < 8) {
    c.arg("pMem=null");
    c.bad("pMem null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 28 && !w.freed.empty()) {
    p = w.freed[c.rng.below(w.freed.size())].ptr;
    c.arg("pMem=freed " + hex(p));
    c.bad("pMem already freed", {UR_RESULT_ERROR_INVALID_MEM_OBJECT});
  } else if (roll < 40 && w.other_alloc.ptr) {
    p = w.other_alloc.ptr;
    foreign = true;
    c.arg("pMem=other context's alloc " + hex(p));
    c.bad("pMem of another context", {UR_RESULT_ERROR_INVALID_MEM_OBJECT});
  } else if (roll < 50 && !w.allocs.empty()) {
    const Alloc &a = w.allocs[c.rng.below(w.allocs.size())];
    p = static_cast<char *>(a.ptr) + 4 * c.rng.range(1, a.size / 4 - 1);
    c.arg("pMem=inside alloc " + hex(a.ptr));
    c.bad("pMem inside an allocation, not its start", {UR_RESULT_ERROR_INVALID_MEM_OBJECT});
  } else if (roll < 58) {
    p = w.host.data();
    c.arg("pMem=host memory");
    c.bad("pMem not USM", {UR_RESULT_ERROR_INVALID_MEM_OBJECT});
  } else if (!w.allocs.empty() && w.allocs.size() > 1) {
    live_index = c.rng.below(w.allocs.size());
    p = w.allocs[live_index].ptr;
    // urUSMFree waits for the commands that may use the memory (UR's spec); this finishes
    // them first when that wait is avoided (issue 22 case 2 on native CPU).
    if (c.opt.avoids("free_pending"))
      for (ur_queue_handle_t q : w.queues) urQueueFinish(q);
    c.arg("pMem=" + std::string(w.allocs[live_index].kind) + " alloc " + hex(p));
  } else {
    c.arg("pMem=null");
    c.bad("pMem null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.publish();
  ur_result_t r = urUSMFree(ctx, p);
  c.judge(r);
  if (r != UR_RESULT_SUCCESS) return;
  // Freed, rightly or not: never use it again as live.
  if (live_index != SIZE_MAX && ctx == w.context) {
    w.freed.push_back(w.allocs[live_index]);
    if (w.freed.size() > 8) w.freed.erase(w.freed.begin());
    w.allocs.erase(w.allocs.begin() + static_cast<long>(live_index));
  } else if (foreign) {
    w.other_alloc = Alloc{};
  } else {
    for (size_t i = 0; i < w.allocs.size(); ++i)
      if (w.allocs[i].ptr == p) w.allocs.erase(w.allocs.begin() + static_cast<long>(i));
  }
}

void usm_get_mem_alloc_info(Call &c) {
  c.begin("urUSMGetMemAllocInfo");
  ur_context_handle_t ctx = pick_context(c);
  uint32_t query = static_cast<uint32_t>(c.rng.range(UR_USM_ALLOC_INFO_TYPE, UR_USM_ALLOC_INFO_POOL));
  PickedPtr p = pick_usm_ptr(c, "pMem", 4, query != UR_USM_ALLOC_INFO_TYPE);
  if (c.rng.percent(kBadPercent)) {
    query = bad_enum(c.rng, UR_USM_ALLOC_INFO_POOL);
    c.bad("propName out of range", {UR_RESULT_ERROR_INVALID_ENUMERATION, UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION});
  }
  if (p.kind == PtrKind::freed || p.kind == PtrKind::host || p.kind == PtrKind::foreign)
    c.unspecified("a pointer the context did not allocate (TYPE answers UNKNOWN)");
  c.arg("propName=" + std::to_string(query));
  alignas(8) unsigned char value[64] = {};
  size_t size_ret = 0;
  c.publish();
  ur_result_t r =
      urUSMGetMemAllocInfo(ctx, p.ptr, static_cast<ur_usm_alloc_info_t>(query), sizeof value, value, &size_ret);
  c.judge(r);
}

// ---- USM enqueues ----

void usm_fill(Call &c) {
  c.begin("urEnqueueUSMFill");
  ur_queue_handle_t q = pick_queue(c);
  size_t pattern_size = size_t{1} << c.rng.below(5);
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  PickedPtr p = pick_usm_ptr(c, "pMem", pattern_size);
  if (roll < 4) {
    pattern_size = 0;
    c.bad("patternSize 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 7) {
    pattern_size = 3;
    c.unspecified("patternSize not a power of two");
  }
  c.arg("patternSize=" + std::to_string(pattern_size));
  uint64_t pattern[8] = {0x0123456789abcdefull};
  const void *pp = pattern;
  if (c.rng.percent(3)) {
    pp = nullptr;
    c.bad("pPattern null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.arg(std::string("pPattern=") + (pp ? "pattern" : "null"));
  size_t size = pick_usm_size(c, "size", p, pattern_size ? (pattern_size == 3 ? 1 : pattern_size) : 1);
  if (pattern_size && size && size % pattern_size != 0)
    c.bad("size % patternSize != 0", {UR_RESULT_ERROR_INVALID_SIZE});
  if (pattern_size > size) c.bad("patternSize > size", {UR_RESULT_ERROR_INVALID_SIZE});
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueUSMFill(q, p.ptr, pattern_size, pp, size, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

void usm_memcpy(Call &c) {
  c.begin("urEnqueueUSMMemcpy");
  ur_queue_handle_t q = pick_queue(c);
  bool blocking = c.rng.percent(20);
  c.arg(blocking ? "blocking=true" : "blocking=false");
  PickedPtr dst = pick_usm_ptr(c, "pDst");
  PickedPtr src = pick_usm_ptr(c, "pSrc");
  PickedPtr smaller = dst.room <= src.room ? dst : src;
  if (dst.kind == PtrKind::null) smaller = src;
  if (src.kind == PtrKind::null) smaller = dst;
  size_t size = pick_usm_size(c, "size", smaller);
  // The other side holds at least `size` bytes unless it is the one past its end.
  PickedPtr other = smaller.ptr == dst.ptr ? src : dst;
  bool other_knowable = other.kind == PtrKind::own || other.kind == PtrKind::foreign;
  if (other.ptr && size > other.room && size != 0) {
    if (other_knowable || other.kind == PtrKind::freed) {
      c.bad("size past the other allocation", {UR_RESULT_ERROR_INVALID_SIZE, UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                                               UR_RESULT_ERROR_INVALID_VALUE, UR_RESULT_ERROR_INVALID_CONTEXT});
    } else if (!c.invalid()) {
      size = other.room; // host memory of ours: never past its end with otherwise valid input
    }
  }
  auto lo_d = reinterpret_cast<uintptr_t>(dst.ptr), lo_s = reinterpret_cast<uintptr_t>(src.ptr);
  if (dst.ptr && src.ptr && size && size < SIZE_MAX / 2 && lo_d < lo_s + size && lo_s < lo_d + size)
    c.unspecified("overlapping copy");
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueUSMMemcpy(q, blocking, dst.ptr, src.ptr, size, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

// A 2-D region (pitch, width, height) over `room` bytes, or a bad one: zero, pitch below
// width, overflowing pitch * height (SIZE_MAX-15 with height 2 wraps, issue 22 case 1).
void pick_2d(Call &c, const PickedPtr &p, const char *pitch_name, size_t &pitch, size_t &width, size_t &height,
             bool set_shape) {
  bool knowable = p.kind == PtrKind::own || p.kind == PtrKind::foreign;
  size_t room = std::max<size_t>(p.room, 1);
  if (set_shape) {
    width = c.rng.range(1, std::min<size_t>(room, 64));
    height = c.rng.range(1, 8);
  }
  // The spec bounds a region by pitch * height bytes from its start (the last row's
  // whole pitch included).
  size_t most_pitch = room / std::max<size_t>(height, 1);
  pitch = most_pitch >= width ? c.rng.range(width, std::min(most_pitch, width + 64)) : width;
  bool fits = height == 0 || (pitch >= width && pitch <= room / height);
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 3) {
    pitch = 0;
    c.bad(std::string(pitch_name) + " 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 6 && width > 1) {
    pitch = width - 1;
    c.bad(std::string(pitch_name) + " < width", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 14 && knowable && !c.opt.avoids("overflow_2d")) {
    pitch = std::max(huge_size(c.rng), width);
    if (height < 2) height = 2;
    c.bad(std::string(pitch_name) + " * height past the allocation (overflowing)",
          {UR_RESULT_ERROR_INVALID_SIZE, UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE});
  } else if (!fits && knowable) {
    c.bad(std::string(pitch_name) + " region past the allocation", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  c.arg(std::string(pitch_name) + "=" + size_text(pitch));
}

void usm_fill_2d(Call &c) {
  c.begin("urEnqueueUSMFill2D");
  c.also_accept(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ur_queue_handle_t q = pick_queue(c);
  PickedPtr p = pick_usm_ptr(c, "pMem");
  size_t pitch = 0, width = 0, height = 0;
  pick_2d(c, p, "pitch", pitch, width, height, true);
  size_t pattern_size = 1;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 4) {
    pattern_size = 0;
    c.bad("patternSize 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 7) {
    pattern_size = 6;
    c.bad("patternSize not a power of two", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 10) {
    width = c.rng.range(1, 3);
    height = 1;
    pattern_size = 4;
    if (pitch < width) pitch = width;
    c.bad("patternSize > width * height", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 3) {
    width = 0;
    c.bad("width 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 6) {
    height = 0;
    c.bad("height 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 10 && p.kind != PtrKind::host && !c.opt.avoids("overflow_2d")) {
    width = pitch = (uint64_t{1} << 63) + 8;
    height = 2;
    c.bad("width * height overflowing", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  c.arg("width=" + size_text(width) + ", height=" + size_text(height) +
        ", patternSize=" + std::to_string(pattern_size));
  uint64_t pattern = 0x5a5a5a5a5a5a5a5aull;
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueUSMFill2D(q, p.ptr, pitch, pattern_size, &pattern, width, height, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

void usm_memcpy_2d(Call &c) {
  c.begin("urEnqueueUSMMemcpy2D");
  c.also_accept(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ur_queue_handle_t q = pick_queue(c);
  bool blocking = c.rng.percent(20);
  c.arg(blocking ? "blocking=true" : "blocking=false");
  PickedPtr dst = pick_usm_ptr(c, "pDst");
  PickedPtr src = pick_usm_ptr(c, "pSrc");
  size_t dst_pitch = 0, src_pitch = 0, width = 0, height = 0;
  size_t room = std::max<size_t>(std::min(dst.ptr ? dst.room : src.room, src.ptr ? src.room : dst.room), 1);
  width = c.rng.range(1, std::min<size_t>(room, 64));
  height = c.rng.range(1, 8);
  pick_2d(c, dst, "dstPitch", dst_pitch, width, height, false);
  pick_2d(c, src, "srcPitch", src_pitch, width, height, false);
  if (c.rng.percent(3)) {
    height = 0;
    c.bad("height 0", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  c.arg("width=" + size_text(width) + ", height=" + size_text(height));
  // Host memory is never overrun by valid input: the region checks above only fire for
  // USM it knows; for host memory, clamp the region into it.
  auto region_fits = [&](const PickedPtr &p, size_t pitch) {
    if (!p.ptr || height == 0 || pitch < width) return true;
    return pitch <= p.room / height;
  };
  if (!c.invalid() && !c.is_unspecified() && (!region_fits(dst, dst_pitch) || !region_fits(src, src_pitch))) height = 1;
  if ((dst.kind == PtrKind::host && !region_fits(dst, dst_pitch)) ||
      (src.kind == PtrKind::host && !region_fits(src, src_pitch)))
    height = 1;
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r =
      urEnqueueUSMMemcpy2D(q, blocking, dst.ptr, dst_pitch, src.ptr, src_pitch, width, height, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

void usm_prefetch_advise(Call &c) {
  bool prefetch = c.rng.percent(50);
  c.begin(prefetch ? "urEnqueueUSMPrefetch" : "urEnqueueUSMAdvise");
  c.also_accept(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ur_queue_handle_t q = pick_queue(c);
  PickedPtr p = pick_usm_ptr(c, "pMem");
  size_t size = c.rng.range(1, std::max<size_t>(p.room, 1));
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 5) {
    size = 0;
    c.bad("size 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 10) {
    size = huge_size(c.rng);
    c.unspecified("size past the allocation (a hint)");
  }
  c.arg("size=" + size_text(size));
  uint32_t flags = 0;
  if (c.rng.percent(kBadPercent)) {
    flags = bad_flag(c.rng, prefetch ? UR_USM_MIGRATION_FLAGS_MASK : UR_USM_ADVICE_FLAGS_MASK);
    c.bad("flags with an unknown bit", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  }
  c.arg("flags=" + std::to_string(flags));
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  ur_result_t r;
  if (prefetch) {
    WaitList wl = pick_wait_list(c);
    c.publish();
    r = urEnqueueUSMPrefetch(q, p.ptr, size, flags, wl.count, wl.list, pe);
  } else {
    c.publish();
    r = urEnqueueUSMAdvise(q, p.ptr, size, flags, pe);
  }
  after_enqueue(c, r, e);
}

// ---- buffers ----

void buffer_create(Call &c) {
  World &w = c.w;
  c.begin("urMemBufferCreate");
  ur_context_handle_t ctx = pick_context(c);
  ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE;
  ur_buffer_properties_t props{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, nullptr};
  const ur_buffer_properties_t *pprops = nullptr;
  size_t size = 16 * c.rng.range(4, kMaxBufferBytes / 16);
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 6) {
    flags |= bad_flag(c.rng, UR_MEM_FLAGS_MASK);
    c.bad("flags with an unknown bit", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  } else if (roll < 12) {
    flags |= UR_MEM_FLAG_USE_HOST_POINTER;
    c.bad("USE_HOST_POINTER without a host pointer", {UR_RESULT_ERROR_INVALID_HOST_PTR});
  } else if (roll < 18) {
    props.pHost = w.host.data();
    pprops = &props;
    c.bad("a host pointer without a host-pointer flag", {UR_RESULT_ERROR_INVALID_HOST_PTR});
  } else if (roll < 24) {
    flags |= UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER;
    props.pHost = w.host.data();
    pprops = &props;
  }
  roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 6) {
    size = 0;
    c.bad("size 0", {UR_RESULT_ERROR_INVALID_BUFFER_SIZE});
  } else if (roll < 12 && !pprops) {
    size = huge_size(c.rng);
    if (w.max_alloc && size > w.max_alloc) {
      c.bad("size beyond MAX_MEM_ALLOC_SIZE",
            {UR_RESULT_ERROR_INVALID_BUFFER_SIZE, UR_RESULT_ERROR_OUT_OF_HOST_MEMORY, UR_RESULT_ERROR_OUT_OF_RESOURCES,
             UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, UR_RESULT_ERROR_MEM_OBJECT_ALLOCATION_FAILURE});
    } else {
      c.unspecified("huge size");
    }
  }
  c.arg("flags=" + std::to_string(flags) + ", size=" + size_text(size) +
        ", pProperties=" + (pprops ? "{pHost}" : "null"));
  ur_mem_handle_t m = nullptr;
  ur_mem_handle_t *pm = &m;
  if (c.rng.percent(3)) {
    pm = nullptr;
    c.bad("phBuffer null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.publish();
  ur_result_t r = urMemBufferCreate(ctx, flags, size, pprops, pm);
  bool ok = c.judge(r);
  if (r != UR_RESULT_SUCCESS || !m) return;
  forget_released(w, m);
  if (ok && ctx == w.context && w.buffers.size() < 6 && size <= kMaxBufferBytes) {
    w.buffers.push_back({m, size, false, nullptr});
  } else {
    urMemRelease(m);
    if (c.opt.released_handles && ctx == w.context) w.released_mems.push_back(m);
  }
}

void buffer_release(Call &c) {
  World &w = c.w;
  // Releases a buffer without sub-buffers or mappings (kept as a released handle).
  for (size_t i = 0; i < w.buffers.size(); ++i) {
    Buffer b = w.buffers[i];
    bool busy = false;
    for (const Buffer &o : w.buffers) busy |= o.sub && o.parent == b.mem;
    for (const Mapping &m : w.mappings) busy |= m.mem == b.mem;
    if (busy || w.buffers.size() < 3) continue;
    c.begin("urMemRelease");
    c.arg("hMem=" + hex(b.mem));
    c.publish();
    c.judge(urMemRelease(b.mem));
    w.buffers.erase(w.buffers.begin() + static_cast<long>(i));
    if (c.opt.released_handles) w.released_mems.push_back(b.mem);
    return;
  }
  buffer_create(c);
}

void buffer_partition(Call &c) {
  World &w = c.w;
  c.begin("urMemBufferPartition");
  Buffer *b = pick_buffer_entry(c);
  if (b && b->sub) b = nullptr; // sub-buffers of sub-buffers are refused (INVALID_MEM_OBJECT) anyway
  size_t bsize = b ? b->size : 0;
  ur_mem_handle_t m = pick_handle<ur_mem_handle_t>(c, "hBuffer", b ? b->mem : nullptr, &w.released_mems);
  ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE;
  if (c.rng.percent(kBadPercent)) {
    flags |= bad_flag(c.rng, UR_MEM_FLAGS_MASK);
    c.bad("flags with an unknown bit", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  }
  uint32_t type = UR_BUFFER_CREATE_TYPE_REGION;
  if (c.rng.percent(kBadPercent)) {
    type = bad_enum(c.rng, UR_BUFFER_CREATE_TYPE_REGION);
    c.bad("bufferCreateType out of range", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  }
  // Origins aligned well past any device's base-address alignment, so a valid region is
  // valid everywhere (a misaligned origin is MISALIGNED_SUB_BUFFER_OFFSET, device-dependent).
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, 0};
  size_t slots = std::max<size_t>(bsize / 1024, 1);
  region.origin = 1024 * c.rng.below(slots);
  region.size =
      std::max<size_t>(16, 16 * c.rng.range(1, std::max<size_t>((bsize - std::min(bsize, region.origin)) / 16, 1)));
  if (bsize && region.origin + region.size > bsize) region.size = bsize - region.origin;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 5) {
    region.size = 0;
    c.bad("region size 0", {UR_RESULT_ERROR_INVALID_BUFFER_SIZE});
  } else if (roll < 12) {
    region.size = huge_size(c.rng);
    c.bad("origin + size past the buffer (overflowing)", {UR_RESULT_ERROR_INVALID_BUFFER_SIZE});
  } else if (roll < 18) {
    region.origin = huge_size(c.rng) & ~size_t{1023};
    c.bad("origin past the buffer", {UR_RESULT_ERROR_INVALID_BUFFER_SIZE, UR_RESULT_ERROR_INVALID_VALUE,
                                     UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET});
  } else if (roll < 22 && bsize) {
    region.size = bsize - region.origin + 16;
    c.bad("origin + size past the buffer", {UR_RESULT_ERROR_INVALID_BUFFER_SIZE});
  }
  const ur_buffer_region_t *pregion = &region;
  if (c.rng.percent(3)) {
    pregion = nullptr;
    c.bad("pRegion null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.arg("flags=" + std::to_string(flags) + ", type=" + std::to_string(type) + ", region={" + size_text(region.origin) +
        ", " + size_text(region.size) + "} of " + std::to_string(bsize) + (pregion ? "" : " (null)"));
  ur_mem_handle_t sub = nullptr;
  c.publish();
  ur_result_t r = urMemBufferPartition(m, flags, static_cast<ur_buffer_create_type_t>(type), pregion, &sub);
  bool ok = c.judge(r);
  if (r != UR_RESULT_SUCCESS || !sub) return;
  forget_released(w, sub);
  if (ok && b && m == b->mem && w.buffers.size() < 8) {
    w.buffers.push_back({sub, region.size, true, m, region.origin});
  } else {
    urMemRelease(sub);
  }
}

void buffer_read_write(Call &c) {
  bool read = c.rng.percent(50);
  c.begin(read ? "urEnqueueMemBufferRead" : "urEnqueueMemBufferWrite");
  ur_queue_handle_t q = pick_queue(c);
  size_t bsize = 0;
  ur_mem_handle_t m = pick_buffer(c, "hBuffer", bsize, true);
  bool blocking = c.rng.percent(30);
  c.arg(blocking ? "blocking=true" : "blocking=false");
  size_t offset = 0, size = 0;
  pick_range(c, bsize, 1, offset, size);
  void *host = c.w.host.data();
  if (c.rng.percent(3)) {
    host = nullptr;
    c.bad(read ? "pDst null" : "pSrc null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.arg(std::string(read ? "pDst=" : "pSrc=") + (host ? "host memory" : "null"));
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = read ? urEnqueueMemBufferRead(q, m, blocking, offset, size, host, wl.count, wl.list, pe)
                       : urEnqueueMemBufferWrite(q, m, blocking, offset, size, host, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

void buffer_copy(Call &c) {
  c.begin("urEnqueueMemBufferCopy");
  ur_queue_handle_t q = pick_queue(c);
  size_t src_size = 0, dst_size = 0;
  ur_mem_handle_t src = pick_buffer(c, "hBufferSrc", src_size, true);
  ur_mem_handle_t dst = pick_buffer(c, "hBufferDst", dst_size, true);
  size_t src_offset = 0, size = 0;
  pick_range(c, src_size, 1, src_offset, size);
  size_t dst_offset = dst_size > size ? c.rng.below(dst_size - size + 1) : 0;
  if (size > dst_size) c.bad("size past the destination", {UR_RESULT_ERROR_INVALID_SIZE});
  if (c.rng.percent(5)) {
    dst_offset = huge_size(c.rng);
    c.bad("dstOffset huge", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  c.arg("dstOffset=" + size_text(dst_offset));
  size_t src_at = 0, dst_at = 0;
  if (size && size < SIZE_MAX / 2 && same_root(c.w, src, src_at, dst, dst_at)) {
    size_t lo = std::max(src_at + src_offset, dst_at + dst_offset);
    size_t hi = std::min(src_at + src_offset + size, dst_at + dst_offset + size);
    // UR's spec names no result; every adapter of Ordo's refuses it (docs/bad-input.md).
    if (lo < hi) c.bad("overlapping copy within one buffer", {UR_RESULT_ERROR_OVERLAPPING_REGIONS});
  }
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueMemBufferCopy(q, src, dst, src_offset, dst_offset, size, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

void buffer_fill(Call &c) {
  c.begin("urEnqueueMemBufferFill");
  ur_queue_handle_t q = pick_queue(c);
  size_t bsize = 0;
  ur_mem_handle_t m = pick_buffer(c, "hBuffer", bsize);
  size_t pattern_size = size_t{1} << c.rng.below(5);
  size_t offset = 0, size = 0;
  pick_range(c, bsize, pattern_size, offset, size);
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 4) {
    pattern_size = 0;
    c.bad("patternSize 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 8) {
    pattern_size = 12;
    c.bad("patternSize not a power of two", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 11 && pattern_size > 1) {
    offset += 1;
    c.bad("offset % patternSize != 0", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  if (pattern_size > size) c.bad("patternSize > size", {UR_RESULT_ERROR_INVALID_SIZE});
  c.arg("patternSize=" + std::to_string(pattern_size) + ", offset now " + size_text(offset));
  uint64_t pattern[4] = {0x1122334455667788ull, 0x99aabbccddeeff00ull, 1, 2};
  const void *pp = pattern;
  if (c.rng.percent(3)) {
    pp = nullptr;
    c.bad("pPattern null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueMemBufferFill(q, m, pp, pattern_size, offset, size, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

// Checked arithmetic for a rectangle's last byte + 1; false when it overflows.
bool rect_end(const ur_rect_offset_t &o, const ur_rect_region_t &r, size_t row, size_t slice, uint64_t &end) {
  uint64_t row_pitch = row ? row : r.width;
  uint64_t slice_pitch = slice ? slice : r.height * row_pitch;
  uint64_t a = 0, b = 0, t = 0;
  if (__builtin_mul_overflow(o.z + (r.depth - 1), slice_pitch, &a)) return false;
  if (o.z + (r.depth - 1) < o.z) return false;
  if (__builtin_mul_overflow(o.y + (r.height - 1), row_pitch, &b) || o.y + (r.height - 1) < o.y) return false;
  if (__builtin_add_overflow(a, b, &t) || __builtin_add_overflow(t, o.x, &t) || __builtin_add_overflow(t, r.width, &t))
    return false;
  end = t;
  return true;
}

// One side of a rectangle copy over `size` bytes: origin, pitches, with bad variants the
// spec refuses (pitch < width, slice pitch not a multiple, out of bounds, overflowing).
// Host sides (`host_side`) only get the bad variants the spec's explicit rules catch.
void pick_rect_side(Call &c, const char *side, size_t size, bool host_side, const ur_rect_region_t &region,
                    ur_rect_offset_t &origin, size_t &row, size_t &slice) {
  row = 0;
  slice = 0;
  origin = {0, 0, 0};
  uint64_t span = region.width * region.height * region.depth;
  if (c.rng.percent(50) && span <= size) {
    row = region.width + c.rng.below(8);
    slice = row * region.height;
    uint64_t end = 0;
    if (!rect_end(origin, region, row, slice, end) || end > size) row = slice = 0;
  }
  if (c.rng.percent(50)) origin.x = c.rng.below(8);
  uint64_t end = 0;
  if (!rect_end(origin, region, row, slice, end) || end > size) origin = {0, 0, 0};
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  std::string s(side);
  if (roll < 3) {
    row = region.width > 1 ? region.width - 1 : 0;
    if (row) c.bad(s + "RowPitch < width", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 6 && region.height > 1) {
    row = std::max<size_t>(region.width, 2); // a slice pitch is always a multiple of 1
    slice = row * region.height + 1;
    c.bad(s + "SlicePitch not a multiple of the row pitch", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 12 && !host_side) {
    origin.x = huge_size(c.rng);
    c.bad(s + "Origin.x huge (overflowing)", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 18 && !host_side) {
    row = std::max<size_t>(huge_size(c.rng), region.width);
    slice = 0;
    if (region.height < 2 && region.depth < 2) {
      origin.y = 1;
    }
    c.bad(s + "RowPitch huge (overflowing)", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 22 && !host_side) {
    origin.y = size / std::max<uint64_t>(region.width, 1) + 1;
    c.bad(s + "Origin past the buffer", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  uint64_t final_end = 0;
  if (!host_side && !c.invalid() && (!rect_end(origin, region, row, slice, final_end) || final_end > size))
    c.bad(s + " rectangle past the buffer", {UR_RESULT_ERROR_INVALID_SIZE});
  c.arg(s + "Origin={" + size_text(origin.x) + "," + size_text(origin.y) + "," + size_text(origin.z) + "}, " + s +
        "RowPitch=" + size_text(row) + ", " + s + "SlicePitch=" + size_text(slice));
}

ur_rect_region_t pick_region(Call &c, size_t room) {
  ur_rect_region_t r{1, 1, 1};
  r.width = c.rng.range(1, std::min<size_t>(room, 256));
  r.height = c.rng.range(1, std::max<size_t>(std::min<size_t>(room / r.width, 8), 1));
  r.depth = c.rng.range(1, std::max<size_t>(std::min<size_t>(room / (r.width * r.height), 4), 1));
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 3) {
    r.width = 0;
    c.bad("region.width 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 5) {
    r.height = 0;
    c.bad("region.height 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 7) {
    r.depth = 0;
    c.bad("region.depth 0", {UR_RESULT_ERROR_INVALID_SIZE});
  } else if (roll < 10) {
    r.width = huge_size(c.rng);
    r.height = 2;
    c.bad("region.width huge", {UR_RESULT_ERROR_INVALID_SIZE});
  }
  c.arg("region={" + size_text(r.width) + "," + size_text(r.height) + "," + size_text(r.depth) + "}");
  return r;
}

void buffer_rect(Call &c) {
  unsigned kind = static_cast<unsigned>(c.rng.below(3)); // read, write, copy
  c.begin(kind == 0   ? "urEnqueueMemBufferReadRect"
          : kind == 1 ? "urEnqueueMemBufferWriteRect"
                      : "urEnqueueMemBufferCopyRect");
  ur_queue_handle_t q = pick_queue(c);
  size_t bsize = 0, dsize = 0;
  ur_mem_handle_t m = pick_buffer(c, kind == 2 ? "hBufferSrc" : "hBuffer", bsize);
  ur_mem_handle_t d = kind == 2 ? pick_buffer(c, "hBufferDst", dsize) : nullptr;
  size_t room = std::max<size_t>(kind == 2 ? std::min(bsize, dsize) : bsize, 1);
  ur_rect_region_t region = pick_region(c, room);
  ur_rect_offset_t bo{}, ho{};
  size_t brow = 0, bslice = 0, hrow = 0, hslice = 0;
  pick_rect_side(c, kind == 2 ? "src" : "buffer", bsize, false, region, bo, brow, bslice);
  pick_rect_side(c, kind == 2 ? "dst" : "host", kind == 2 ? dsize : kHostBytes, kind != 2, region, ho, hrow, hslice);
  size_t m_at = 0, d_at = 0;
  if (kind == 2 && same_root(c.w, m, m_at, d, d_at)) c.unspecified("copy within one buffer (regions may overlap)");
  bool blocking = c.rng.percent(30);
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  void *host = c.w.host.data();
  c.publish();
  ur_result_t r;
  if (kind == 0) {
    r = urEnqueueMemBufferReadRect(q, m, blocking, bo, ho, region, brow, bslice, hrow, hslice, host, wl.count, wl.list,
                                   pe);
  } else if (kind == 1) {
    r = urEnqueueMemBufferWriteRect(q, m, blocking, bo, ho, region, brow, bslice, hrow, hslice, host, wl.count, wl.list,
                                    pe);
  } else {
    r = urEnqueueMemBufferCopyRect(q, m, d, bo, ho, region, brow, bslice, hrow, hslice, wl.count, wl.list, pe);
  }
  after_enqueue(c, r, e);
}

void buffer_map_unmap(Call &c) {
  World &w = c.w;
  if (!w.mappings.empty() && c.rng.percent(50)) {
    c.begin("urEnqueueMemUnmap");
    size_t i = c.rng.below(w.mappings.size());
    Mapping mp = w.mappings[i];
    ur_queue_handle_t q = pick_queue(c);
    ur_mem_handle_t m = pick_handle<ur_mem_handle_t>(c, "hMem", mp.mem, &w.released_mems);
    void *ptr = mp.ptr;
    unsigned roll = static_cast<unsigned>(c.rng.below(100));
    if (roll < 5) {
      ptr = nullptr;
      c.bad("pMappedPtr null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
    } else if (roll < 12) {
      ptr = w.host.data();
      c.bad("pMappedPtr not a mapping of hMem",
            {UR_RESULT_ERROR_INVALID_MEM_OBJECT, UR_RESULT_ERROR_INVALID_VALUE, UR_RESULT_ERROR_INVALID_ARGUMENT});
    }
    c.arg("pMappedPtr=" + hex(ptr));
    WaitList wl = pick_wait_list(c);
    ur_event_handle_t e = nullptr;
    ur_event_handle_t *pe = pick_out_event(c, e);
    c.publish();
    ur_result_t r = urEnqueueMemUnmap(q, m, ptr, wl.count, wl.list, pe);
    after_enqueue(c, r, e);
    if (r == UR_RESULT_SUCCESS && ptr == mp.ptr && m == mp.mem)
      w.mappings.erase(w.mappings.begin() + static_cast<long>(i));
    return;
  }
  c.begin("urEnqueueMemBufferMap");
  ur_queue_handle_t q = pick_queue(c);
  size_t bsize = 0;
  ur_mem_handle_t m = pick_buffer(c, "hBuffer", bsize);
  // Blocking: the tool unmaps on any queue later, which needs the map done first (an
  // unmap that overtakes its map on an out-of-order queue is the caller's error).
  bool blocking = true;
  ur_map_flags_t flags = UR_MAP_FLAG_READ | UR_MAP_FLAG_WRITE;
  if (c.rng.percent(kBadPercent)) {
    flags |= bad_flag(c.rng, UR_MAP_FLAGS_MASK);
    c.bad("mapFlags with an unknown bit", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  }
  c.arg("mapFlags=" + std::to_string(flags));
  size_t offset = 0, size = 0;
  pick_range(c, bsize, 1, offset, size);
  void *mapped = nullptr;
  void **pmapped = &mapped;
  if (c.rng.percent(3)) {
    pmapped = nullptr;
    c.bad("ppRetMap null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueMemBufferMap(q, m, blocking, flags, offset, size, wl.count, wl.list, pe, pmapped);
  bool ok = c.judge(r);
  if (r != UR_RESULT_SUCCESS) return;
  if (ok) {
    keep_event(w, c.opt, e);
  } else if (e) {
    urEventRelease(e);
  }
  if (mapped && m) w.mappings.push_back({m, mapped});
}

// ---- events and queues ----

void enqueue_wait(Call &c) {
  bool barrier = c.rng.percent(50);
  c.begin(barrier ? "urEnqueueEventsWaitWithBarrier" : "urEnqueueEventsWait");
  ur_queue_handle_t q = pick_queue(c);
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = barrier ? urEnqueueEventsWaitWithBarrier(q, wl.count, wl.list, pe)
                          : urEnqueueEventsWait(q, wl.count, wl.list, pe);
  after_enqueue(c, r, e);
}

void event_wait(Call &c) {
  World &w = c.w;
  c.begin("urEventWait");
  std::vector<ur_event_handle_t> list;
  uint32_t n = 0;
  const ur_event_handle_t *p = nullptr;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (!w.events.empty()) list.push_back(w.events[c.rng.below(w.events.size())]);
  if (roll < 8 || list.empty()) {
    n = 0;
    p = list.empty() ? nullptr : list.data();
    c.bad("numEvents 0", {UR_RESULT_ERROR_INVALID_VALUE, UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 14) {
    n = 1;
    c.bad("phEventWaitList null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 20) {
    list.push_back(nullptr);
    n = static_cast<uint32_t>(list.size());
    p = list.data();
    c.bad("null event in the list", {UR_RESULT_ERROR_INVALID_EVENT, UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                                     UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST});
  } else if (roll < 26 && c.opt.released_handles && !w.released_events.empty()) {
    list.push_back(w.released_events[c.rng.below(w.released_events.size())]);
    n = static_cast<uint32_t>(list.size());
    p = list.data();
    c.bad("released event in the list", {UR_RESULT_ERROR_INVALID_EVENT, UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                                         UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST});
  } else {
    n = static_cast<uint32_t>(list.size());
    p = list.data();
  }
  c.arg("numEvents=" + std::to_string(n) + ", phEventWaitList=" + (p ? "list" : "null"));
  c.publish();
  c.judge(urEventWait(n, p));
}

void noop_callback(ur_event_handle_t, ur_execution_info_t, void *) {}

void event_set_callback(Call &c) {
  World &w = c.w;
  c.begin("urEventSetCallback");
  c.also_accept(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ur_event_handle_t ev = w.events.empty() ? nullptr : w.events[c.rng.below(w.events.size())];
  ur_event_handle_t h = pick_handle<ur_event_handle_t>(c, "hEvent", ev, &w.released_events);
  uint32_t status = UR_EXECUTION_INFO_COMPLETE;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 6) {
    status = bad_enum(c.rng, UR_EXECUTION_INFO_QUEUED);
    c.bad("execStatus out of range", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  } else if (roll < 12) {
    status = UR_EXECUTION_INFO_QUEUED;
    c.bad("execStatus QUEUED", {UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION});
  }
  ur_event_callback_t fn = noop_callback;
  if (c.rng.percent(4)) {
    fn = nullptr;
    c.bad("pfnNotify null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.arg("execStatus=" + std::to_string(status) + std::string(", pfnNotify=") + (fn ? "fn" : "null"));
  c.publish();
  const ur_result_t r = urEventSetCallback(h, static_cast<ur_execution_info_t>(status), fn, nullptr);
  c.judge(r);
  if (r == UR_RESULT_SUCCESS && h == ev) w.events_with_callbacks.push_back(h);
}

void queue_create_release(Call &c) {
  World &w = c.w;
  c.begin("urQueueCreate");
  ur_context_handle_t ctx = pick_context(c);
  ur_device_handle_t dev = pick_handle<ur_device_handle_t>(c, "hDevice", w.device, nullptr);
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, 0};
  const ur_queue_properties_t *pprops = c.rng.percent(50) ? &props : nullptr;
  if (pprops) {
    unsigned roll = static_cast<unsigned>(c.rng.below(100));
    if (roll < 15) {
      props.flags = bad_flag(c.rng, UR_QUEUE_FLAGS_MASK);
      c.bad("flags with an unknown bit", {UR_RESULT_ERROR_INVALID_ENUMERATION});
    } else if (roll < 25) {
      props.flags = UR_QUEUE_FLAG_PRIORITY_HIGH | UR_QUEUE_FLAG_PRIORITY_LOW;
      c.bad("both priorities", {UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES});
    } else if (roll < 35) {
      props.flags = UR_QUEUE_FLAG_SUBMISSION_BATCHED | UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE;
      c.bad("batched and immediate", {UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES});
    } else if (roll < 60) {
      props.flags = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    }
  }
  c.arg("pProperties=" + (pprops ? "{flags=" + std::to_string(props.flags) + "}" : std::string("null")));
  ur_queue_handle_t q = nullptr;
  ur_queue_handle_t *pq = &q;
  if (c.rng.percent(3)) {
    pq = nullptr;
    c.bad("phQueue null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.publish();
  ur_result_t r = urQueueCreate(ctx, dev, pprops, pq);
  c.judge(r);
  if (r == UR_RESULT_SUCCESS && q) {
    forget_released(w, q);
    urQueueRelease(q);
    if (c.opt.released_handles && w.released_queues.size() < 8) w.released_queues.push_back(q);
  }
}

void queue_flush_finish(Call &c) {
  bool finish = c.rng.percent(30);
  c.begin(finish ? "urQueueFinish" : "urQueueFlush");
  ur_queue_handle_t q = pick_queue(c);
  c.publish();
  c.judge(finish ? urQueueFinish(q) : urQueueFlush(q));
}

void context_retain_release(Call &c) {
  c.begin("urContextRetain");
  ur_context_handle_t h = pick_context(c);
  c.publish();
  ur_result_t r = urContextRetain(h);
  c.judge(r);
  if (r == UR_RESULT_SUCCESS && h == c.w.context) urContextRelease(h);
}

// ---- kernels ----

void kernel_create(Call &c) {
  World &w = c.w;
  if (!w.program) return;
  c.begin("urKernelCreate");
  ur_program_handle_t prog = w.program;
  if (c.rng.percent(5)) {
    prog = nullptr;
    c.bad("hProgram null", {UR_RESULT_ERROR_INVALID_NULL_HANDLE});
  }
  const char *names[] = {"fill", "increment", "no_such_kernel", "", "fill\xff"};
  size_t pick = c.rng.below(5);
  const char *name = names[pick];
  if (pick >= 2) c.bad("pKernelName not in the program", {UR_RESULT_ERROR_INVALID_KERNEL_NAME});
  if (c.rng.percent(4)) {
    name = nullptr;
    c.bad("pKernelName null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  }
  c.arg(std::string("hProgram=") + (prog ? "program" : "null") + ", pKernelName=" + (name ? name : "null"));
  ur_kernel_handle_t k = nullptr;
  c.publish();
  ur_result_t r = urKernelCreate(prog, name, &k);
  c.judge(r);
  if (r == UR_RESULT_SUCCESS && k) {
    forget_released(w, k);
    urKernelRelease(k);
    if (c.opt.released_handles && w.released_kernels.size() < 8) w.released_kernels.push_back(k);
  }
}

void kernel_launch(Call &c) {
  World &w = c.w;
  if (!w.kernel || w.allocs.empty()) return;
  c.begin("urEnqueueKernelLaunchWithArgsExp");
  c.also_accept(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
  ur_queue_handle_t q = pick_queue(c);
  ur_kernel_handle_t k = pick_handle<ur_kernel_handle_t>(
      c, "hKernel", w.kernel, &w.released_kernels, w.other_kernel,
      {UR_RESULT_ERROR_INVALID_KERNEL, UR_RESULT_ERROR_INVALID_CONTEXT, UR_RESULT_ERROR_INVALID_VALUE});
  const Alloc &a = w.allocs[c.rng.below(w.allocs.size())];
  uint32_t dim = 1;
  size_t global[3] = {c.rng.range(1, a.size / 4), 1, 1};
  size_t local[3] = {1, 1, 1};
  const size_t *plocal = c.rng.percent(30) ? local : nullptr;
  const size_t *pglobal = global;
  unsigned roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 4) {
    dim = c.rng.percent(50) ? 0 : 4;
    c.bad("workDim out of range", {UR_RESULT_ERROR_INVALID_WORK_DIMENSION});
  } else if (roll < 8) {
    global[0] = 0;
    c.bad("global size 0", {UR_RESULT_ERROR_INVALID_WORK_DIMENSION, UR_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION});
  } else if (roll < 11) {
    pglobal = nullptr;
    c.bad("pGlobalWorkSize null", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 14) {
    plocal = local;
    local[0] = 0;
    c.bad("local size 0", {UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE});
  } else if (roll < 17 && global[0] > 1) {
    plocal = local;
    local[0] = global[0] + 1;
    c.unspecified("local size above the global size"); // non-uniform groups (OpenCL 2) allow it
  }
  // fill(uint32_t *out, uint32_t value)
  uint32_t value = 7;
  ur_exp_kernel_arg_properties_t args[2] = {};
  args[0].stype = args[1].stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  args[0].type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  args[0].index = 0;
  args[0].size = sizeof(void *);
  args[0].value.pointer = a.ptr;
  args[1].type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  args[1].index = 1;
  args[1].size = sizeof value;
  args[1].value.value = &value;
  uint32_t nargs = 2;
  const ur_exp_kernel_arg_properties_t *pargs = args;
  roll = static_cast<unsigned>(c.rng.below(100));
  if (roll < 4) {
    args[1].index = c.rng.percent(50) ? 2 : 0x7fffffffu;
    c.bad("argument index past the kernel's", {UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX});
  } else if (roll < 7) {
    // PoCL's clSetKernelArg takes a 3-byte value for a 4-byte argument (the adapter passes
    // the size through, adapters/opencl/kernel.cpp): on PoCL only size 0 is tried.
    // (docs/bad-input.md)
    args[1].size = c.rng.percent(50) || c.w.pocl ? 0 : 3;
    c.bad("argument size unlike the kernel's", {UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE});
  } else if (roll < 10) {
    args[0].type = static_cast<ur_exp_kernel_arg_type_t>(bad_enum(c.rng, UR_EXP_KERNEL_ARG_TYPE_SAMPLER));
    c.bad("argument type out of range", {UR_RESULT_ERROR_INVALID_ENUMERATION});
  } else if (roll < 13) {
    pargs = nullptr;
    c.bad("pArgs null with numArgs 2", {UR_RESULT_ERROR_INVALID_NULL_POINTER});
  } else if (roll < 16) {
    args[1].value.value = nullptr;
    c.bad("value argument's pointer null",
          {UR_RESULT_ERROR_INVALID_NULL_POINTER, UR_RESULT_ERROR_INVALID_KERNEL_ARGS, UR_RESULT_ERROR_INVALID_VALUE});
  }
  c.arg("workDim=" + std::to_string(dim) + ", global=" + size_text(global[0]) +
        (plocal ? ", local=" + size_text(local[0]) : std::string(", local=null")) + ", numArgs=2, pArgs=" +
        (pargs ? "{ptr " + std::string(a.kind) + " alloc, value 7 index " + std::to_string(args[1].index) + " size " +
                     std::to_string(args[1].size) + "}"
               : std::string("null")));
  WaitList wl = pick_wait_list(c);
  ur_event_handle_t e = nullptr;
  ur_event_handle_t *pe = pick_out_event(c, e);
  c.publish();
  ur_result_t r = urEnqueueKernelLaunchWithArgsExp(q, k, dim, nullptr, pglobal, plocal, nargs, pargs, nullptr, wl.count,
                                                   wl.list, pe);
  after_enqueue(c, r, e);
}

} // namespace

const std::vector<Op> &ops() {
  static const std::vector<Op> table = {
      {"context_get_info", 3, context_get_info},
      {"device_get_info", 2, device_get_info},
      {"queue_get_info", 2, queue_get_info},
      {"event_get_info", 3, event_get_info},
      {"mem_get_info", 2, mem_get_info},
      {"usm_alloc", 4, usm_alloc},
      {"usm_free", 4, usm_free},
      {"usm_get_mem_alloc_info", 2, usm_get_mem_alloc_info},
      {"usm_fill", 8, usm_fill},
      {"usm_memcpy", 8, usm_memcpy},
      {"usm_fill_2d", 6, usm_fill_2d},
      {"usm_memcpy_2d", 6, usm_memcpy_2d},
      {"usm_prefetch_advise", 3, usm_prefetch_advise},
      {"buffer_create", 3, buffer_create},
      {"buffer_release", 1, buffer_release},
      {"buffer_partition", 3, buffer_partition},
      {"buffer_read_write", 6, buffer_read_write},
      {"buffer_copy", 4, buffer_copy},
      {"buffer_fill", 4, buffer_fill},
      {"buffer_rect", 6, buffer_rect},
      {"buffer_map_unmap", 3, buffer_map_unmap},
      {"enqueue_wait", 4, enqueue_wait},
      {"event_wait", 3, event_wait},
      {"event_set_callback", 2, event_set_callback},
      {"queue_create_release", 2, queue_create_release},
      {"queue_flush_finish", 2, queue_flush_finish},
      {"context_retain", 1, context_retain_release},
      {"kernel_create", 2, kernel_create},
      {"kernel_launch", 5, kernel_launch},
  };
  return table;
}

} // namespace bad_input
