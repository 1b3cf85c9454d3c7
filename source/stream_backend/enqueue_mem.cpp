// SPDX-License-Identifier: Apache-2.0
// Buffer commands: read, write, copy, fill (1-D and rectangles), map and unmap. Each is
// one Command on the queue's stream; copies are the driver's (unified addresses on
// both sides, pageable host memory included). Maps go through the root buffer's host
// copy (memory.cpp): a map copies the range there unless it invalidates it, an unmap
// copies a written range back; host-storage buffers map their own bytes.
#include <algorithm>
#include <cstring>
#include <functional>

#include "backend.hpp"
#include "ordo/mem_rules.hpp"
#include "ordo/rect.hpp"
#include "ur_common/buffer_commands.hpp"

namespace ordo::stream_backend {

namespace {

bool overlap(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) { return a < b + bn && b < a + an; }

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

// Whether two rectangles of `region` share a byte: their rows are disjoint ascending
// runs of `width` bytes, so one walk over both lists finds any intersection.
bool rects_overlap(const uint8_t *a, const ordo::rect_side &as, const uint8_t *b, const ordo::rect_side &bs,
                   const ur_rect_region_t &region) {
  const size_t rows = region.height * region.depth, w = region.width;
  auto row_start = [&](const uint8_t *base, const ordo::rect_side &sd, size_t k) {
    return base + sd.first + (k / region.height) * sd.slice + (k % region.height) * sd.row;
  };
  for (size_t i = 0, j = 0; i < rows && j < rows;) {
    const uint8_t *x = row_start(a, as, i), *y = row_start(b, bs, j);
    if (overlap(x, w, y, w)) return true;
    if (x < y)
      ++i;
    else
      ++j;
  }
  return false;
}

// A copy whose two sides share bytes goes through temporary device memory, so the
// result is as if the source were read whole first. The call waits for the copy to end
// before the temporary memory goes (a rare case: copies within one buffer's bytes).
status staged_copy(const std::function<status(uint8_t *, stream_t)> &in,
                   const std::function<status(uint8_t *, stream_t)> &out, size_t bytes, stream_t s) {
  void *tmp = nullptr;
  if (status r = drv::alloc_device(&tmp, bytes)) return r;
  auto *t = static_cast<uint8_t *>(tmp);
  status r = in(t, s);
  if (!r) r = out(t, s);
  status w = drv::stream_synchronize(s);
  drv::free_device(tmp);
  return r ? r : w;
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

  // Overlapping ranges (a copy within one buffer's bytes) are staged (staged_copy).
  static ur_result_t copy(Queue *q, Mem *src, Mem *dst, size_t srcOffset, size_t dstOffset, size_t size, bool,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    uint8_t *from = src->ptr + srcOffset, *to = dst->ptr + dstOffset;
    const bool shared = overlap(from, size, to, size);
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY, false, n, waits, phEvent, [&](stream_t s) {
      if (!shared) return drv::memcpy_async(to, from, size, s);
      return staged_copy([&](uint8_t *t, stream_t st) { return drv::memcpy_async(t, from, size, st); },
                         [&](uint8_t *t, stream_t st) { return drv::memcpy_async(to, t, size, st); }, size, s);
    });
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
    if (rects_overlap(m->ptr, bs, h, hs, region)) return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
    const bool read = type == UR_COMMAND_MEM_BUFFER_READ_RECT;
    return submit(q, type, blocking, n, waits, phEvent, [&](stream_t s) {
      return read ? stream_backend::copy_rect(h, hs, m->ptr, bs, region, s)
                  : stream_backend::copy_rect(m->ptr, bs, h, hs, region, s);
    });
  }

  static ur_result_t copy_rect(Queue *q, Mem *src, const ordo::rect_side &ss, Mem *dst, const ordo::rect_side &ds,
                               const ur_rect_region_t &region, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    const bool shared = rects_overlap(src->ptr, ss, dst->ptr, ds, region);
    return submit(q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, n, waits, phEvent, [&](stream_t s) {
      if (!shared) return stream_backend::copy_rect(dst->ptr, ds, src->ptr, ss, region, s);
      ordo::rect_side tight; // the rectangle alone, rows and slices back to back
      tight.row = region.width;
      tight.slice = region.width * region.height;
      tight.end = tight.slice * region.depth;
      return staged_copy(
          [&](uint8_t *t, stream_t st) { return stream_backend::copy_rect(t, tight, src->ptr, ss, region, st); },
          [&](uint8_t *t, stream_t st) { return stream_backend::copy_rect(dst->ptr, ds, t, tight, region, st); },
          tight.end, s);
    });
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
