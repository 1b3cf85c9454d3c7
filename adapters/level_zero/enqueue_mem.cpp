// SPDX-License-Identifier: Apache-2.0
// Buffer commands: read, write, copy, fill (1-D and rectangles), map and unmap. Each is
// one Command on a list of the queue (common.hpp) that holds its buffers until it has
// completed, so a buffer released meanwhile stays valid for it. Copies are
// zeCommandListAppendMemoryCopy / ...CopyRegion; two sides that share bytes go through
// host memory kept with the command's event. Maps of memory the host may use (host
// memory, the caller's memory of a USE_HOST_POINTER buffer) are the bytes themselves;
// maps of device memory go through a host copy of the root buffer (docs/level-zero.md).
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <new>
#include <vector>

#include "common.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "ur_common/buffer_commands.hpp"

namespace ordo::level_zero {

namespace {

bool overlap(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) { return a < b + bn && b < a + an; }

// One side of a copy done on the host: a buffer's bytes (copied by its own context's
// synchronous list) or the caller's host memory (`mem` null).
struct HostSide {
  Mem *mem = nullptr;
  uint8_t *ptr = nullptr;
};

// The command's copy of `size` bytes, done on a host thread through host memory: the
// source into it, then it into the destination, each buffer only by a list of its own
// context. A failed copy is logged: Level Zero events carry no error.
ur_result_t cross_context_copy(Command &cmd, Device *dev, HostSide dst, HostSide src, size_t size) {
  return append_host_work(cmd, [dev, dst, src, size] {
    ur_result_t r = UR_RESULT_SUCCESS;
    try {
      std::vector<uint8_t> bounce(size);
      if (src.mem)
        r = copy_now(src.mem->ctx, dev, bounce.data(), src.ptr, size);
      else
        std::memcpy(bounce.data(), src.ptr, size);
      if (r == UR_RESULT_SUCCESS) {
        if (dst.mem)
          r = copy_now(dst.mem->ctx, dev, dst.ptr, bounce.data(), size);
        else
          std::memcpy(dst.ptr, bounce.data(), size);
      }
    } catch (const std::bad_alloc &) {
      r = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (r != UR_RESULT_SUCCESS)
      logger().log(LogLevel::warning, "a buffer copy across contexts failed (%d); its event completes anyway", int(r));
  });
}

// Runs one command: `work(cmd)` appends its work, the last append signalling
// cmd.signal(). The command holds `mems`; a blocking call waits for its event.
template <class F>
ur_result_t submit(Queue *q, ur_command_t type, bool blocking, uint32_t n, const ur_event_handle_t *waits,
                   ur_event_handle_t *phEvent, std::initializer_list<Mem *> mems, F &&work) {
  ur_event_handle_t own = nullptr;
  ur_event_handle_t *out = phEvent ? phEvent : blocking ? &own : nullptr;
  try {
    Command cmd(q, type, n, waits, out);
    if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
    for (Mem *m : mems) cmd.hold(m);
    if (ur_result_t r = cmd.finish(work(cmd))) return r;
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  ur_result_t r = UR_RESULT_SUCCESS;
  if (blocking) r = check(ze().zeEventHostSynchronize(reinterpret_cast<Event *>(*out)->ze.ev, UINT64_MAX));
  if (own) event_release(reinterpret_cast<Event *>(own));
  return r;
}

// Host memory of `bytes` kept with the command's event (freed with it).
ur_result_t staging(Command &cmd, size_t bytes, uint8_t **out) {
  Event *ev = cmd.event();
  if (ev->staging) return UR_RESULT_ERROR_INVALID_OPERATION; // one per command
  void *p = nullptr;
  ORDO_ZE(alloc_memory(ev->ctx, UR_USM_TYPE_HOST, nullptr, bytes, 0, &p));
  ev->staging = p;
  *out = static_cast<uint8_t *>(p);
  return UR_RESULT_SUCCESS;
}

// Makes what follows on the list wait for what came before (Level Zero lists need not
// run in order).
ur_result_t append_order(Command &cmd) {
  return check(ze().zeCommandListAppendBarrier(cmd.list(), nullptr, 0, nullptr));
}

// A 1-D copy as the command's work. Ranges that share bytes (one buffer, a buffer and
// its sub-buffer, the caller's memory that is the buffer's own) go through staging, so
// the result is as if the source were read whole first.
ur_result_t append_copy(Command &cmd, uint8_t *dst, const uint8_t *src, size_t size) {
  if (!overlap(dst, size, src, size))
    return check(
        ze().zeCommandListAppendMemoryCopy(cmd.list(), dst, src, size, cmd.signal(), cmd.num_waits(), cmd.waits()));
  uint8_t *tmp = nullptr;
  if (ur_result_t r = staging(cmd, size, &tmp)) return r;
  if (ur_result_t r =
          check(ze().zeCommandListAppendMemoryCopy(cmd.list(), tmp, src, size, nullptr, cmd.num_waits(), cmd.waits())))
    return r;
  if (ur_result_t r = append_order(cmd)) return r;
  return check(ze().zeCommandListAppendMemoryCopy(cmd.list(), dst, tmp, size, cmd.signal(), 0, nullptr));
}

// Level Zero regions and pitches are 32-bit.
bool fits_region(const ordo::rect_side &s, const ur_rect_region_t &region) {
  return s.row <= UINT32_MAX && s.slice <= UINT32_MAX && region.width <= UINT32_MAX && region.height <= UINT32_MAX &&
         region.depth <= UINT32_MAX;
}

ur_result_t copy_region(Command &cmd, uint8_t *dst, const ordo::rect_side &ds, const uint8_t *src,
                        const ordo::rect_side &ss, const ur_rect_region_t &region, ze_event_handle_t signal, uint32_t n,
                        ze_event_handle_t *waits) {
  ze_copy_region_t r{0, 0, 0, uint32_t(region.width), uint32_t(region.height), uint32_t(region.depth)};
  return check(ze().zeCommandListAppendMemoryCopyRegion(cmd.list(), dst + ds.first, &r, uint32_t(ds.row),
                                                        uint32_t(ds.slice), src + ss.first, &r, uint32_t(ss.row),
                                                        uint32_t(ss.slice), signal, n, waits));
}

// A rectangle of `region` between two resolved sides as the command's work; sides
// whose spans share bytes go through a tight staging copy of the rectangle.
ur_result_t append_rect(Command &cmd, uint8_t *dst, const ordo::rect_side &ds, const uint8_t *src,
                        const ordo::rect_side &ss, const ur_rect_region_t &region) {
  if (!overlap(dst + ds.first, ds.end - ds.first, src + ss.first, ss.end - ss.first))
    return copy_region(cmd, dst, ds, src, ss, region, cmd.signal(), cmd.num_waits(), cmd.waits());
  ordo::rect_side tight; // the rectangle alone, rows and slices back to back
  tight.row = region.width;
  tight.slice = region.width * region.height;
  tight.end = tight.slice * region.depth;
  uint8_t *tmp = nullptr;
  if (ur_result_t r = staging(cmd, tight.end, &tmp)) return r;
  if (ur_result_t r = copy_region(cmd, tmp, tight, src, ss, region, nullptr, cmd.num_waits(), cmd.waits())) return r;
  if (ur_result_t r = append_order(cmd)) return r;
  return copy_region(cmd, dst, ds, tmp, tight, region, cmd.signal(), 0, nullptr);
}

// The buffer commands once ur_common has checked their arguments
// (ur_common/buffer_commands.hpp). Read, write and copy take a buffer of another context
// that has the queue's device (`foreign`; UR's suite copies across contexts of one
// device): Level Zero lets a list touch only memory of its own context, so such a
// command is done on a host thread, each buffer through its own context
// (cross_context_copy). Fills, rectangles and maps take the queue's context's buffers only.
struct buffer_hooks {
  using Queue = level_zero::Queue;
  using Mem = level_zero::Mem;

  static ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
    return ordo::ur_common::queue_and_own_buffer(hQueue, hMem, q, m);
  }
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *waits) {
    return level_zero::check_wait_list(n, waits);
  }

  static ur_result_t read(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, void *pDst, bool foreign,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_READ, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
      if (foreign)
        return cross_context_copy(cmd, q->dev, {nullptr, static_cast<uint8_t *>(pDst)}, {m, m->ptr + offset}, size);
      return append_copy(cmd, static_cast<uint8_t *>(pDst), m->ptr + offset, size);
    });
  }

  static ur_result_t write(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, const void *pSrc, bool foreign,
                           uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_WRITE, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
      if (foreign)
        return cross_context_copy(cmd, q->dev, {m, m->ptr + offset},
                                  {nullptr, const_cast<uint8_t *>(static_cast<const uint8_t *>(pSrc))}, size);
      return append_copy(cmd, m->ptr + offset, static_cast<const uint8_t *>(pSrc), size);
    });
  }

  static ur_result_t copy(Queue *q, Mem *src, Mem *dst, size_t srcOffset, size_t dstOffset, size_t size, bool foreign,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY, false, n, waits, phEvent, {src, dst}, [&](Command &cmd) {
      if (foreign)
        return cross_context_copy(cmd, q->dev, {dst, dst->ptr + dstOffset}, {src, src->ptr + srcOffset}, size);
      return append_copy(cmd, dst->ptr + dstOffset, src->ptr + srcOffset, size);
    });
  }

  static ur_result_t fill(Queue *q, Mem *m, const void *pPattern, size_t patternSize, size_t offset, size_t size,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_FILL, false, n, waits, phEvent, {m}, [&](Command &cmd) {
      // The pattern is read at the append (Level Zero copies it; a spelled-out one is
      // written to staging now), so the caller may reuse it at once.
      ur_result_t r = append_fill(cmd, m->ptr + offset, static_cast<const uint8_t *>(pPattern), patternSize, 0, size,
                                  q->dev->facts.fill_pattern_max);
      return r ? r : cmd.append_barrier();
    });
  }

  static ur_result_t host_rect(Queue *q, Mem *m, ur_command_t type, bool blocking, const ordo::rect_side &bs,
                               uint8_t *h, const ordo::rect_side &hs, const ur_rect_region_t &region, uint32_t n,
                               const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    if (!fits_region(bs, region) || !fits_region(hs, region)) return UR_RESULT_ERROR_INVALID_SIZE;
    const bool read = type == UR_COMMAND_MEM_BUFFER_READ_RECT;
    return submit(q, type, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
      return read ? append_rect(cmd, h, hs, m->ptr, bs, region) : append_rect(cmd, m->ptr, bs, h, hs, region);
    });
  }

  static ur_result_t copy_rect(Queue *q, Mem *src, const ordo::rect_side &ss, Mem *dst, const ordo::rect_side &ds,
                               const ur_rect_region_t &region, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    if (!fits_region(ss, region) || !fits_region(ds, region)) return UR_RESULT_ERROR_INVALID_SIZE;
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, n, waits, phEvent, {src, dst},
                  [&](Command &cmd) { return append_rect(cmd, dst->ptr, ds, src->ptr, ss, region); });
  }

  // Memory the host may use (host or shared memory, the caller's for USE_HOST_POINTER)
  // maps in place; device memory maps through the root's host copy, the caller's memory
  // (USE_HOST_POINTER not imported) or host memory made at the first map.
  static ur_result_t map_host(Mem *m, size_t offset, uint8_t *&host, bool &direct) {
    Mem *root = m->owner();
    host = m->ptr + offset;
    direct = root->host_visible;
    if (direct) return UR_RESULT_SUCCESS;
    uint8_t *mirror = nullptr;
    if (ur_result_t r = ordo::ur_common::host_mirror(root, &mirror, [&](void **p) -> ur_result_t {
          ORDO_ZE(alloc_memory(root->ctx, UR_USM_TYPE_HOST, nullptr, root->size, 0, p));
          return UR_RESULT_SUCCESS;
        }))
      return r;
    host = mirror + m->root_offset() + offset;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t map(Queue *q, Mem *m, bool blocking, uint8_t *host, size_t offset, size_t size, bool copy,
                         uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_MAP, blocking, n, waits, phEvent, {m}, [&](Command &cmd) {
      return copy ? append_copy(cmd, host, m->ptr + offset, size) : cmd.append_barrier();
    });
  }

  static ur_result_t unmap(Queue *q, Mem *m, const Mem::Mapping &map, uint32_t n, const ur_event_handle_t *waits,
                           ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_UNMAP, false, n, waits, phEvent, {m}, [&](Command &cmd) {
      return map.write_back ? append_copy(cmd, m->ptr + map.offset, static_cast<const uint8_t *>(map.host), map.size)
                            : cmd.append_barrier();
    });
  }
};

} // namespace

void install_enqueue_mem_entry_points(ur_dditable_t &t) { ordo::ur_common::buffer_commands<buffer_hooks>::install(t); }

} // namespace ordo::level_zero
