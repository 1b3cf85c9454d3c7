// SPDX-License-Identifier: Apache-2.0
// A Level Zero driver that runs on the CPU, for testing Ordo's Level Zero adapter on
// the real Level Zero loader where no Intel GPU exists (docs/level-zero.md).
//
// It executes for real: memory of the three kinds is host memory with its kind and
// device recorded; a command list's commands run in order on a worker thread of their
// own (an immediate list) or of the command queue that executes them (a regular list);
// a command first waits for its wait events (a real wait, on a condition variable),
// then does its work, then signals its event; fences and events are signalled by the
// workers and by the host. Modules are ZE_MODULE_FORMAT_NATIVE binaries holding
// native-CPU kernels (include/ur_native_cpu_kernel.h), launched over group counts.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <level_zero/ze_api.h>

#define ORDO_NC_TYPES_ONLY
#include "ordo_elf/elf_module.hpp"

namespace zecpu {

uint64_t now_ns();

// Every host wait (events, fences, queues) sleeps on this one condition, and every
// signal wakes it: simple, and a test driver's waits are few.
struct Signals {
  std::mutex mutex;
  std::condition_variable changed;
  void notify() {
    { std::lock_guard<std::mutex> lock(mutex); }
    changed.notify_all();
  }
  // Waits until done() or the timeout (ns; UINT64_MAX forever). True when done().
  bool wait(uint64_t timeout_ns, const std::function<bool()> &done);
};
Signals &signals();

struct Device;

struct DriverObj {
  static constexpr uint32_t kMagic = 0x2ec0d21e;
  uint32_t magic = kMagic;
  std::vector<Device *> devices;
};

struct Device {
  static constexpr uint32_t kMagic = 0x2ec0de71;
  uint32_t magic = kMagic;
  DriverObj *driver = nullptr;
  uint32_t ordinal = 0;
  uint64_t memory_size = 0;             // what zeDeviceGetMemoryProperties reports
  std::atomic<uint64_t> memory_used{0}; // device and shared allocations of it
  // ze_device_properties_t::maxMemAllocSize: the largest device or shared allocation
  // without ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE.
  uint64_t max_alloc_size() const { return memory_size < (4ull << 30) ? memory_size : (4ull << 30); }
};

struct Context {
  static constexpr uint32_t kMagic = 0x2ec0c07e;
  uint32_t magic = kMagic;
  std::vector<Device *> devices;
};

// One allocation, as zeMemGetAllocProperties reports it.
struct Allocation {
  size_t size = 0;
  ze_memory_type_t type = ZE_MEMORY_TYPE_UNKNOWN;
  Device *device = nullptr;
  Context *context = nullptr;
  uint64_t id = 0;
};
// zeDriverGetExtensionFunctionAddress (memory.cpp): the driver-experimental host
// pointer import functions, zexDriverImportExternalPointer and
// zexDriverReleaseImportedPointer, as Intel's GPU driver names them.
ze_result_t ZE_APICALL DriverGetExtensionFunctionAddress(ze_driver_handle_t h, const char *name, void **out);

// The allocation holding `p` (its base in *base), or null.
const Allocation *find_allocation(const void *p, uintptr_t *base);

struct EventPool;
struct Event {
  static constexpr uint32_t kMagic = 0x2ec0e7e7;
  uint32_t magic = kMagic;
  EventPool *pool = nullptr;
  uint32_t index = 0;
  std::atomic<int> signalled{0};
  uint64_t start_ns = 0, end_ns = 0; // of the command that signalled it
  bool is_signalled() const { return signalled.load(std::memory_order_acquire) != 0; }
  void signal(uint64_t start, uint64_t end) {
    start_ns = start;
    end_ns = end;
    signalled.store(1, std::memory_order_release);
    signals().notify();
  }
};

struct EventPool {
  static constexpr uint32_t kMagic = 0x2ec0e7b0;
  uint32_t magic = kMagic;
  Context *context = nullptr;
  ze_event_pool_flags_t flags = 0;
  uint32_t count = 0;
  std::vector<std::unique_ptr<Event>> slots; // made by zeEventCreate
  std::mutex mutex;
};

struct Fence {
  static constexpr uint32_t kMagic = 0x2ec0fe7c;
  uint32_t magic = kMagic;
  struct CommandQueue *queue = nullptr;
  std::atomic<int> signalled{0};
};

// One unit of work on a worker: waits, work, signal (or anything else, such as a
// fence signal or an event reset).
using Task = std::function<void()>;

// A thread running tasks in the order they arrive.
class Worker {
public:
  Worker();
  ~Worker(); // runs what is queued, then stops
  void push(Task t);
  // Waits until every task pushed so far has run, or the timeout (ns).
  bool drain(uint64_t timeout_ns);

private:
  void run();
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  uint64_t pushed_ = 0;
  std::atomic<uint64_t> done_{0};
  bool stop_ = false;
  std::thread thread_;
};

struct Kernel;
// A recorded command of a list: what it waits for, what it does, what it signals.
struct Command {
  std::vector<Event *> waits;
  Event *signal = nullptr;
  std::function<void()> work; // may be empty (barriers, waits, signals)
};
void run_command(const Command &c);

struct CommandQueue {
  static constexpr uint32_t kMagic = 0x2ec0c0de;
  uint32_t magic = kMagic;
  Context *context = nullptr;
  Device *device = nullptr;
  bool synchronous = false; // ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: execution returns when done
  Worker worker;
};

struct CommandList {
  static constexpr uint32_t kMagic = 0x2ec0c115;
  uint32_t magic = kMagic;
  Context *context = nullptr;
  Device *device = nullptr;
  bool immediate = false;
  bool synchronous = false;       // an immediate list in ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS
  std::unique_ptr<Worker> worker; // immediate lists: their own
  std::vector<Command> recorded;  // regular lists
  bool closed = false;
  std::mutex mutex;
  // Appends a command: run now on the worker (immediate) or recorded (regular).
  ze_result_t append(Command c);
};

struct Module {
  static constexpr uint32_t kMagic = 0x2ec0a0d1;
  uint32_t magic = kMagic;
  Context *context = nullptr;
  Device *device = nullptr;
  std::shared_ptr<ordo::native_cpu::ElfModule> elf;
};

struct BuildLog {
  static constexpr uint32_t kMagic = 0x2ec0b106;
  uint32_t magic = kMagic;
  std::string text;
};

struct Kernel {
  static constexpr uint32_t kMagic = 0x2ec0ce71;
  uint32_t magic = kMagic;
  Module *module = nullptr;
  const ordo_nc_kernel_desc *desc = nullptr;
  std::mutex mutex;
  uint32_t group_size[3] = {1, 1, 1};
  uint32_t offset[3] = {0, 0, 0};
  // Per argument: its bytes (a value, or a pointer's bytes), or for local memory
  // (a null value) the size wanted per group.
  struct Arg {
    std::vector<uint8_t> bytes;
    size_t local_size = 0;
    bool is_local = false;
    bool set = false;
  };
  std::vector<Arg> args;
};

// Handle checks: a null or foreign handle is refused rather than misread.
template <class T> inline T *as(void *h) {
  T *p = static_cast<T *>(h);
  return p && p->magic == T::kMagic ? p : nullptr;
}

DriverObj &the_driver();

} // namespace zecpu
