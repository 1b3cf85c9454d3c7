// Stream-ordered allocation: urEnqueueUSM{Device,Shared,Host}AllocExp and
// urEnqueueUSMFreeExp on the stream-ordered layer (docs/async-alloc.md, docs/cuda.md),
// through the shared entry points of ur_common/async_alloc.hpp.
//
// Each driver stream is an in-order queue for the layer. Reuse rule 3 becomes a stream
// wait of the alloc's stream on the free's event; a zero-initialising pool's alloc
// zeroes the block on its stream (a byte memset).
#include "backend.hpp"
#include "entry_points.hpp"
#include "ur_common/async_alloc.hpp"

namespace ordo::sb {

namespace {

struct async_hooks : handle_types {
  static ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *w) { return sb::check_wait_list(n, w); }
  static ur_result_t alloc_work(Command &cmd, const ordo::so::allocation &block) {
    if (!block.needs_zero) return UR_RESULT_SUCCESS;
    return to_ur(drv::memset_8(block.ptr, 0, block.size, cmd.stream()));
  }
  // The event recorded on the stream orders the free: nothing else to issue.
  static ur_result_t free_work(Command &) { return UR_RESULT_SUCCESS; }
  static void release_event(ur_event_handle_t h) {
    auto *ev = reinterpret_cast<Event *>(h);
    if (ev->release()) event_destroy(ev);
  }
  // Dependency affinity for allocs: an alloc with no wait list goes to the stream of
  // the queue's newest free when that block would serve it (at least the size, at
  // most twice). There the pool hands the block over in stream order (rule 1): no
  // question about the free's event, no wait across streams; round robin instead put
  // each round of alloc -> kernel -> free on the next stream, behind a cross-stream
  // wait for the previous round's free.
  static ordo::uc::lane_hint alloc_lane(Queue *q, size_t size, uint32_t n) {
    if (n || q->lanes.size() == 1) return {};
    const uint64_t v = q->newest_free.load(std::memory_order_relaxed);
    const uint64_t lane = v & 0xff, bytes = v >> 8;
    const uint64_t need = (uint64_t(size) + 63) & ~uint64_t(63);
    if (!lane || bytes < need || bytes / 2 > need) return {};
    return {uint32_t(lane - 1)};
  }
  static void freed_on(Queue *q, const Command &cmd, size_t block_size) {
    if (q->lanes.size() > 1 && cmd.lane() < 0xff)
      q->newest_free.store((uint64_t(block_size) << 8) | (cmd.lane() + 1), std::memory_order_relaxed);
  }
};

} // namespace

void install_async_alloc_entry_points(ur_dditable_t &t) { ordo::uc::async_alloc<async_hooks>::install(t); }

} // namespace ordo::sb
