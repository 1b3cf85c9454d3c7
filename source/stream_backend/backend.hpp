// SPDX-License-Identifier: Apache-2.0
// The stream backend's handle types (on ur_common/objects.hpp's) and the helpers every
// file shares, each file's table filler declared with the object it serves
// (docs/architecture.md, "stream backend"; the driver interface is driver_api.hpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "driver_api.hpp"
#include "ordo/logger.hpp"
#include "ordo/slot_cache.hpp"
#include "ordo_so/layer.hpp"
#include "ur_common/objects.hpp"

namespace ordo::stream_backend {

Logger &logger();

#define ORDO_DRV(call)                                                                                                 \
  do {                                                                                                                 \
    ::ordo::stream_backend::status drv_result_ = (call);                                                               \
    if (drv_result_) return ::ordo::stream_backend::to_ur(drv_result_);                                                \
  } while (0)

// Declared before their first use below.
struct Platform;
struct Queue;
struct Context;
struct Event;
class Command;
struct Mem;

// Driver events are recycled per device: a command's event comes from here and goes
// back when the UR event is released (re-recording an event that nobody holds any
// more is safe: waits already issued captured the earlier record).
class EventPool {
public:
  status get(bool timing, event_t *out);
  void put(event_t ev, bool timing);
  ~EventPool() = default;

private:
  ordo::slot_cache<native_event, 8> untimed_slots_; // in front of the list: no lock
  std::mutex mutex_;
  std::vector<event_t> timed_, untimed_;
};

struct Device : ordo::ur_common::device_object<Platform> {
  int native = 0; // the driver's device handle
  int ordinal = 0;
  device_facts facts;
  EventPool events;

  // Events whose native handle was handed out, with the queue and stream they ran on,
  // so that an event made from that handle answers its queue. An entry lives as long
  // as the UR event it came from (which holds the queue).
  struct Exported {
    Queue *queue;
    uint32_t lane;
  };
  std::mutex exported_mutex;
  std::unordered_map<event_t, Exported> exported;

  // The primary context, retained on first use (a context creation or a query that
  // needs one); nullptr with the error in `context_error` when that failed.
  dctx_t context();
  status context_error{};
  // Makes the primary context current on this thread (cheap when it already is).
  status make_current();

  // The device clock for profiling: a timed event recorded at a known host time.
  // Timestamps are base_host_ns + the elapsed time since base_event.
  status time_base(event_t *event, uint64_t *host_ns);
  // A stream for the adapter's own synchronous work (zeroing a pool block now).
  status internal_stream(stream_t *out);

private:
  std::once_flag context_once_;
  std::atomic<dctx_t> primary_{nullptr};
  std::mutex mutex_;
  event_t base_event_ = nullptr;
  uint64_t base_host_ns_ = 0;
  stream_t internal_stream_ = nullptr;
};
ORDO_HANDLE_CHECK(Device);
void install_device_entry_points(ur_dditable_t &t); // device.cpp: urDevice*, urDeviceWaitExp

// Code that runs inside a command built for some stream (a pool hook, a deferred
// event's record) makes `d`'s context current for its own calls and puts the caller's back.
class CurrentFor {
public:
  explicit CurrentFor(Device *d) {
    dctx_t want = d->context();
    drv::get_current(&previous_);
    ok_ = want != nullptr;
    if (ok_ && want != previous_) ok_ = switched_ = !drv::set_current(want);
  }
  ~CurrentFor() {
    if (switched_) drv::set_current(previous_);
  }
  bool ok() const { return ok_; }

private:
  dctx_t previous_ = nullptr;
  bool ok_ = false, switched_ = false;
};

// The driver's devices, in its order.
struct Platform : ordo::ur_common::platform_object<Device> {};
ORDO_HANDLE_CHECK(Platform);

// Host nanoseconds on the clock every timestamp of the adapter uses.
uint64_t host_now_ns();

// ---- the stream-ordered layer's hooks (pool_hooks.cpp) ------------------------------

// Every pool runs on the stream-ordered layer (source/stream_ordered, docs/async-alloc.md):
// the layer owns pool handles, limits, statistics, the pointer registry (pool chunks
// and plain USM) and the ordering knowledge; these hooks give it driver memory
// (device, pinned host and managed chunks: memory classes are {device, kind}, host
// memory is {null, host}), driver events and stream waits.
class PoolHooks final : public ordo::ur_common::pool_hooks_base<Context, Device, Event, Command> {
public:
  using pool_hooks_base::pool_hooks_base;
  ORDO_POOL_HOOKS_OVERRIDES;
  ur_result_t memory_class(ur_usm_type_t kind, ur_device_handle_t device,
                           ordo::stream_ordered::mem_class &out) override;
  ur_result_t pin_host(void *p, size_t size, bool read_only) override;
  void unpin_host(void *p, size_t size) override;
};

// The twelve urUSMPool* entry points of the layer, with this adapter's handle checks.
void install_pool_entry_points(ur_dditable_t &t);
void install_usm_entry_points(ur_dditable_t &t);         // usm.cpp
void install_async_alloc_entry_points(ur_dditable_t &t); // async_alloc.cpp
void install_enqueue_usm_entry_points(ur_dditable_t &t); // enqueue_usm.cpp
void install_ipc_entry_points(ur_dditable_t &t);         // ipc.cpp
void install_virtual_mem_entry_points(ur_dditable_t &t); // virtual_mem.cpp: where the driver has it

// Every context of a device allocates in the device's one primary context.
struct Context : ordo::ur_common::context_object<Device> {
  // The layer's state of this context (pools, pointer registry, ordering knowledge)
  // over its hooks, which outlive it.
  PoolHooks pool_hooks{this};
  std::unique_ptr<ordo::stream_ordered::context_pools> pools;

  // The context's buffers that own their memory (memory.cpp), so that a native
  // handle into one becomes a view of it.
  std::mutex buffers_mutex;
  std::vector<Mem *> buffers;
};
ORDO_HANDLE_CHECK(Context);
void context_hold(Context *ctx);
void context_drop(Context *ctx);
void install_context_entry_points(ur_dditable_t &t); // context.cpp
void install_peer_entry_points(ur_dditable_t &t);    // peer.cpp

// ---- queues and commands ----------------------------------------------------------

// One driver stream of a queue. For the stream-ordered layer each stream is an
// in-order queue with its own identity (ordo::stream_ordered::new_queue_identity(): never used
// by another stream, even after this one is gone). Its lock serialises submission:
// a command's stream operations, its event, its ordering record and its pool call
// (alloc_in_command / free_in_command) happen in one hold, so the layer sees the
// commands of a stream in the order they enter it.
// A driver event that stands for every deferred command of one stream numbered up to
// `seq` (recorded after them in stream order), shared by the events it serves.
struct Mark {
  event_t ev = nullptr;
  uint64_t seq = 0;
  Device *dev = nullptr;
  std::atomic<uint32_t> refs{1};
};
void mark_drop(Mark *m); // the last reference gives the driver event back to the device

// Deferred events (docs/cuda.md, "Deferred events"): a stream-ordered alloc or free
// records no driver event; its event is (stream, number). The stream counts these
// commands (`issued`), knows up to which number they are complete (`completed`:
// advanced by urQueueFinish, host waits and queries that found a later point done),
// and keeps the newest driver event recorded for them (`mark`), made only when a
// host query or another stream needs one.
struct Lane {
  stream_t stream = nullptr;
  const void *identity = nullptr;
  std::mutex mutex;
  uint64_t last_node = 0;             // ordering node of the stream's newest command (under mutex)
  std::atomic<uint64_t> issued{0};    // number of the newest deferred command (written under mutex)
  std::atomic<uint64_t> completed{0}; // every deferred command numbered up to this is complete
  // A leaf lock: held only around the mark, `gone` and driver calls, never while taking
  // another lock of the backend but the device's event pool, so a pool hook (under the
  // pool's mutex and another stream's lock) may take it.
  std::mutex mark_mutex;
  Mark *mark = nullptr; // under mark_mutex
  bool gone = false;    // the queue was released and the stream destroyed (under mark_mutex)
  // The newest command's event when its driver record was put off (docs/cuda.md,
  // "Events recorded late"): set by the holder of `mutex`, recorded and cleared under
  // mark_mutex before the next work goes onto the stream or when someone asks about it.
  std::atomic<Event *> unrecorded{nullptr};
  // Command-less frees (async_alloc.cpp, fast_free) with no work or wait put onto the
  // stream between them stand at one place in it, so they share one release event: the
  // newest one's (a reference of the lane's) while `work_epoch`, bumped by each command
  // that puts work or a wait onto the stream, is still `free_epoch`. Under `mutex`.
  uint64_t work_epoch = 0;
  uint64_t free_epoch = 0;
  Event *free_event = nullptr;
  ~Lane() {
    if (mark) mark_drop(mark);
  }
};
// Records the lane's put-off event now, if it has one (before other work or a wait goes
// onto its stream, or for a question about that event).
status record_pending(Lane &l, Device *dev);
// Raises `completed` to at least `seq`.
inline void lane_complete_to(Lane &l, uint64_t seq) {
  uint64_t c = l.completed.load(std::memory_order_relaxed);
  while (c < seq && !l.completed.compare_exchange_weak(c, seq, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

// Storage for a queue's next events: that of events never handed to the caller (a
// free's release event when the caller asked for none), reused directly since no handle
// of theirs can be named, and that of events retired long ago (ordo/retired_handles.hpp,
// retire_for_reuse), in a few slots without a lock; beyond them storage is freed.
class SpareEvents {
public:
  void *take() { return slots_.take(); }
  // False when full: the caller frees the storage.
  bool put(void *p) { return slots_.put(p); }
  ~SpareEvents() {
    slots_.drain([](void *p) { ::operator delete(p); });
  }

private:
  ordo::slot_cache<void, 16> slots_;
};

// Its lanes are driver streams.
struct Queue : ordo::ur_common::queue_object<Context, Device, Lane> {
  bool owns_streams = true;
  // Only this queue submits to its streams: not the default stream, not a caller's
  // stream, no native handle given out, no implicit sync with the default stream. Then
  // its events may be recorded late (Lane::unrecorded; not when profiling) and its
  // command-less frees may share a release event (Lane::free_event). Under the lanes' locks.
  bool streams_private = false;
  SpareEvents spare_events;

  // The stream a command goes to: on an in-order queue the only one; on an
  // out-of-order queue the stream of a wait-list event from this queue when there
  // is one, otherwise the next in turn.
  uint32_t pick_lane(uint32_t n, const ur_event_handle_t *waits);
};
ORDO_HANDLE_CHECK(Queue);
void queue_hold(Queue *q);
void queue_drop(Queue *q);
void install_queue_entry_points(ur_dditable_t &t); // queue.cpp

// `lane` is the index of `stream` in the queue's lanes.
struct Event : ordo::ur_common::event_object<Queue, Context> {
  Device *dev = nullptr;
  stream_t stream = nullptr;
  event_t done = nullptr;   // recorded after the command
  event_t start = nullptr;  // recorded before it (profiling only)
  bool timed = false;       // `done`/`start` came from the timed pool
  bool pooled = true;       // return the driver events to the device pool on release
  bool owns_native = false; // made from a native handle that is ours to destroy
  bool exported = false;    // its native handle went out (Device::exported)
  uint64_t queued_ns = 0;   // host time of the enqueue call
  uint64_t order_node = 0;  // the command's node in ctx's ordering knowledge (0: none)
  // Deferred (Lane): no driver event yet; `seq` is the command's number on its stream.
  // A recorded event's `seq` is the stream's newest number at its record, so a host
  // wait for it shows those deferred commands complete too.
  bool deferred = false;
  bool internal = false; // never handed to the caller: its storage is reused (SpareEvents)
  bool late = false;     // `done` recorded late (Lane::unrecorded), maybe not yet
  uint64_t seq = 0;
  std::atomic<Mark *> mark{nullptr}; // a deferred event's driver event, once one was needed

  Lane &lane_ref() const { return *queue->lanes[lane]; }
  bool has_work() const { return done || deferred; } // false: nothing to wait for
};
ORDO_HANDLE_CHECK(Event);
void install_event_entry_points(ur_dditable_t &t); // event.cpp
void install_wait_entry_points(ur_dditable_t &t);  // enqueue.cpp: urEnqueueEventsWait*, timestamps

// The driver event a wait for `e` needs in stream order, or null when there is nothing
// to wait for (no device work, or known complete). A deferred event gets one here:
// the stream's newest mark when it covers the command, else one recorded now.
status wait_event_of(Event *e, event_t *out);
// Whether e's command is complete; a deferred event asks the driver only when its
// stream's count does not already say so (then its mark, or the stream when idle).
status poll_event(Event *e, bool *done);
// After a host wait that covered e's command.
void note_complete(Event *e);
// Before e's driver event is waited for, queried or given out: its late record made.
status ensure_recorded(Event *e);

// Checks a wait list: the count/pointer rule and that every entry is an event.
ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *list);

// One enqueued command, the one place every command of the adapter goes through:
// validates the wait list, picks a stream and takes its lock, makes the stream wait
// for the events of other streams, and (when the caller wants an event) records the
// command's events around the work the caller issues in between. finish() records
// the command in the context's ordering knowledge (docs/async-alloc.md, "Rule 1 is
// reachability") with the predecessors the device really enforces: the stream's
// previous command, the wait list, the frees the pool made it wait for.
class Command {
public:
  // `timed` asks for profiling timestamps even on a queue without profiling.
  // `all_lanes` (an out-of-order queue's barrier or wait for everything) holds the
  // lock of every stream of the queue, taken in index order.
  Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out_event,
          bool timed = false, bool all_lanes = false, ordo::ur_common::lane_hint hint = {});
  // A stream-ordered alloc's command, on the lane `hint` names if it names one.
  Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out_event,
          ordo::ur_common::lane_hint hint)
      : Command(q, type, n, waits, out_event, false, false, hint) {}
  ~Command(); // releases the lock(s); an event never handed out is destroyed
  Command(const Command &) = delete;
  Command &operator=(const Command &) = delete;
  ur_result_t status() const { return status_; }
  // The lane's stream, with the device's context made current for the driver calls the
  // caller issues on it (an alloc or free makes it current only when it needs the driver),
  // and the stream's put-off event record made, so that it stays before this work.
  stream_t stream() {
    if (!current_) make_current();
    if (!flushed_) flush_pending();
    return stream_;
  }
  uint32_t lane() const { return lane_; }
  const void *identity() const;
  // Makes the stream wait for `e` too (a pool's internal dependency); `e`'s command
  // becomes a predecessor. False when the driver refuses.
  bool wait_for(Event *e);
  // Waits, from this command's stream, for everything already enqueued on the
  // queue's other streams (all_lanes only).
  ur_result_t join_other_lanes();
  // Makes the queue's other streams wait for this command (all_lanes only).
  ur_result_t order_other_lanes();
  // Records the completion event, the ordering node, and hands the event to the
  // caller; returns `result` when it is an error (and then hands out nothing). The
  // stream lock is released unless `keep_lock` (then the destructor releases it).
  ur_result_t finish(ur_result_t result = UR_RESULT_SUCCESS, bool keep_lock = false);

private:
  static constexpr size_t kMaxPreds = 16; // more only loses reuse
  void add_pred(const Event *e);
  void flush_pending();
  void unlock();
  ur_result_t make_current();

  Queue *queue_;
  ur_command_t type_;
  ur_event_handle_t *out_;
  uint32_t lane_ = 0;
  stream_t stream_ = nullptr;
  Event *event_ = nullptr;
  ur_result_t status_ = UR_RESULT_SUCCESS;
  bool all_lanes_ = false;
  bool barrier_ = false;
  bool current_ = false; // the device's context made current on this thread
  bool flushed_ = false; // the lane's put-off event record made (record_pending)
  size_t locked_ = 0;    // lanes locked: 0, 1 (lane_) or all
  size_t npreds_ = 0;
  uint64_t preds_[kMaxPreds];
};

// Creates an event object (not recorded yet) for `q`; `deferred`: one that never gets a
// driver event of its own (Lane).
ur_result_t event_create(Queue *q, ur_command_t type, bool timed, Event **out, bool deferred = false);
void event_destroy(Event *ev);
// Lets go of a reference to an event that never went to the caller (its storage is then
// reused directly: SpareEvents).
void event_release_internal(Event *ev);
// An internal holder's reference (the layer's, the callback thread's): not counted in
// REFERENCE_COUNT, so the user's extra releases cannot take it.
inline void event_drop(Event *ev) {
  if (ev->drop()) event_destroy(ev);
}

// ---- programs and kernels ----------------------------------------------------------

// A program's image for one device is PTX (NUL-terminated) or cubin.
struct ProgramDevice : ordo::ur_common::program_device<Device, module_t> {
  bool is_ptx = false;
};

struct Program : ordo::ur_common::program_object<Context, ProgramDevice> {
  using PerDevice = ProgramDevice;
  // The module for `dev`, or null when there is none (not built, other device).
  module_t module_for(const Device *dev);
};
ORDO_HANDLE_CHECK(Program);
// The functions of a device's module: as the driver lists them, else as its image
// names them (program.cpp); UNSUPPORTED_FEATURE when neither can.
ur_result_t function_names(Program::PerDevice &pd, std::vector<std::string> &names);
void program_drop(Program *p);
void install_program_entry_points(ur_dditable_t &t); // program.cpp

struct Kernel : ordo::ur_common::kernel_object<Program> {
  std::vector<function_t> functions; // per program device (null: not built there)
  // The <name>_with_offset variants (one more parameter: three size_t), launched
  // when a launch names a global offset; null where the program has none.
  std::vector<function_t> offset_functions;
  std::vector<size_t> param_sizes; // from the driver, or the PTX image
  bool params_known = true;        // false: neither could tell (launches take the arguments' sizes)
  std::atomic<int> dynamic_shared_limit{48 * 1024};

  function_t function_for(const Device *dev) const;
  function_t offset_function_for(const Device *dev) const;
};
ORDO_HANDLE_CHECK(Kernel);
void install_kernel_entry_points(ur_dditable_t &t); // kernel.cpp
void install_launch_entry_points(ur_dditable_t &t); // launch.cpp: urEnqueueKernelLaunchWithArgsExp
int kernel_attr(function_t f, func_attr a);
// The suffix of a kernel's global-offset variant (test/kernels/cuda, docs/cuda.md, docs/hip.md).
constexpr const char *kOffsetSuffix = "_with_offset";
// A work-group shape for a launch that names none: per dimension the largest
// divisor of the global size that fits the kernel's and the device's limits.
void suggest_local_size(const Device *d, function_t f, uint32_t dims, const size_t *gws, size_t *lws);

// ---- memory objects (memory.cpp, enqueue_mem.cpp; docs/cuda.md, "Memory objects") ----

// A buffer, a sub-buffer, or a view made from a native handle. A buffer that owns its
// memory ("root") holds device memory (a one-device context), managed memory (a
// context of several devices with managed memory, so the data follows the device
// that uses it), pinned host memory (UR_MEM_FLAG_ALLOC_HOST_POINTER) or the caller's
// own memory registered with the driver (UR_MEM_FLAG_USE_HOST_POINTER). Sub-buffers
// and views hold their root and address its bytes at `origin`.
struct Mem : ordo::ur_common::mem_object<Mem, Context> {
  enum class Storage { device, managed, host, registered, usm, alias };
  Storage storage = Storage::device;
  Device *home = nullptr; // the device whose context allocated the root's memory
  // Roots only, `mirror`: the host copy maps go through. The caller's memory for
  // USE_HOST_POINTER, the storage itself for host storage, otherwise pinned host
  // memory made at the first map (`own_mirror`) and freed with the buffer.
};
ORDO_HANDLE_CHECK(Mem);
void install_memory_entry_points(ur_dditable_t &t);      // memory.cpp: urMem* of buffers
void install_enqueue_mem_entry_points(ur_dditable_t &t); // enqueue_mem.cpp
// A memory-object kernel argument: the address kernels use for `h` on the queue's
// context; INVALID_MEM_OBJECT for a buffer of another context or another handle kind.
ur_result_t kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *ctx, void **out);

// Fills `count` back-to-back copies of a `size`-byte pattern (enqueue_usm.cpp).
status fill_patterns(uint8_t *dst, const uint8_t *pattern, size_t size, size_t count, stream_t s);

using Adapter = ordo::ur_common::adapter_object; // nothing of its own
using handle_types = ordo::ur_common::handle_types_of<Adapter, Platform, Device, Context, Queue, Program, Command>;
// The adapter's one handle and its platforms (empty when there is no driver).
Adapter *the_adapter();
const std::vector<Platform *> &platforms();
void install_adapter_entry_points(ur_dditable_t &t); // platform.cpp: urAdapter*, urPlatform*

} // namespace ordo::stream_backend
