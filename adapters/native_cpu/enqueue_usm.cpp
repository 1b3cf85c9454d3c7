// SPDX-License-Identifier: Apache-2.0
// USM commands (urEnqueueUSM*) and the pattern fill buffer fills use too.
#include <algorithm>
#include <cstring>
#include <vector>

#include "entry_points.hpp"
#include "context.hpp"
#include "memory.hpp"
#include "queue.hpp"
#include "ur_common/usm_commands.hpp"

namespace ordo::native_cpu {

void fill_pattern(char *dst, size_t bytes, const std::vector<char> &pattern, size_t phase) {
  size_t n = pattern.size();
  if (n == 1) {
    std::memset(dst, pattern[0], bytes);
    return;
  }
  size_t first = std::min(bytes, n);
  for (size_t i = 0; i < first; ++i) dst[i] = pattern[(phase + i) % n];
  if (bytes <= n) return;
  // Doubling copies: each pass copies what is already filled.
  for (size_t done = n; done < bytes;) {
    size_t chunk = std::min(done, bytes - done);
    std::memcpy(dst + done, dst, chunk);
    done += chunk;
  }
}

namespace {

// The checks are shared (ur_common/usm_commands.hpp); the work is host code.
struct UsmCommandHooks {
  using Queue = native_cpu::Queue;
  // finish() submits the work the hook set (prefetch and advice set none: memory is
  // already where the CPU reads it).
  struct Command {
    Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent)
        : builder(*q, type), out(phEvent), checked(builder.set_wait_list(n, waits)) {}
    ur_result_t status() const { return checked; }
    ur_result_t finish(ur_result_t r) { return r ? r : builder.submit(out); }
    CommandBuilder builder;
    ur_event_handle_t *out;
    ur_result_t checked;
  };
  static constexpr bool copies_overlapping = true; // as if through a buffer (memmove)

  // Against the allocations the pointers fall in (not system memory).
  static ur_result_t check_usm(Queue *q, const void *p, size_t bytes) { return check_usm_range(*q->context, p, bytes); }
  static ur_result_t check_hint_range(Queue *q, const void *p, size_t bytes) { return check_usm(q, p, bytes); }

  static ur_result_t fill(Command &cmd, Queue *, void *dst, const uint8_t *pattern, size_t patternSize, size_t size) {
    cmd.builder.set_work(
        make_work([dst = static_cast<char *>(dst), size, p = std::vector<char>(pattern, pattern + patternSize)] {
          fill_pattern(dst, size, p);
          return UR_RESULT_SUCCESS;
        }));
    return UR_RESULT_SUCCESS;
  }
  // The pattern runs on across rows, as if the rows were contiguous.
  static ur_result_t fill_2d(Command &cmd, Queue *, uint8_t *dst, size_t pitch, const uint8_t *pattern,
                             size_t patternSize, size_t width, size_t height) {
    cmd.builder.set_work(make_work([dst = reinterpret_cast<char *>(dst), pitch, width, height,
                                    p = std::vector<char>(pattern, pattern + patternSize)] {
      for (size_t row = 0; row < height; ++row) fill_pattern(dst + row * pitch, width, p, (row * width) % p.size());
      return UR_RESULT_SUCCESS;
    }));
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t prefetch(Command &, Queue *, const void *, size_t, ur_usm_migration_flags_t) {
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t advise(Command &, Queue *, const void *, size_t, ur_usm_advice_flags_t) {
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t memcpy(Queue *q, bool blocking, void *dst, const void *src, size_t size, uint32_t n,
                            const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
    return submit_work(*q, UR_COMMAND_USM_MEMCPY, n, waits, phEvent, blocking,
                       [dst, src, size] { std::memmove(dst, src, size); });
  }
  static ur_result_t memcpy_2d(Queue *q, bool blocking, void *pDst, size_t dstPitch, const void *pSrc, size_t srcPitch,
                               size_t width, size_t height, uint32_t n, const ur_event_handle_t *waits,
                               ur_event_handle_t *phEvent) {
    char *dst = static_cast<char *>(pDst);
    const char *src = static_cast<const char *>(pSrc);
    return submit_work(*q, UR_COMMAND_USM_MEMCPY_2D, n, waits, phEvent, blocking,
                       [dst, dstPitch, src, srcPitch, width, height] {
                         for (size_t row = 0; row < height; ++row)
                           std::memmove(dst + row * dstPitch, src + row * srcPitch, width);
                       });
  }
};

} // namespace

void install_enqueue_usm_entry_points(ur_dditable_t &t) { ordo::ur_common::usm_commands<UsmCommandHooks>::install(t); }

} // namespace ordo::native_cpu
