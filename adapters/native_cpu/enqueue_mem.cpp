// SPDX-License-Identifier: Apache-2.0
// Buffer commands (urEnqueueMemBuffer*, urEnqueueMemUnmap): scheduler commands that hold
// their buffers until they have run. A buffer is host memory: read, write and copy copy
// rectangles (one row for the plain ones), a map is the buffer's bytes, and unmap has
// nothing to write back.
#include <algorithm>
#include <cstring>
#include <vector>

#include "context.hpp"
#include "entry_points.hpp"
#include "memory.hpp"
#include "ordo/rect.hpp"
#include "queue.hpp"
#include "ur_common/buffer_commands.hpp"

namespace ordo::native_cpu {

namespace {

using RectSide = ordo::rect_side;

void copy_rect(char *dst, const RectSide &ds, const char *src, const RectSide &ss, const ur_rect_region_t &region) {
  for (size_t z = 0; z < region.depth; ++z)
    for (size_t y = 0; y < region.height; ++y)
      std::memcpy(dst + ds.first + z * ds.slice + y * ds.row, src + ss.first + z * ss.slice + y * ss.row, region.width);
}

// A rectangular copy as a command. Overlapping sides (within one buffer, or host memory
// that is the buffer's own) go through a staging copy: as if the source were read whole
// before any write.
ur_result_t submit_rect(Queue &q, ur_command_t type, bool blocking, char *dst, const RectSide &ds, const char *src,
                        const RectSide &ss, const ur_rect_region_t &region, std::vector<Ref<Mem>> held,
                        uint32_t numEvents, const ur_event_handle_t *phEvents, ur_event_handle_t *phEvent) {
  CommandBuilder cmd(q, type);
  if (ur_result_t r = cmd.set_wait_list(numEvents, phEvents)) return r;
  std::vector<char> staging;
  if (dst + ds.first < src + ss.end && src + ss.first < dst + ds.end)
    staging.resize(region.width * region.height * region.depth); // may throw: nothing enqueued yet
  cmd.set_work(make_work([dst, ds, src, ss, region, held = std::move(held), staging = std::move(staging)]() mutable {
    if (staging.empty()) {
      copy_rect(dst, ds, src, ss, region);
    } else {
      RectSide tight;
      tight.row = region.width;
      tight.slice = region.width * region.height;
      copy_rect(staging.data(), tight, src, ss, region);
      copy_rect(dst, ds, staging.data(), tight, region);
    }
    return UR_RESULT_SUCCESS;
  }));
  return cmd.submit(phEvent, blocking);
}

// One row of `size` bytes at `first`: the plain read, write and copy.
RectSide row_at(size_t first, size_t size) { return RectSide{first, size, size, first + size}; }

// The checks and the map records are shared (ur_common/buffer_commands.hpp).
struct BufferHooks {
  using Queue = native_cpu::Queue;
  using Mem = native_cpu::Mem;
  static constexpr bool own_context_only = true; // a buffer of another context is refused

  static ur_result_t queue_and_buffer(ur_queue_handle_t hQueue, ur_mem_handle_t hMem, Queue *&q, Mem *&m) {
    if (ur_result_t r = registry_unwrap(hQueue, q)) return r;
    if (ur_result_t r = registry_unwrap(hMem, m)) return r;
    return m->context != q->context ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_SUCCESS;
  }
  static constexpr auto check_wait_list = native_cpu::check_wait_list;
  // A sub-buffer's bytes are its parent's from its origin (the overlap rule of copies).
  static ordo::ur_common::buffer_place place(Mem *m) {
    if (m->sub_buffer) return {m->parent, static_cast<size_t>(m->data - m->parent->data)};
    return {m, 0};
  }
  static ur_result_t read(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, void *dst, bool, uint32_t n,
                          const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit_rect(*q, UR_COMMAND_MEM_BUFFER_READ, blocking, static_cast<char *>(dst), row_at(0, size), m->data,
                       row_at(offset, size), {size, 1, 1}, {Ref<Mem>(m)}, n, waits, phEvent);
  }
  static ur_result_t write(Queue *q, Mem *m, bool blocking, size_t offset, size_t size, const void *src, bool,
                           uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit_rect(*q, UR_COMMAND_MEM_BUFFER_WRITE, blocking, m->data, row_at(offset, size),
                       static_cast<const char *>(src), row_at(0, size), {size, 1, 1}, {Ref<Mem>(m)}, n, waits, phEvent);
  }
  static ur_result_t copy(Queue *q, Mem *src, Mem *dst, size_t srcOffset, size_t dstOffset, size_t size, bool,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit_rect(*q, UR_COMMAND_MEM_BUFFER_COPY, false, dst->data, row_at(dstOffset, size), src->data,
                       row_at(srcOffset, size), {size, 1, 1}, {Ref<Mem>(src), Ref<Mem>(dst)}, n, waits, phEvent);
  }
  static ur_result_t fill(Queue *q, Mem *m, const void *pPattern, size_t patternSize, size_t offset, size_t size,
                          uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    const char *pat = static_cast<const char *>(pPattern);
    return submit_work(*q, UR_COMMAND_MEM_BUFFER_FILL, n, waits, phEvent, false,
                       [buffer = Ref<Mem>(m), offset, size, pattern = std::vector<char>(pat, pat + patternSize)] {
                         fill_pattern(buffer->data + offset, size, pattern);
                       });
  }
  static ur_result_t host_rect(Queue *q, Mem *m, ur_command_t type, bool blocking, const RectSide &bs, uint8_t *host,
                               const RectSide &hs, const ur_rect_region_t &region, uint32_t n,
                               const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    char *h = reinterpret_cast<char *>(host);
    if (type == UR_COMMAND_MEM_BUFFER_READ_RECT)
      return submit_rect(*q, type, blocking, h, hs, m->data, bs, region, {Ref<Mem>(m)}, n, waits, phEvent);
    return submit_rect(*q, type, blocking, m->data, bs, h, hs, region, {Ref<Mem>(m)}, n, waits, phEvent);
  }
  static ur_result_t copy_rect(Queue *q, Mem *src, const RectSide &ss, Mem *dst, const RectSide &ds,
                               const ur_rect_region_t &region, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    return submit_rect(*q, UR_COMMAND_MEM_BUFFER_COPY_RECT, false, dst->data, ds, src->data, ss, region,
                       {Ref<Mem>(src), Ref<Mem>(dst)}, n, waits, phEvent);
  }
  // A map is the buffer's own bytes, returned at once; its command (and a blocking call)
  // completes when the wait list and queue order let the caller use them.
  static ur_result_t map_host(Mem *m, size_t offset, uint8_t *&host, bool &direct) {
    host = reinterpret_cast<uint8_t *>(m->data + offset);
    direct = true;
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t map(Queue *q, Mem *, bool blocking, uint8_t *, size_t, size_t, bool, uint32_t n,
                         const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return ordered(*q, UR_COMMAND_MEM_BUFFER_MAP, blocking, n, waits, phEvent);
  }
  static ur_result_t unmap(Queue *q, Mem *, const Mem::Mapping &, uint32_t n, const ur_event_handle_t *waits,
                           ur_event_handle_t *phEvent) {
    return ordered(*q, UR_COMMAND_MEM_UNMAP, false, n, waits, phEvent);
  }
  // A command with nothing to do but its place in the order; the wait list is checked
  // already. Guarded: the caller strikes (or restores) the map record on an error.
  static ur_result_t ordered(Queue &q, ur_command_t type, bool blocking, uint32_t n, const ur_event_handle_t *waits,
                             ur_event_handle_t *phEvent) {
    return guarded([&] {
      CommandBuilder cmd(q, type);
      cmd.set_checked_wait_list(n, waits);
      return cmd.submit(phEvent, blocking);
    });
  }
};

} // namespace

void install_enqueue_mem_entry_points(ur_dditable_t &t) { ordo::ur_common::buffer_commands<BufferHooks>::install(t); }

} // namespace ordo::native_cpu
