// SPDX-License-Identifier: Apache-2.0
// The fixture and helpers of the launch batch attacks (launch_batch_attack.cpp and
// launch_batch_edges.cpp): adversarial programs against plain kernel launches on one
// in-order queue, the launches the native CPU adapter gathers into batches
// (docs/native-cpu.md, "The scheduler"). Each test file is its own translation unit,
// so everything here stays internal to it.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "conformance.hpp"

namespace {

using conf::arg_local;
using conf::arg_pointer;
using conf::arg_value;

inline bool device_says(ur_device_handle_t d, ur_device_info_t q) {
  ur_bool_t b = 0;
  return conf::info(d, q, b) == UR_RESULT_SUCCESS && b;
}

// A host task that holds an in-order queue (and so every later command) until open().
// Gates live as long as the process: a queue released while held may run its host task
// after the test that made it.
struct Gate {
  std::atomic<bool> opened{false};
  void open() { opened.store(true); }
  static void wait(void *self) {
    auto *g = static_cast<Gate *>(self);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60); // a test that never opens
    while (!g->opened.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
};
// A new T that lives as long as the process (see Gate): host tasks and callbacks that
// point at it may run after the test that made it.
template <class T> T &kept() {
  static std::mutex mu;
  static std::deque<T> all;
  std::lock_guard<std::mutex> lock(mu);
  all.emplace_back();
  return all.back();
}
inline Gate &new_gate() { return kept<Gate>(); }

inline void count_host_task(void *counter) { static_cast<std::atomic<int> *>(counter)->fetch_add(1); }
inline void count_deletion(void *counter) { static_cast<std::atomic<int> *>(counter)->fetch_add(1); }
inline std::atomic<int> &new_counter() { return kept<std::atomic<int>>(); }

// Failures seen by worker threads: the first few, for the report.
class Failures {
public:
  void add(const std::string &what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (++count_ <= 10) text_ += what + "\n";
  }
  int count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }
  std::string text() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }

private:
  mutable std::mutex mu_;
  int count_ = 0;
  std::string text_;
};

struct Kernels {
  ur_kernel_handle_t fill = nullptr, inc = nullptr, sum = nullptr, empty = nullptr;
};

// What a launcher may do besides launching.
struct Options {
  bool may_block = true;   // blocking reads and event waits (false while a gate holds the queue)
  bool validation = false; // the parameter-validation layer is on
  bool native = false;     // native CPU: its own refusals too
  // A launch that leaves out an argument an earlier launch gave is refused (the OpenCL
  // adapter runs it with the earlier value: ArgumentsOfAnEarlierLaunchDoNotCarryOver).
  bool missing_refused = true;
  size_t max_local = 1; // the device's work-group size limit
};

// One thread's random program of launches over its own words of device memory, and the
// host model of what those launches leave there. The queue is shared: other threads'
// commands interleave, but this thread's run in its order, each exactly once.
class Launcher {
public:
  static constexpr size_t kWords = 192;

  Launcher(ur_queue_handle_t q, const Kernels &k, uint32_t *region, uint32_t *out, uint64_t seed, const Options &o)
      : q_(q), k_(k), region_(region), out_(out), rng_(seed), o_(o), model_(kWords, 0), model_out_(kWords, 0) {}
  ~Launcher() {
    if (prev_event_) urEventRelease(prev_event_);
  }

  // One random step; false after a failure (recorded in `f`).
  bool step(Failures &f) {
    const unsigned roll = pick(100);
    if (roll < 33) return fill(f);
    if (roll < 66) return increment(f);
    if (roll < 76) return local_sum(f);
    if (roll < 80) return empty(f);
    if (roll < 90) return refused(f);
    if (roll < 95) return with_event(f);
    if (o_.may_block) return read_back(f);
    return increment(f);
  }
  // The words as they must be once everything has run.
  bool check(ur_queue_handle_t reader, Failures &f, const char *when) {
    return compare(reader, region_, model_, "region", when, f) && compare(reader, out_, model_out_, "sums", when, f);
  }
  size_t launches() const { return launches_; }
  size_t refusals() const { return refusals_; }

private:
  unsigned pick(unsigned n) { return static_cast<unsigned>(rng_() % n); }

  // A 1-3 dimensional range over words [off, off + len): extent 1 past the first
  // dimension, offsets there that change nothing, and often the previous launch's range.
  struct Range {
    uint32_t dims = 1;
    size_t global[3] = {1, 1, 1}, offset[3] = {0, 0, 0}, local[3] = {1, 1, 1};
    bool given_local = false;
    size_t off() const { return offset[0]; }
    size_t len() const { return global[0]; }
  };
  size_t divisor_of(size_t n) {
    std::vector<size_t> ds;
    for (size_t d = 1; d <= n && d <= o_.max_local; ++d)
      if (n % d == 0) ds.push_back(d);
    return ds[pick(static_cast<unsigned>(ds.size()))];
  }
  Range range(bool need_local = false) {
    if (have_last_ && pick(3) == 0 && (!need_local || last_.given_local)) return last_; // a run of equal ranges
    Range r;
    r.dims = 1 + pick(3);
    const size_t len = pick(4) == 0 ? 1 + pick(kWords) : 1 + pick(24);
    r.global[0] = len;
    r.offset[0] = pick(static_cast<unsigned>(kWords - len + 1));
    for (uint32_t d = 1; d < r.dims; ++d) r.offset[d] = pick(4);
    r.given_local = need_local || pick(2) == 0;
    if (r.given_local) r.local[0] = divisor_of(len);
    last_ = r;
    have_last_ = true;
    return r;
  }
  ur_result_t launch(ur_kernel_handle_t k, const Range &r, const std::vector<ur_exp_kernel_arg_properties_t> &args,
                     uint32_t n_wait = 0, const ur_event_handle_t *wait = nullptr, ur_event_handle_t *ev = nullptr,
                     const ur_kernel_launch_ext_properties_t *props = nullptr) {
    return urEnqueueKernelLaunchWithArgsExp(q_, k, r.dims, r.offset, r.global, r.given_local ? r.local : nullptr,
                                            static_cast<uint32_t>(args.size()), args.empty() ? nullptr : args.data(),
                                            props, n_wait, wait, ev);
  }
  bool expect_success(ur_result_t r, const char *what, Failures &f) {
    if (r == UR_RESULT_SUCCESS) {
      ++launches_;
      return true;
    }
    f.add(std::string(what) + " gave " + urinfo::result_name(r) + " after " + std::to_string(launches_) + " launches");
    return false;
  }

  // fill(out, value), its arguments in any order, some set twice (the last one counts)
  // and the entries written over right after the call.
  bool fill(Failures &f) {
    const Range r = range();
    uint32_t value = static_cast<uint32_t>(rng_());
    uint32_t decoy = value ^ 0x5a5a5a5a;
    args_.clear();
    const unsigned form = pick(4);
    if (form == 1) {
      args_ = {arg_value(1, 4, &value), arg_pointer(0, region_)};
    } else if (form == 2) {
      // Decoys first, then the real values: more entries than the kernel has arguments.
      for (int i = 0; i < 9; ++i) {
        args_.push_back(arg_value(1, 4, &decoy));
        args_.push_back(arg_pointer(0, out_));
      }
      args_.push_back(arg_pointer(0, region_));
      args_.push_back(arg_value(1, 4, &value));
    } else {
      args_ = {arg_pointer(0, region_), arg_value(1, 4, &value)};
    }
    const ur_result_t res = launch(k_.fill, r, args_);
    const uint32_t expected = value;
    value = decoy = 0xdeadbeef; // the launch copied its values
    for (auto &a : args_) a = arg_pointer(0, nullptr);
    if (!expect_success(res, "fill", f)) return false;
    std::fill(model_.begin() + r.off(), model_.begin() + r.off() + r.len(), expected);
    return true;
  }
  // increment(data), now and then with a launch property list that asks for nothing (or
  // only hints): a command of its own on native CPU, which later launches may join.
  bool increment(Failures &f) {
    const Range r = range();
    args_ = {arg_pointer(0, region_)};
    ur_kernel_launch_ext_properties_t props{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES, nullptr, 0};
    const unsigned form = pick(8);
    if (form == 1) props.flags = UR_KERNEL_LAUNCH_FLAG_OPPORTUNISTIC_QUEUE_SERIALIZE;
    const ur_result_t res = launch(k_.inc, r, args_, 0, nullptr, nullptr, form < 2 ? &props : nullptr);
    args_[0] = arg_pointer(0, out_);
    if (!expect_success(res, "increment", f)) return false;
    for (size_t i = r.off(); i < r.off() + r.len(); ++i) ++model_[i];
    return true;
  }
  // local_sum(in = region, out, scratch): reads what the launches before it wrote.
  bool local_sum(Failures &f) {
    const Range r = range(true);
    const size_t scratch = r.local[0] * 4 + 64 * pick(4); // at least a word per item
    args_ = {arg_pointer(0, region_), arg_pointer(1, out_), arg_local(2, scratch)};
    if (pick(2)) std::swap(args_[0], args_[2]);
    // Work-group memory the kernel does not use (native CPU gives it; a command of its own there).
    ur_kernel_launch_workgroup_property_t wg{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_WORKGROUP_PROPERTY, nullptr,
                                             size_t(1) + pick(300)};
    ur_kernel_launch_ext_properties_t props{UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES, &wg, 0};
    const ur_result_t res = launch(k_.sum, r, args_, 0, nullptr, nullptr, o_.native && pick(4) == 0 ? &props : nullptr);
    args_.clear();
    if (!expect_success(res, "local_sum", f)) return false;
    const size_t l = r.local[0];
    for (size_t g = 0; g < r.len() / l; ++g) {
      uint32_t s = 0;
      for (size_t i = 0; i < l; ++i) s += model_[r.off() + g * l + i];
      model_out_[g] = s;
    }
    return true;
  }
  bool empty(Failures &f) {
    const Range r = range();
    return expect_success(launch(k_.empty, r, {}), "empty", f);
  }
  // A launch the adapter must refuse with this result, leaving everything as it was.
  bool refused(Failures &f) {
    Range r = range();
    uint32_t value = 7;
    const uint64_t wide = 7;
    ur_result_t want = UR_RESULT_SUCCESS, got = UR_RESULT_SUCCESS;
    const char *what = "";
    unsigned which = pick(o_.native ? 7 : o_.validation ? 6 : 4);
    if (which == 0 && !o_.missing_refused) which = 1;
    switch (which) {
    case 0:
      what = "fill without its value";
      want = UR_RESULT_ERROR_INVALID_KERNEL_ARGS;
      got = launch(k_.fill, r, {arg_pointer(0, region_)});
      break;
    case 1:
      what = "increment with an argument index past its last";
      want = UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
      got = launch(k_.inc, r, {arg_pointer(0, region_), arg_pointer(1, region_)});
      break;
    case 2:
      what = "fill with an 8-byte value";
      want = UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
      got = launch(k_.fill, r, {arg_pointer(0, region_), arg_value(1, sizeof wide, &wide)});
      break;
    case 3:
      what = "work dimension 0 or 4";
      want = UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
      {
        const size_t global[4] = {1, 1, 1, 1}; // room for all four sizes
        const ur_exp_kernel_arg_properties_t a = arg_pointer(0, region_);
        got = urEnqueueKernelLaunchWithArgsExp(q_, k_.inc, pick(2) ? 0 : 4, nullptr, global, nullptr, 1, &a, nullptr, 0,
                                               nullptr, nullptr);
      }
      break;
    case 4:
      what = "no global size";
      want = UR_RESULT_ERROR_INVALID_NULL_POINTER;
      got = urEnqueueKernelLaunchWithArgsExp(q_, k_.empty, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0,
                                             nullptr, nullptr);
      break;
    case 5:
      what = "a global size of 0";
      want = UR_RESULT_ERROR_INVALID_WORK_DIMENSION;
      r.global[0] = 0;
      r.given_local = false;
      got = launch(k_.inc, r, {arg_pointer(0, region_)});
      break;
    default:
      // Non-uniform work-groups are a refusal on native CPU (OpenCL 2 devices may run them).
      what = "a local size that does not divide the global size";
      want = UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE;
      r = Range{};
      r.global[0] = 5;
      r.local[0] = 2;
      r.given_local = true;
      got = launch(k_.fill, r, {arg_pointer(0, region_), arg_value(1, 4, &value)});
      break;
    }
    ++refusals_;
    if (got == want) return true;
    f.add(std::string(what) + ": want " + urinfo::result_name(want) + ", got " + urinfo::result_name(got));
    return false;
  }
  // An increment that is a command of its own: with an event, and sometimes after the
  // previous one's event; the event is waited for or dropped at once.
  bool with_event(Failures &f) {
    const Range r = range();
    ur_event_handle_t ev = nullptr;
    const bool chain = prev_event_ && pick(2);
    const ur_result_t res =
        launch(k_.inc, r, {arg_pointer(0, region_)}, chain ? 1 : 0, chain ? &prev_event_ : nullptr, &ev);
    if (!expect_success(res, "increment with an event", f)) return false;
    for (size_t i = r.off(); i < r.off() + r.len(); ++i) ++model_[i];
    if (prev_event_) urEventRelease(prev_event_);
    prev_event_ = nullptr;
    if (o_.may_block && pick(2)) {
      const ur_result_t w = urEventWait(1, &ev);
      urEventRelease(ev);
      if (w != UR_RESULT_SUCCESS) {
        f.add("urEventWait of a launch gave " + urinfo::result_name(w));
        return false;
      }
    } else if (pick(2)) {
      prev_event_ = ev;
    } else {
      urEventRelease(ev);
    }
    return true;
  }
  // A blocking read on the same queue: every launch of this thread before it has run.
  bool read_back(Failures &f) { return check(q_, f, "mid-run"); }

  bool compare(ur_queue_handle_t reader, const uint32_t *src, const std::vector<uint32_t> &want, const char *name,
               const char *when, Failures &f) {
    std::vector<uint32_t> host(want.size(), 0xffffffffu);
    const ur_result_t r =
        urEnqueueUSMMemcpy(reader, true, host.data(), src, want.size() * sizeof(uint32_t), 0, nullptr, nullptr);
    if (r != UR_RESULT_SUCCESS) {
      f.add(std::string("blocking read (") + when + ") gave " + urinfo::result_name(r));
      return false;
    }
    for (size_t i = 0; i < want.size(); ++i)
      if (host[i] != want[i]) {
        std::ostringstream s;
        s << when << ": " << name << "[" << i << "] is " << host[i] << ", the model says " << want[i] << " (after "
          << launches_ << " launches)";
        f.add(s.str());
        return false;
      }
    return true;
  }

  ur_queue_handle_t q_;
  Kernels k_;
  uint32_t *region_, *out_;
  std::mt19937_64 rng_;
  Options o_;
  std::vector<uint32_t> model_, model_out_;
  std::vector<ur_exp_kernel_arg_properties_t> args_;
  Range last_;
  bool have_last_ = false;
  ur_event_handle_t prev_event_ = nullptr;
  size_t launches_ = 0, refusals_ = 0;
};

class LaunchBatchAttack : public conf::ProgramTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::ProgramTest);
    host_tasks = device_says(device(), UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP);
    async_alloc = device_says(device(), UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP);
    graphs = device_says(device(), UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP);
    size_t max_group = 0;
    ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE, max_group));
    options.max_local = std::min<size_t>(max_group, 64);
    options.validation = conf::validation_enabled();
    options.native = backend() == UR_BACKEND_NATIVE_CPU;
    options.missing_refused = backend() != UR_BACKEND_OPENCL;
    kernels = make_kernels(program);
    ASSERT_FALSE(HasFailure());
  }
  void TearDown() override {
    if (queue) urQueueFinish(queue);
    for (ur_kernel_handle_t k : owned_kernels) EXPECT_SUCCESS(urKernelRelease(k));
    for (void *p : allocations) EXPECT_SUCCESS(urUSMFree(context, p));
    conf::ProgramTest::TearDown();
  }
  Kernels make_kernels(ur_program_handle_t p, bool own = true) {
    Kernels k;
    for (auto named : {std::make_pair(&k.fill, "fill"), std::make_pair(&k.inc, "increment"),
                       std::make_pair(&k.sum, "local_sum"), std::make_pair(&k.empty, "empty")}) {
      EXPECT_SUCCESS(urKernelCreate(p, named.second, named.first)) << named.second;
      if (own && *named.first) owned_kernels.push_back(*named.first);
    }
    return k;
  }
  // Zeroed device words, freed by TearDown.
  uint32_t *words(size_t n) {
    void *p = nullptr;
    EXPECT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, n * 4, &p));
    if (!p) return nullptr;
    allocations.push_back(p);
    const uint32_t zero = 0;
    EXPECT_SUCCESS(urEnqueueUSMFill(queue, p, 4, &zero, n * 4, 0, nullptr, nullptr));
    EXPECT_SUCCESS(urQueueFinish(queue));
    return static_cast<uint32_t *>(p);
  }
  std::vector<uint32_t> read(const uint32_t *src, size_t n, ur_queue_handle_t q = nullptr) {
    std::vector<uint32_t> host(n, 0xffffffffu);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(q ? q : queue, true, host.data(), src, n * 4, 0, nullptr, nullptr));
    return host;
  }
  // Holds `q` behind a gate where the device runs host tasks; nullptr elsewhere.
  Gate *hold(ur_queue_handle_t q) {
    if (!host_tasks) return nullptr;
    Gate &g = new_gate();
    EXPECT_SUCCESS(urEnqueueHostTaskExp(q, Gate::wait, &g, nullptr, 0, nullptr, nullptr));
    return &g;
  }

  bool host_tasks = false, async_alloc = false, graphs = false;
  Options options;
  Kernels kernels;
  std::vector<ur_kernel_handle_t> owned_kernels;
  std::vector<void *> allocations;
};

// What the interfering thread did, for the summary line.
struct Interference {
  int finishes = 0, flushes = 0, waits = 0, barriers = 0, host_tasks = 0, allocs = 0, launches = 0, empty_queries = 0;
  std::string text() const {
    std::ostringstream s;
    s << finishes << " finishes, " << flushes << " flushes, " << waits << " waits, " << barriers << " barriers, "
      << host_tasks << " host tasks, " << allocs << " stream-ordered allocations, " << launches << " own launches, "
      << empty_queries << " emptiness queries";
    return s.str();
  }
};

} // namespace
