// SPDX-License-Identifier: Apache-2.0
// The Level Zero adapter's handle types (on ur_common/objects.hpp's) and the helpers
// every file shares, each file's table filler declared with the object it serves.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ordo/logger.hpp"
#include "ordo_so/layer.hpp"
#include "ur_common/objects.hpp"
#include "ze.hpp"

namespace ordo::level_zero {

Logger &logger();

#define ORDO_ZE(call)                                                                                                  \
  do {                                                                                                                 \
    ze_result_t ze_result_ = (call);                                                                                   \
    if (ze_result_ != ZE_RESULT_SUCCESS) return ::ordo::level_zero::map_error(ze_result_);                             \
  } while (0)

// Declared before their first use below.
struct Platform;
struct Context;
struct Event;
class Command;
struct Queue;
struct Mem;

// Properties read once at discovery.
struct DeviceFacts {
  ze_device_properties_t props{};
  ze_device_compute_properties_t compute{};
  ze_device_module_properties_t module{};
  ze_device_memory_access_properties_t access{};
  uint64_t total_mem = 0;
  uint64_t cache_size = 0;
  uint32_t fill_pattern_max = 4;
  uint32_t compute_ordinal = 0; // command queue group used for every list
};

struct Device : ordo::ur_common::device_object<Platform> {
  ze_device_handle_t ze = nullptr;
  DeviceFacts facts;
};
ORDO_HANDLE_CHECK(Device);
void install_device_entry_points(ur_dditable_t &t); // device.cpp

// One Level Zero driver.
struct Platform : ordo::ur_common::platform_object<Device> {
  ze_driver_handle_t driver = nullptr;
  ze_api_version_t api_version = ZE_API_VERSION_1_0;
  uint32_t driver_version = 0;
};
ORDO_HANDLE_CHECK(Platform);

uint64_t host_now_ns();

// A Level Zero event from a context's recycled event pools.
struct ZeEvent {
  ze_event_handle_t ev = nullptr;
  bool timed = false;
};

// Level Zero events are made in pools of kEventsPerPool and recycled: an event goes
// back (reset) once its UR event is gone, which happens only after every command that
// waits for it has completed (Lane keeps those references), so no wait ever sees a
// reused event.
class EventPools {
public:
  explicit EventPools(Context *ctx) : ctx_(ctx) {}
  ~EventPools() { clear(); }
  // Destroys every event and pool (the context is going).
  void clear();
  ur_result_t get(bool timed, ZeEvent &out);
  void put(const ZeEvent &e);

private:
  static constexpr uint32_t kEventsPerPool = 256;
  Context *ctx_;
  std::mutex mutex_;
  std::vector<ze_event_pool_handle_t> pools_;
  std::vector<ze_event_handle_t> all_;
  std::vector<ze_event_handle_t> free_[2]; // untimed, timed
};

// ---- the stream-ordered layer's hooks (pool_hooks.cpp) ------------------------------

class PoolHooks final : public ordo::ur_common::pool_hooks_base<Context, Device, Event, Command> {
public:
  using pool_hooks_base::pool_hooks_base;
  ORDO_POOL_HOOKS_OVERRIDES;
};

// Driver memory of one kind (zeMemAllocDevice/Host/Shared) and its free.
ze_result_t alloc_memory(Context *ctx, ur_usm_type_t kind, Device *dev, size_t size, size_t align, void **out);
ze_result_t free_memory(Context *ctx, void *p);
// The region [p, p + bytes) of a USM command: INVALID_SIZE past the allocation of this
// context that holds p (or wrapping), INVALID_MEM_OBJECT in another context's memory.
ur_result_t check_usm(const Context *ctx, const void *p, size_t bytes);
void install_pool_entry_points(ur_dditable_t &t);        // pool_hooks.cpp: the twelve urUSMPool*
void install_usm_entry_points(ur_dditable_t &t);         // usm.cpp
void install_async_alloc_entry_points(ur_dditable_t &t); // async_alloc.cpp
void install_enqueue_usm_entry_points(ur_dditable_t &t); // enqueue_usm.cpp

// A Level Zero context over the devices of one driver.
struct Context : ordo::ur_common::context_object<Device> {
  Platform *platform = nullptr;
  ze_context_handle_t ze = nullptr;
  EventPools events{this};

  PoolHooks pool_hooks{this};
  std::unique_ptr<ordo::stream_ordered::context_pools> pools;

  // The adapter's live events by their Level Zero event, so that an event made from a
  // native handle of ours knows its queue and keeps the original (and its Level Zero
  // event) alive.
  std::mutex native_mutex;
  std::unordered_map<ze_event_handle_t, Event *> events_by_native;

  // The queues the program holds, from urQueueCreate to the last urQueueRelease (which
  // finishes their work first): urUSMFree waits for their commands (wait_for_queues).
  std::mutex queues_mutex;
  std::vector<Queue *> queues;

  // The root buffers with bytes of their own (memory.cpp), so that a native handle
  // inside one is traced back to it.
  std::mutex buffers_mutex;
  std::vector<Mem *> buffers;
  // A synchronous immediate list for copies at buffer creation (copy_now), made at
  // the first one and destroyed with the context.
  std::mutex copy_mutex;
  ze_command_list_handle_t copy_list = nullptr;
};
ORDO_HANDLE_CHECK(Context);
void context_hold(Context *ctx);
void context_drop(Context *ctx);
void install_context_entry_points(ur_dditable_t &t); // context.cpp

// Waits until every command enqueued so far on a queue of `ctx` has completed
// (urUSMFree of a plain allocation, docs/level-zero.md).
ur_result_t wait_for_queues(Context *ctx);
// True on the threads that run the program's code for the adapter (host tasks, event
// callbacks): a wait there for the context's commands may wait for the one running it.
extern thread_local bool running_user_code;

// ---- queues and commands ----------------------------------------------------------

// One immediate command list of a queue: an in-order queue for the stream-ordered
// layer, with an identity of its own. Every command on it signals an event of its own
// and waits for the list's previous command (Level Zero lists need not run in order
// without that). `inflight` keeps each command's event and the events it waits for
// until it has completed; `mutex` serialises submission (command, event, ordering
// record and pool call in one hold).
//
// Queues made from a native handle share the list's lock with every other lane over
// that list (Level Zero forbids appends to one list from two threads at once): the
// lock lives in `list_lock`, shared through the registry of queue.cpp.
struct Lane {
  explicit Lane(std::shared_ptr<std::mutex> lock = std::make_shared<std::mutex>())
      : list_lock(std::move(lock)), mutex(*list_lock) {}
  ze_command_list_handle_t list = nullptr;
  bool owns_list = true; // false: a native handle not handed over, never destroyed here
  const void *identity = nullptr;
  std::shared_ptr<std::mutex> list_lock;
  std::mutex &mutex;
  uint64_t last_node = 0;
  Event *last = nullptr; // the newest command's event (a reference)
  struct InFlight {
    Event *own;
    std::vector<Event *> held;
    std::vector<Mem *> mems; // the buffers the command uses (a holder each)
  };
  std::deque<InFlight> inflight;
  // Lets go of the references of completed commands (under mutex).
  void sweep();
};

// Its lanes are immediate command lists.
struct Queue : ordo::ur_common::queue_object<Context, Device, Lane> {
  // In-order: the only list. Out-of-order: the list of a wait-list event of this
  // queue when there is one (dependency affinity), otherwise the next in turn.
  uint32_t pick_lane(uint32_t n, const ur_event_handle_t *waits);
  // Waits for every command enqueued so far and drops their references.
  ur_result_t finish_all();
};
ORDO_HANDLE_CHECK(Queue);
void queue_hold(Queue *q);
void queue_drop(Queue *q);
void install_queue_entry_points(ur_dditable_t &t); // queue.cpp

struct Event : ordo::ur_common::event_object<Queue, Context> {
  ZeEvent ze;
  bool pooled = true;       // return `ze` to the context's pools
  bool owns_native = false; // made from a native handle that is ours to destroy
  uint64_t queued_ns = 0;
  uint64_t order_node = 0;
  // Host memory a command reads from after its enqueue returned (a fill pattern
  // spelled out): freed with the event, which outlives the command.
  void *staging = nullptr;
  Event *origin = nullptr; // made from the native handle of this event (a reference)
  // Made from a null native handle: `ze` is a signalled event of the context's pools,
  // never handed out, so that lists wait for it like any other (event.cpp, adopt_native).
  bool null_native = false;
  // Callbacks set and not yet run to their end: they may query the event after the
  // program released it, so the handle stays valid for them (unwrap_event).
  std::atomic<uint32_t> callbacks_due{0};
  bool complete() const;
};
ORDO_HANDLE_CHECK(Event);
void install_event_entry_points(ur_dditable_t &t); // event.cpp
void install_wait_entry_points(ur_dditable_t &t);  // enqueue.cpp: urEnqueueEventsWait*

// An event the program may still name: a live event of this adapter with a reference of
// the user's left, or with callbacks due (they may query it). An event the user has
// released all of is refused (INVALID_EVENT) even while a list still holds it: the
// handle is stale for the program.
inline ur_result_t unwrap_event(ur_event_handle_t handle, Event *&out) {
  if (ur_result_t r = ordo::unwrap(handle, out)) return r;
  if (out->count() == 0 && out->callbacks_due.load(std::memory_order_acquire) == 0) {
    out = nullptr;
    return UR_RESULT_ERROR_INVALID_EVENT;
  }
  return UR_RESULT_SUCCESS;
}
// `Event *var` from `handle` through unwrap_event, or return its refusal.
#define ORDO_L0_UNWRAP_EVENT(var, handle)                                                                              \
  Event *var = nullptr;                                                                                                \
  do {                                                                                                                 \
    if (ur_result_t unwrap_result_ = ::ordo::level_zero::unwrap_event(handle, var)) return unwrap_result_;             \
  } while (0)
// A wait list of the program's events: INVALID_EVENT_WAIT_LIST for a count without a
// list (or the other way round) and for any event unwrap_event refuses.
ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *list);
void event_destroy(Event *ev);
// An internal holder's reference (a list, a command, a pool, a thread): never counted
// in REFERENCE_COUNT, so the user's extra releases cannot take it.
inline void event_drop(Event *e) {
  if (e->drop()) event_destroy(e);
}
// One of the user's references (or the creation reference of an event never handed out).
inline void event_release(Event *e) {
  if (ordo::release_reference(e) == ordo::released::last_holder) event_destroy(e);
}

// One enqueued command, the one place every command goes through: checks the wait
// list, picks a list and takes its lock, makes the command's event and collects the
// events it must wait for (the wait list, the list's previous command, the pool's
// internal dependencies). The caller issues exactly one append that signals
// signal() after waiting for waits(); finish() records the command in the context's
// ordering knowledge and hands the event out.
class Command {
public:
  Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out_event,
          bool all_lanes = false, ordo::ur_common::lane_hint hint = {});
  // A stream-ordered alloc's command, on the list `hint` names if it names one.
  Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out_event,
          ordo::ur_common::lane_hint hint)
      : Command(q, type, n, waits, out_event, false, hint) {}
  ~Command();
  Command(const Command &) = delete;
  Command &operator=(const Command &) = delete;
  ur_result_t status() const { return status_; }
  ze_command_list_handle_t list() const;
  const void *identity() const;
  uint32_t lane() const { return lane_; }
  Event *event() const { return event_; }
  ze_event_handle_t signal() const { return event_->ze.ev; }
  uint32_t num_waits() const { return uint32_t(ze_waits_.size()); }
  ze_event_handle_t *waits() { return ze_waits_.empty() ? nullptr : ze_waits_.data(); }
  // Makes the command wait for `e` too (a pool's internal dependency).
  bool wait_for(Event *e);
  // A stream-ordered alloc with no wait list and no event asked for starts as no
  // command at all (nothing to wait for, nothing to signal: the list's next command
  // waits for the newest one anyway). This makes it a command, before its work or waits.
  ur_result_t issue_as_command();
  // On an out-of-order queue (all_lanes): waits for every other list's newest command.
  void join_other_lanes();
  // On an out-of-order queue (all_lanes): finish() makes every other list wait for
  // this command before its next one (a barrier).
  void order_other_lanes();
  // Issues a barrier as the command's work (commands with no work of their own).
  ur_result_t append_barrier();
  // Keeps `m` alive until the command has completed (a buffer released meanwhile).
  void hold(Mem *m);
  // Records, hands out the event and unlocks (unless keep_lock); an error result is
  // returned as is and nothing is handed out.
  ur_result_t finish(ur_result_t result = UR_RESULT_SUCCESS, bool keep_lock = false);

private:
  static constexpr size_t kMaxPreds = 16;
  void add_wait(Event *e);
  // An event of this queue's context that completes once `foreign` (of another one) has.
  ur_result_t proxy_event(Event *foreign, Event **out);
  void unlock();

  Queue *queue_;
  ur_command_t type_;
  ur_event_handle_t *out_;
  uint32_t lane_ = 0;
  Event *event_ = nullptr;
  ur_result_t status_ = UR_RESULT_SUCCESS;
  bool all_lanes_ = false;
  bool barrier_ = false;
  bool elided_ = false; // no command (yet): issue_as_command()
  size_t locked_ = 0;
  std::vector<Event *> held_;
  std::vector<Mem *> mems_;
  std::vector<ze_event_handle_t> ze_waits_;
  size_t npreds_ = 0;
  uint64_t preds_[kMaxPreds];
};

ur_result_t event_create(Queue *q, ur_command_t type, bool timed, Event **out);
// The command's work done by `work` on a host thread once its waits are met; the
// thread then signals the command's event (host_task.cpp). The caller calls finish().
ur_result_t append_host_work(Command &cmd, std::function<void()> work);
void install_host_task_entry_points(ur_dditable_t &t); // host_task.cpp: urEnqueueHostTaskExp

// ---- programs and kernels ----------------------------------------------------------

// Per device, a Level Zero module.
struct Program : ordo::ur_common::program_object<Context, ordo::ur_common::program_device<Device, ze_module_handle_t>> {
  using PerDevice = ordo::ur_common::program_device<Device, ze_module_handle_t>;
  ze_module_handle_t module_for(const Device *dev);
};
ORDO_HANDLE_CHECK(Program);
void program_drop(Program *p);
void install_program_entry_points(ur_dditable_t &t); // program.cpp

struct Kernel : ordo::ur_common::kernel_object<Program> {
  std::vector<ze_kernel_handle_t> kernels; // per program device (null: not built there)
  ze_kernel_properties_t props{};
  // Launch state lives in the Level Zero kernel (arguments, group size, offset); the
  // lock keeps one launch's settings and append together.
  std::mutex mutex;
  ze_kernel_handle_t kernel_for(const Device *dev) const;
};
ORDO_HANDLE_CHECK(Kernel);
void install_kernel_entry_points(ur_dditable_t &t); // kernel.cpp
void install_launch_entry_points(ur_dditable_t &t); // launch.cpp: urEnqueueKernelLaunchWithArgsExp

// ---- memory objects (memory.cpp, enqueue_mem.cpp) ----------------------------------

// A buffer or sub-buffer. A root's bytes are Level Zero memory (device memory in a
// one-device context, host memory otherwise or with ALLOC_HOST_POINTER), the caller's
// memory for USE_HOST_POINTER (imported when the driver can, docs/level-zero.md), or
// a USM allocation made a buffer from its native handle. A sub-buffer is its root's
// bytes at an offset and holds its root.
struct Mem : ordo::ur_common::mem_object<Mem, Context> {
  // What a root's bytes are, and so how they go: device/host/shared (zeMemFree),
  // imported (the caller's, import released), usm (urUSMFree'd if owned), alias
  // (nothing to free: a sub-buffer, a view, USM of the caller's).
  enum class Storage { device, host, shared, imported, usm, alias };
  Storage storage = Storage::alias;

  // Roots only: whether the host may use `ptr` itself (host, shared or the caller's
  // memory): then a map is the bytes themselves. Otherwise maps go through `mirror`,
  // host memory made at the first map (own_mirror) or the caller's memory for
  // USE_HOST_POINTER when it could not be imported.
  bool host_visible = false;
};
ORDO_HANDLE_CHECK(Mem);
void mem_drop(Mem *m);
void install_memory_entry_points(ur_dditable_t &t);      // memory.cpp: urMem*
void install_enqueue_mem_entry_points(ur_dditable_t &t); // enqueue_mem.cpp: urEnqueueMemBuffer*, urEnqueueMemUnmap
// A kernel's buffer argument: the address the kernel gets (null for a null handle);
// INVALID_MEM_OBJECT for another context's or a foreign handle.
ur_result_t kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *ctx, Mem **mem, void **out);
// Copies `size` bytes now on the context's synchronous list (buffer creation).
ur_result_t copy_now(Context *ctx, Device *dev, void *dst, const void *src, size_t size);
// Appends a fill of `len` bytes at `dst` with the pattern starting `phase` bytes into
// it, without a signal (enqueue_usm.cpp).
ur_result_t append_fill(Command &cmd, void *dst, const uint8_t *pattern, size_t size, size_t phase, size_t len,
                        size_t max_pattern);

// The adapter handle (one per library), the handle types ur_common's templates read,
// and discovery: a platform per Level Zero driver with a device.
using Adapter = ordo::ur_common::adapter_object;
using handle_types = ordo::ur_common::handle_types_of<Adapter, Platform, Device, Context, Queue, Program, Command>;
Adapter *the_adapter();
const std::vector<Platform *> &platforms();
void install_adapter_entry_points(ur_dditable_t &t); // platform.cpp: urAdapter*, urPlatform*

} // namespace ordo::level_zero
