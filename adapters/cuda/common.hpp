// The CUDA adapter's handle types and the helpers every file shares.
//
// Every handle derives from Object (ordo::HandleBase first, so a loader finds the
// dispatch table in the first word) and carries a Tag right after it, so an entry
// point can refuse a handle of the wrong kind instead of misreading it.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver.hpp"
#include "ordo/handle.hpp"
#include "ordo/logger.hpp"
#include "ur_ddi.h"

namespace ordo::cuda {

Logger &logger();

enum class Tag : uint32_t {
  dead = 0,
  adapter = 0x0cda0001,
  platform,
  device,
  context,
  queue,
  event,
  program,
  kernel,
  pool,
};

struct Object : HandleBase {
  Tag tag;
  explicit Object(Tag t);
};

// Objects that others keep alive: one holder stands for all of the user's
// references, every internal holder (a queue's context, an event's queue, a live
// allocation's pool) adds one. The object is destroyed when the last one drops.
struct Lifetime {
  std::atomic<uint32_t> holders{1};
  void hold() { holders.fetch_add(1, std::memory_order_relaxed); }
  bool drop() { return holders.fetch_sub(1, std::memory_order_acq_rel) == 1; }
};

// Resolves a handle to the adapter object it must be: null gives
// INVALID_NULL_HANDLE, a handle of another kind gives T::kInvalid.
template <class T, class H> inline ur_result_t unwrap(H handle, T *&out) {
  out = reinterpret_cast<T *>(handle);
  if (!handle) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  return out->tag == T::kTag ? UR_RESULT_SUCCESS : T::kInvalid;
}

#define ORDO_UNWRAP(Type, var, handle)                                                 \
  Type *var = nullptr;                                                                 \
  do {                                                                                 \
    ur_result_t unwrap_result_ = ::ordo::cuda::unwrap(handle, var);                    \
    if (unwrap_result_ != UR_RESULT_SUCCESS) return unwrap_result_;                    \
  } while (0)

#define ORDO_CU(call)                                                                  \
  do {                                                                                 \
    CUresult cu_result_ = (call);                                                      \
    if (cu_result_ != CUDA_SUCCESS) return ::ordo::cuda::map_error(cu_result_);        \
  } while (0)

struct Platform;
struct Device;
struct Context;
struct Queue;
struct Event;
struct Program;
struct Kernel;
struct Pool;
class CorePool;

struct Adapter : Object {
  static constexpr Tag kTag = Tag::adapter;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_ARGUMENT;
  Adapter() : Object(Tag::adapter) {}
};
ORDO_HANDLE_CHECK(Adapter);

// CUevents are recycled per device: a command's event comes from here and goes
// back when the UR event is released (re-recording an event that nobody holds any
// more is safe: waits already issued captured the earlier record).
class EventPool {
public:
  CUresult get(bool timing, CUevent *out);
  void put(CUevent ev, bool timing);
  ~EventPool() = default;

private:
  std::mutex mutex_;
  std::vector<CUevent> timed_, untimed_;
};

// Device attributes read once at discovery (no context needed for these).
struct DeviceFacts {
  std::string name;
  std::string pci_address;
  uint8_t uuid[16] = {};
  size_t total_mem = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0, warp_size = 32;
  int max_threads_per_block = 0, block_dim[3] = {}, grid_dim[3] = {};
  int shared_per_block = 0, shared_per_block_optin = 0, regs_per_block = 0;
  int clock_khz = 0, mem_clock_khz = 0, bus_width = 0, l2_size = 0, const_mem = 0;
  int ecc = 0, integrated = 0, managed = 0, concurrent_managed = 0, pageable_access = 0;
  int host_native_atomics = 0, cooperative = 0, memory_pools = 0, host_memory_pools = 0;
  uint32_t pci_device_id = 0;
};

struct Device : Object {
  static constexpr Tag kTag = Tag::device;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_DEVICE;
  Device() : Object(Tag::device) {}

  Platform *platform = nullptr;
  CUdevice cu = 0;
  int ordinal = 0;
  DeviceFacts facts;
  EventPool events;

  // The primary context, retained on first use (a context creation or a query that
  // needs one); nullptr with the error in `context_error` when that failed.
  CUcontext context();
  CUresult context_error = CUDA_SUCCESS;
  // Makes the primary context current on this thread (cheap when it already is).
  CUresult make_current();

  // The device clock for profiling: a timed event recorded at a known host time.
  // Timestamps are base_host_ns + the elapsed time since base_event.
  CUresult time_base(CUevent *event, uint64_t *host_ns);
  // A stream for the adapter's own synchronous work (sync pool allocations, frees).
  CUresult internal_stream(CUstream *out);

private:
  std::once_flag context_once_;
  std::atomic<CUcontext> primary_{nullptr};
  std::mutex mutex_;
  CUevent base_event_ = nullptr;
  uint64_t base_host_ns_ = 0;
  CUstream internal_stream_ = nullptr;
};
ORDO_HANDLE_CHECK(Device);

struct Platform : Object {
  static constexpr Tag kTag = Tag::platform;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_PLATFORM;
  Platform() : Object(Tag::platform) {}
  std::vector<Device *> devices;
};
ORDO_HANDLE_CHECK(Platform);

// Host nanoseconds on the clock every timestamp of the adapter uses.
uint64_t host_now_ns();

// ---- USM allocation registry ------------------------------------------------------

enum class MemKind : int { device = 0, host = 1, shared = 2 };

struct AllocRecord {
  Pool *pool = nullptr; // null: a plain urUSM*Alloc without a pool
  size_t size = 0;
  MemKind kind = MemKind::device;
  Device *device = nullptr; // null for host memory
  bool async = false;       // from urEnqueueUSM*AllocExp (true) or a synchronous alloc
};

// Every live allocation of a context, by base address: frees of unknown pointers
// and double frees are refused from here, without asking the driver.
class AllocRegistry {
public:
  void insert(const void *ptr, const AllocRecord &rec);
  // Removes and returns the record; false if `ptr` is not a live base address.
  bool take(const void *ptr, AllocRecord *rec);
  bool find(const void *ptr, AllocRecord *rec);

private:
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<uintptr_t, AllocRecord> map;
  };
  Shard &shard(uintptr_t p) { return shards_[(p >> 8) % kShards]; }
  Shard shards_[kShards];
};

struct Context : Object {
  static constexpr Tag kTag = Tag::context;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_CONTEXT;
  Context() : Object(Tag::context) {}

  std::vector<Device *> devices;
  Lifetime life;
  AllocRegistry allocs;

  // Index of `dev` in `devices`, or -1.
  int index_of(const Device *dev) const {
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i] == dev) return static_cast<int>(i);
    return -1;
  }

  // Default and current pools, per device index, read without a lock on every
  // stream-ordered allocation; made and changed under pools_mutex.
  std::mutex pools_mutex;
  std::vector<std::atomic<Pool *>> default_pools;
  std::vector<std::atomic<Pool *>> current_pools; // null: the default pool
  std::atomic<Pool *> host_pool{nullptr};

  // Ordered-pool cores of the context's user pools (ordered_core.hpp): every core,
  // for the release at synchronisation points, and every chunk they hold, so a
  // pointer query finds the block around an interior pointer.
  std::mutex cores_mutex;
  std::vector<CorePool *> cores;
  std::atomic<size_t> core_count{0};
  std::mutex chunks_mutex;
  std::map<uintptr_t, std::pair<size_t, CorePool *>> chunks; // base -> (size, core)

  ur_context_extended_deleter_t deleter = nullptr;
  void *deleter_data = nullptr;
};
ORDO_HANDLE_CHECK(Context);
void context_hold(Context *ctx);
void context_drop(Context *ctx);

// ---- queues and commands ----------------------------------------------------------

struct Queue : Object {
  static constexpr Tag kTag = Tag::queue;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_QUEUE;
  Queue() : Object(Tag::queue) {}

  Context *ctx = nullptr;
  Device *dev = nullptr;
  ur_queue_flags_t flags = 0;
  bool in_order = true;
  bool profiling = false;
  bool owns_streams = true;
  std::vector<CUstream> streams;
  std::atomic<uint32_t> next_stream{0};
  std::mutex barrier_mutex;
  Lifetime life;
  // Identities of the streams for the ordered pool core: stream i is
  // stream_id_base + i, from a process-wide counter, so no identity is ever reused.
  uintptr_t stream_id_base = 0;
  const void *stream_id(CUstream s) const {
    for (size_t i = 0; i < streams.size(); ++i)
      if (streams[i] == s) return reinterpret_cast<const void *>(stream_id_base + i);
    return nullptr;
  }

  // The stream a command goes to: on an in-order queue the only one; on an
  // out-of-order queue the stream of a wait-list event from this queue when there
  // is one, otherwise the next in turn.
  CUstream pick_stream(uint32_t n, const ur_event_handle_t *waits);
  // Waits for every stream of the queue from `stream` (for barriers and wait-all).
  ur_result_t join_all_into(CUstream stream);
};
ORDO_HANDLE_CHECK(Queue);
void queue_hold(Queue *q);
void queue_drop(Queue *q);

struct Event : Object {
  static constexpr Tag kTag = Tag::event;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_EVENT;
  Event() : Object(Tag::event) {}

  Queue *queue = nullptr; // null for events made from a native handle
  Context *ctx = nullptr;
  Device *dev = nullptr;
  ur_command_t command = UR_COMMAND_EVENTS_WAIT;
  CUstream stream = nullptr;
  CUevent done = nullptr;  // recorded after the command
  CUevent start = nullptr; // recorded before it (profiling only)
  bool timed = false;      // `done`/`start` came from the timed pool
  bool pooled = true;      // return the CUevents to the device pool on release
  bool owns_native = false; // made from a native handle that is ours to destroy
  uint64_t queued_ns = 0;  // host time of the enqueue call
};
ORDO_HANDLE_CHECK(Event);

// Checks a wait list: the count/pointer rule and that every entry is an event.
ur_result_t check_wait_list(uint32_t n, const ur_event_handle_t *list);

// One enqueued command: validates the wait list, picks a stream, makes it wait for
// the events of other streams, and (when the caller wants an event) records the
// command's events around the work the caller issues in between.
class Command {
public:
  // `timed` asks for profiling timestamps even on a queue without profiling.
  Command(Queue *q, ur_command_t type, uint32_t n, const ur_event_handle_t *waits,
          ur_event_handle_t *out_event, bool timed = false);
  ~Command();
  ur_result_t status() const { return status_; }
  CUstream stream() const { return stream_; }
  // Records the completion event and hands it to the caller; returns `result`
  // when it is an error (and then hands out nothing).
  ur_result_t finish(ur_result_t result = UR_RESULT_SUCCESS);

private:
  Queue *queue_;
  ur_command_t type_;
  ur_event_handle_t *out_;
  CUstream stream_ = nullptr;
  Event *event_ = nullptr;
  ur_result_t status_ = UR_RESULT_SUCCESS;
};

// Creates an event object (not recorded yet) for `q`.
ur_result_t event_create(Queue *q, ur_command_t type, bool timed, Event **out);
void event_destroy(Event *ev);

// ---- programs, kernels, pools -----------------------------------------------------

struct Program : Object {
  static constexpr Tag kTag = Tag::program;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_PROGRAM;
  Program() : Object(Tag::program) {}

  struct PerDevice {
    Device *dev = nullptr;
    std::vector<uint8_t> image; // PTX (NUL-terminated) or cubin, as given
    bool is_ptx = false;
    CUmodule module = nullptr;
    ur_program_build_status_t status = UR_PROGRAM_BUILD_STATUS_NONE;
    std::string log;
    std::string options;
  };

  Context *ctx = nullptr;
  bool from_il = false;
  Lifetime life;
  std::mutex mutex;
  std::vector<PerDevice> per_device;
  std::atomic<bool> built{false};

  // The module for `dev`, or null when there is none (not built, other device).
  CUmodule module_for(const Device *dev);
};
ORDO_HANDLE_CHECK(Program);
void program_hold(Program *p);
void program_drop(Program *p);

struct Kernel : Object {
  static constexpr Tag kTag = Tag::kernel;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_KERNEL;
  Kernel() : Object(Tag::kernel) {}

  Program *program = nullptr;
  std::string name;
  std::vector<CUfunction> functions; // per program device (null: not built there)
  // The <name>_with_offset variants (one more parameter: three size_t), launched
  // when a launch names a global offset; null where the program has none.
  std::vector<CUfunction> offset_functions;
  std::vector<size_t> param_sizes; // from cuFuncGetParamInfo
  std::atomic<int> dynamic_shared_limit{48 * 1024};

  CUfunction function_for(const Device *dev) const;
  CUfunction offset_function_for(const Device *dev) const;
};
ORDO_HANDLE_CHECK(Kernel);
int kernel_attr(CUfunction f, CUfunction_attribute a);
// The suffix of a kernel's global-offset variant (test/kernels/cuda, docs/cuda.md).
constexpr const char *kOffsetSuffix = "_with_offset";
// A work-group shape for a launch that names none: per dimension the largest
// divisor of the global size that fits the kernel's and the device's limits.
void suggest_local_size(const Device *d, CUfunction f, uint32_t dims, const size_t *gws, size_t *lws);

struct Pool : Object {
  static constexpr Tag kTag = Tag::pool;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_ARGUMENT;
  Pool() : Object(Tag::pool) {}

  Context *ctx = nullptr;
  Device *dev = nullptr; // null: serves every device of the context
  bool is_default = false;
  bool stream_ordered = false; // made by urUSMPoolCreateExp or a default pool
  // User pools run on Ordo's ordered pool core (exact limits and statistics);
  // default pools on the driver's native pools (the fast path).
  bool on_core = false;
  bool host_only = false;       // the context's host pool
  ur_usm_pool_flags_t flags = 0;
  size_t max_size = 0;       // 0: no limit beyond the device's
  uint64_t threshold = 0;    // release threshold set on every native pool
  Lifetime life;             // the user's references + one per live allocation
  std::atomic<bool> destroyed{false};

  // The native pool serving `kind` on device index `dev_index` of the context,
  // created on first use. Null with `*err` set when the driver has none.
  CUmemoryPool native(MemKind kind, int dev_index, ur_result_t *err);
  // Every native pool made so far (for statistics, threshold, trim).
  std::vector<CUmemoryPool> natives();
  // Serialises the last-resort retry that lets an allocation wait for pending frees.
  std::mutex retry_mutex;

  // The ordered-pool core serving `kind` on device index `dev_index` (on_core
  // pools), created on first use. Null with `*err` set when it cannot serve it.
  CorePool *core(MemKind kind, int dev_index, ur_result_t *err);
  // Every core made so far.
  std::vector<CorePool *> cores();
  // A pool carved from the caller's memory (UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC).
  void *user_memory = nullptr;
  size_t user_size = 0;
  MemKind user_kind = MemKind::device;
  Device *user_device = nullptr;

  // Sizes the per-device slots; called once, before the pool is shared.
  void init_slots(size_t devices) {
    std::vector<std::atomic<CUmemoryPool>>(devices).swap(device_pools_);
    std::vector<std::atomic<CUmemoryPool>>(devices).swap(shared_pools_);
    std::vector<std::atomic<CorePool *>>(devices).swap(device_cores_);
    std::vector<std::atomic<CorePool *>>(devices).swap(shared_cores_);
  }

private:
  std::mutex mutex_;                                    // serialises creation only
  std::vector<std::atomic<CUmemoryPool>> device_pools_; // per context device index
  std::vector<std::atomic<CUmemoryPool>> shared_pools_; // per context device index
  std::atomic<CUmemoryPool> host_pool_{nullptr};
  std::vector<CUmemoryPool> owned_; // from cuMemPoolCreate (destroyed with the pool)
  std::vector<std::atomic<CorePool *>> device_cores_; // per context device index
  std::vector<std::atomic<CorePool *>> shared_cores_; // per context device index
  std::atomic<CorePool *> host_core_{nullptr};

  CUmemoryPool make_native(MemKind kind, Device *dev, ur_result_t *err);
  friend void pool_drop(Pool *p);
};
ORDO_HANDLE_CHECK(Pool);
void pool_hold(Pool *p);
void pool_drop(Pool *p);

// Creates a pool for `ctx` (and `dev`, for urUSMPoolCreateExp) from a descriptor.
ur_result_t pool_create(Context *ctx, Device *dev, const ur_usm_pool_desc_t *desc,
                        bool stream_ordered, Pool **out);
// The user's last reference is gone (urUSMPoolRelease / urUSMPoolDestroyExp).
void pool_release_user(Pool *p);

// The pool a stream-ordered or pooled allocation of `kind` uses when the caller
// passes none: the current pool of the device, or the context's host pool.
ur_result_t pool_for_default(Context *ctx, Device *dev, MemKind kind, Pool **out);

// How an allocation command is ordered: its stream and, for the ordered pool
// core, the stream's identity and the command's wait list.
struct AllocOrder {
  CUstream stream = nullptr;
  const void *queue_id = nullptr; // null: outside any queue (urUSM*Alloc)
  uint32_t wait_count = 0;
  const ur_event_handle_t *waits = nullptr;
  size_t alignment = 0; // 0: the pool's own
};

// Allocates from `pool` for a command on `order.stream` (stream-ordered),
// registers the pointer.
ur_result_t pool_alloc(Pool *pool, MemKind kind, Device *dev, size_t size, const AllocOrder &order,
                       bool async, void **out);
// Frees a pooled pointer on `stream`. The caller has already taken `rec` out of
// the registry; on failure it goes back, so nothing is lost. For a core pool,
// `release` is the free command's event (null: no pending use) and `queue_id`
// its stream's identity.
ur_result_t pool_free(Context *ctx, const AllocRecord &rec, void *ptr, CUstream stream,
                      Event *release = nullptr, const void *queue_id = nullptr);
// At a synchronisation point: every core pool of `ctx` gives back memory above
// its release threshold.
void release_cores_above_threshold(Context *ctx);
// The live core-pool block around `ptr` (interior pointers too).
bool core_block_base(Context *ctx, const void *ptr, const void **base);

// Shared info-query argument rules.
inline ur_result_t check_info_args(size_t size, void *value, size_t *size_ret) {
  if (size == 0 && value) return UR_RESULT_ERROR_INVALID_SIZE;
  if (size != 0 && !value) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!value && !size_ret) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  return UR_RESULT_SUCCESS;
}

// The adapter's one handle and its platforms (empty when there is no driver).
Adapter *the_adapter();
const std::vector<Platform *> &platforms();

} // namespace ordo::cuda
