// SPDX-License-Identifier: Apache-2.0
// Buffer commands: read, write, copy, fill (1-D and rectangles), map and unmap. Each is
// one Command on the queue's stream; copies are the driver's (unified addresses on
// both sides, pageable host memory included). Maps go through the root buffer's host
// copy (memory.cpp): a map copies the range there unless it invalidates it, an unmap
// copies a written range back; host-storage buffers map their own bytes.
#include <algorithm>
#include <cstring>

#include "backend.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "ur_common/buffer_commands.hpp"

namespace ordo::stream_backend {

namespace {

// Runs `work` as one command; waits for it when `blocking`.
template <class F>
ur_result_t submit(Queue *q, ur_command_t type, bool blocking, uint32_t n, const ur_event_handle_t *waits,
                   ur_event_handle_t *out, F &&work) {
  Command cmd(q, type, n, waits, out);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  stream_t s = cmd.stream();
  ur_result_t r = cmd.finish(to_ur(work(s)));
  if (r == UR_RESULT_SUCCESS && blocking) r = to_ur(drv::stream_synchronize(s));
  return r;
}

// A rectangle of `region` between two resolved sides, one 2-D copy per slice.
status copy_rect(uint8_t *dst, const ordo::rect_side &ds, const uint8_t *src, const ordo::rect_side &ss,
                 const ur_rect_region_t &region, stream_t s) {
  for (size_t z = 0; z < region.depth; ++z)
    if (status r = drv::memcpy_2d_async(dst + ds.first + z * ds.slice, ds.row, src + ss.first + z * ss.slice, ss.row,
                                        region.width, region.height, s))
      return r;
  return status{};
}

// The buffer commands once ur_common has checked their arguments
// (ur_common/buffer_commands.hpp). A buffer of another context is taken when that
// context has the queue's device: every context of a device allocates in the device's
// one primary context, so the bytes are the device's own memory (docs/cuda.md, "Memory
// objects"). Any other is refused.
struct buffer_hooks {
  using Queue = stream_backend::Queue;
  using Mem = stream_backend::Mem;

  static ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
    bool foreign = false;
    return ordo::ur_common::queue_and_any_buffer(hQueue, hMem, q, m, foreign);
  }
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *waits) {
    return stream_backend::check_wait_list(n, waits);
  }

  static ur_result_t read(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, void *pDst, bool, uint32_t n,
                          const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_READ, blocking, n, waits, phEvent,
                  [&](stream_t s) { return drv::memcpy_async(pDst, m->ptr + offset, size, s); });
  }

  static ur_result_t write(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, const void *pSrc, bool,
                           uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_WRITE, blocking, n, waits, phEvent,
                  [&](stream_t s) { return drv::memcpy_async(m->ptr + offset, pSrc, size, s); });
  }

  // Sides that share a byte never get here (ur_common refuses them: OVERLAPPING_REGIONS).
  static ur_result_t copy(Queue *q, Mem *src, Mem *dst, size_t srcOffset, size_t dstOffset, size_t size, bool,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY, false, n, waits, phEvent,
                  [&](stream_t s) { return drv::memcpy_async(dst->ptr + dstOffset, src->ptr + srcOffset, size, s); });
  }

  static ur_result_t fill(Queue *q, Mem *m, const void *pPattern, size_t patternSize, size_t offset, size_t size,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_FILL, false, n, waits, phEvent, [&](stream_t s) {
      return fill_patterns(m->ptr + offset, static_cast<const uint8_t *>(pPattern), patternSize, size / patternSize, s);
    });
  }

  static ur_result_t host_rect(Queue *q, Mem *m, ur_command_t type, bool blocking, const ordo::rect_side &bs,
                               uint8_t *h, const ordo::rect_side &hs, const ur_rect_region_t &region, uint32_t n,
                               const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    // Host memory that is the buffer's own bytes (host storage) must not overlap the rectangle.
    if (ordo::rect_sides_overlap(reinterpret_cast<uintptr_t>(m->ptr), bs, reinterpret_cast<uintptr_t>(h), hs, region))
      return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
    const bool read = type == UR_COMMAND_MEM_BUFFER_READ_RECT;
    return submit(q, type, blocking, n, waits, phEvent, [&](stream_t s) {
      return read ? stream_backend::copy_rect(h, hs, m->ptr, bs, region, s)
                  : stream_backend::copy_rect(m->ptr, bs, h, hs, region, s);
    });
  }

  static ur_result_t copy_rect(Queue *q, Mem *src, const ordo::rect_side &ss, Mem *dst, const ordo::rect_side &ds,
                               const ur_rect_region_t &region, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, n, waits, phEvent,
                  [&](stream_t s) { return stream_backend::copy_rect(dst->ptr, ds, src->ptr, ss, region, s); });
  }

  // Maps go through the root buffer's host copy: the caller's memory, the host storage
  // (then the map is the bytes themselves), or pinned memory made now.
  static ur_result_t map_host(Mem *m, size_t offset, uint8_t *&host, bool &direct) {
    Mem *root = m->owner();
    uint8_t *mirror = nullptr;
    if (ur_result_t r = ordo::ur_common::host_mirror(root, &mirror, [&](void **p) -> ur_result_t {
          ORDO_DRV(root->home->make_current());
          status made = drv::alloc_host(p, root->size);
          if (made.kind == err::out_of_memory) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
          ORDO_DRV(made);
          return UR_RESULT_SUCCESS;
        }))
      return r;
    host = mirror + m->root_offset() + offset;
    direct = host == m->ptr + offset;
    return UR_RESULT_SUCCESS;
  }

  static ur_result_t map(Queue *q, Mem *m, bool blocking, uint8_t *host, size_t offset, size_t size, bool copy,
                         uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_BUFFER_MAP, blocking, n, waits, phEvent,
                  [&](stream_t s) { return copy ? drv::memcpy_async(host, m->ptr + offset, size, s) : status{}; });
  }

  static ur_result_t unmap(Queue *q, Mem *m, const Mem::Mapping &map, uint32_t n, const ur_event_handle_t *waits,
                           ur_event_handle_t *phEvent) {
    return submit(q, UR_COMMAND_MEM_UNMAP, false, n, waits, phEvent, [&](stream_t s) {
      return map.write_back ? drv::memcpy_async(m->ptr + map.offset, map.host, map.size, s) : status{};
    });
  }
};

} // namespace

void install_enqueue_mem_entry_points(ur_dditable_t &t) { ordo::ur_common::buffer_commands<buffer_hooks>::install(t); }

} // namespace ordo::stream_backend
