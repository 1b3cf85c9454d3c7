// SPDX-License-Identifier: Apache-2.0
// ordo-demo: stream-ordered allocation at work on every device the loader finds.
//
// Each round of a pipeline allocates its buffers as commands, uses them and frees them
// as commands, all on one out-of-order queue ordered by wait lists; the host never
// waits in between:
//
//     alloc a ─> fill a ─┐
//     alloc b ─> fill b ─┼─> vector_add c = a + b ─> saxpy c = 2 b + c ─> sample c ─> free a, b, c
//     alloc c ───────────┘                                                               │
//        ^ the next round's allocs wait for these frees ─────────────────────────────────┘
//
// The pool hands each round the memory the previous round freed (its allocs are
// ordered after those frees), so hundreds of megabytes of allocations live in a few
// megabytes of pool, with no host synchronisation.
// The same rounds with synchronous urUSMDeviceAlloc / urUSMFree (the host waits for
// each round before it can free) run beside it, timed. Every round's result is checked.
// The kernels are Ordo's test kernels (test/kernels/), found in the build tree.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "discovery.hpp"
#include "info_tables.hpp"
#include "test_program.hpp"
#include "ur_api.h"

namespace {

constexpr size_t kElements = 1 << 20;
constexpr float kA = 1.5f, kB = 2.0f, kAlpha = 2.0f;

// Stops at the first failing call of a device's run, saying which.
#define DEMO_CHECK(call)                                                                                               \
  do {                                                                                                                 \
    ur_result_t demo_r_ = (call);                                                                                      \
    if (demo_r_ != UR_RESULT_SUCCESS) {                                                                                \
      std::printf("   FAILED: %s returned %s\n", #call, urinfo::result_name(demo_r_).c_str());                         \
      return false;                                                                                                    \
    }                                                                                                                  \
  } while (0)

ur_exp_kernel_arg_properties_t pointer_arg(uint32_t index, const void *p) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = p;
  return a;
}

ur_exp_kernel_arg_properties_t value_arg(uint32_t index, size_t size, const void *v) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  a.index = index;
  a.size = size;
  a.value.value = v;
  return a;
}

constexpr int kRounds = 48;
constexpr size_t kSample = 256; // elements of c checked per round

// Everything one device's run holds, released whatever happens.
struct DeviceRun {
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t add = nullptr, saxpy = nullptr;
  std::vector<ur_event_handle_t> events;
  std::vector<void *> plain; // synchronous allocations still live

  ur_event_handle_t *keep() {
    events.push_back(nullptr);
    return &events.back();
  }
  void release_events() {
    for (ur_event_handle_t e : events)
      if (e) urEventRelease(e);
    events.clear();
  }
  ~DeviceRun() {
    if (queue) urQueueFinish(queue);
    release_events();
    for (void *p : plain) urUSMFree(context, p);
    if (add) urKernelRelease(add);
    if (saxpy) urKernelRelease(saxpy);
    if (program) urProgramRelease(program);
    if (queue) urQueueRelease(queue);
    if (context) urContextRelease(context);
  }
};

float a_of(int round) { return 1.0f + round; }
float expected_of(int round) { return kAlpha * kB + (a_of(round) + kB); }

// The kernels of one round, on buffers that exist (or will, ordered by `ready`).
bool enqueue_round(DeviceRun &run, int round, float *a, float *b, float *c, ur_event_handle_t ready_a,
                   ur_event_handle_t ready_b, ur_event_handle_t ready_c, float *sample, ur_event_handle_t *done_ab,
                   ur_event_handle_t *done_c) {
  const size_t bytes = kElements * sizeof(float);
  const float va = a_of(round);
  ur_event_handle_t fill_a = nullptr, fill_b = nullptr, added = nullptr;
  DEMO_CHECK(
      urEnqueueUSMFill(run.queue, a, sizeof va, &va, bytes, ready_a ? 1 : 0, ready_a ? &ready_a : nullptr, &fill_a));
  run.events.push_back(fill_a);
  DEMO_CHECK(
      urEnqueueUSMFill(run.queue, b, sizeof kB, &kB, bytes, ready_b ? 1 : 0, ready_b ? &ready_b : nullptr, &fill_b));
  run.events.push_back(fill_b);
  ur_event_handle_t add_waits[3] = {fill_a, fill_b, ready_c};
  ur_exp_kernel_arg_properties_t add_args[3] = {pointer_arg(0, a), pointer_arg(1, b), pointer_arg(2, c)};
  DEMO_CHECK(urEnqueueKernelLaunchWithArgsExp(run.queue, run.add, 1, nullptr, &kElements, nullptr, 3, add_args, nullptr,
                                              ready_c ? 3 : 2, add_waits, &added));
  run.events.push_back(added);
  ur_exp_kernel_arg_properties_t saxpy_args[3] = {value_arg(0, sizeof kAlpha, &kAlpha), pointer_arg(1, b),
                                                  pointer_arg(2, c)};
  DEMO_CHECK(urEnqueueKernelLaunchWithArgsExp(run.queue, run.saxpy, 1, nullptr, &kElements, nullptr, 3, saxpy_args,
                                              nullptr, 1, &added, done_ab));
  run.events.push_back(*done_ab);
  DEMO_CHECK(urEnqueueUSMMemcpy(run.queue, false, sample, c, kSample * sizeof(float), 1, done_ab, done_c));
  run.events.push_back(*done_c);
  return true;
}

size_t wrong_rounds(const std::vector<float> &samples) {
  size_t wrong = 0;
  for (int r = 0; r < kRounds; ++r)
    for (size_t i = 0; i < kSample; ++i)
      if (std::fabs(samples[r * kSample + i] - expected_of(r)) > 1e-4f) {
        ++wrong;
        break;
      }
  return wrong;
}

// The rounds with stream-ordered allocation: nothing waits on the host until the end.
bool stream_ordered_rounds(DeviceRun &run, std::vector<float> &samples, double &ms) {
  const size_t bytes = kElements * sizeof(float);
  auto t0 = std::chrono::steady_clock::now();
  // Each round's allocs wait for the previous round's frees: ordered after them, they
  // may take the memory those frees release (the pool's reuse rule 1). Unordered,
  // the pool could not reuse it before the frees have run, and would grow instead.
  ur_event_handle_t freed[3] = {nullptr, nullptr, nullptr};
  for (int r = 0; r < kRounds; ++r) {
    void *buf[3] = {};
    ur_event_handle_t ready[3] = {}, done_ab = nullptr, done_c = nullptr;
    for (int i = 0; i < 3; ++i) {
      DEMO_CHECK(urEnqueueUSMDeviceAllocExp(run.queue, nullptr, bytes, nullptr, r ? 1 : 0, r ? &freed[i] : nullptr,
                                            &buf[i], &ready[i]));
      run.events.push_back(ready[i]);
    }
    if (!enqueue_round(run, r, static_cast<float *>(buf[0]), static_cast<float *>(buf[1]), static_cast<float *>(buf[2]),
                       ready[0], ready[1], ready[2], &samples[r * kSample], &done_ab, &done_c))
      return false;
    ur_event_handle_t last_use[3] = {done_ab, done_ab, done_c};
    for (int i = 0; i < 3; ++i) {
      DEMO_CHECK(urEnqueueUSMFreeExp(run.queue, nullptr, buf[i], 1, &last_use[i], &freed[i]));
      run.events.push_back(freed[i]);
    }
  }
  DEMO_CHECK(urQueueFinish(run.queue));
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run.release_events();
  return true;
}

// The same rounds with synchronous allocation: the host waits before each free.
bool synchronous_rounds(DeviceRun &run, std::vector<float> &samples, double &ms) {
  const size_t bytes = kElements * sizeof(float);
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kRounds; ++r) {
    float *buf[3] = {};
    for (float *&p : buf) {
      DEMO_CHECK(urUSMDeviceAlloc(run.context, run.device, nullptr, nullptr, bytes, reinterpret_cast<void **>(&p)));
      run.plain.push_back(p);
    }
    ur_event_handle_t done_ab = nullptr, done_c = nullptr;
    if (!enqueue_round(run, r, buf[0], buf[1], buf[2], nullptr, nullptr, nullptr, &samples[r * kSample], &done_ab,
                       &done_c))
      return false;
    DEMO_CHECK(urEventWait(1, &done_c));
    for (float *p : buf) DEMO_CHECK(urUSMFree(run.context, p));
    run.plain.clear();
    run.release_events();
  }
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

size_t pool_stat(ur_usm_pool_handle_t pool, ur_usm_pool_info_t what) {
  size_t v = 0;
  urUSMPoolGetInfoExp(pool, what, &v, nullptr);
  return v;
}

// Returns false on a failure; a device that cannot run the demo (no kernels for its
// backend, no stream-ordered allocation) is skipped with a note and counts as no failure.
bool run_on(const urinfo::FoundDevice &d, const std::string &kernel_dir) {
  std::printf("\n== %s  [%s:%u]\n", d.label().c_str(), d.backend_name.c_str(), d.backend_index);
  DeviceRun run;
  run.device = d.device;
  ur_bool_t async = false;
  urDeviceGetInfo(d.device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof async, &async, nullptr);
  if (!async) {
    std::printf("   skipped: the device reports no stream-ordered allocation\n");
    return true;
  }
  DEMO_CHECK(urContextCreate(1, &run.device, nullptr, &run.context));
  ur_queue_flags_t offered = 0;
  urDeviceGetInfo(run.device, UR_DEVICE_INFO_QUEUE_PROPERTIES, sizeof offered, &offered, nullptr);
  ur_queue_flags_t flags = offered & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
  DEMO_CHECK(urQueueCreate(run.context, run.device, &props, &run.queue));
  urinfo::TestProgram p = urinfo::load_test_program(kernel_dir, run.context, d);
  if (!p.skip_reason.empty()) {
    std::printf("   skipped: %s\n", p.skip_reason.c_str());
    return true;
  }
  if (!p.ok()) {
    std::printf("   FAILED: %s\n", p.problem().c_str());
    return false;
  }
  run.program = p.program;
  DEMO_CHECK(urKernelCreate(run.program, "vector_add", &run.add));
  DEMO_CHECK(urKernelCreate(run.program, "saxpy", &run.saxpy));
  std::printf(
      "   %d rounds of alloc a, b, c -> fill -> vector_add -> saxpy -> free, %zu MiB each buffer, on an %s queue\n",
      kRounds, kElements * sizeof(float) >> 20,
      flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE ? "out-of-order" : "in-order");

  std::vector<float> ordered(kRounds * kSample, 0.0f), sync(kRounds * kSample, 0.0f);
  double ordered_ms = 0, sync_ms = 0;
  // A warm-up round of each, so that neither pays for first use (kernel JIT, pool growth).
  std::vector<float> warm(kRounds * kSample);
  if (!stream_ordered_rounds(run, warm, ordered_ms) || !synchronous_rounds(run, warm, sync_ms)) return false;
  if (!stream_ordered_rounds(run, ordered, ordered_ms) || !synchronous_rounds(run, sync, sync_ms)) return false;

  ur_usm_pool_handle_t pool = nullptr;
  DEMO_CHECK(urUSMPoolGetDefaultDevicePoolExp(run.context, run.device, &pool));
  const double total_mib = 3.0 * kRounds * kElements * sizeof(float) / (1 << 20);
  std::printf("   stream-ordered: %8.2f ms   allocated %.0f MiB in total; the pool reserved at most %.0f MiB "
              "(used at most %.0f MiB)\n",
              ordered_ms, total_mib, pool_stat(pool, UR_USM_POOL_INFO_RESERVED_HIGH_EXP) / 1048576.0,
              pool_stat(pool, UR_USM_POOL_INFO_USED_HIGH_EXP) / 1048576.0);
  std::printf("   synchronous:    %8.2f ms   (urUSMDeviceAlloc / wait / urUSMFree every round)\n", sync_ms);
  std::printf("   stream-ordered takes %.2fx the time of synchronous allocation\n", ordered_ms / sync_ms);
  const size_t bad = wrong_rounds(ordered) + wrong_rounds(sync);
  std::printf("   results of all %d rounds, both ways: %s\n", kRounds, bad ? "WRONG" : "verified");
  if (bad) std::printf("   FAILED: %zu rounds computed wrong values\n", bad);
  return bad == 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1) {
    std::printf("usage: ordo-demo\nRuns a pipeline of stream-ordered allocations and kernels on every device\n"
                "the UR loader finds, beside the same pipeline with synchronous allocation\n"
                "(ONEAPI_DEVICE_SELECTOR picks devices).\n");
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  urinfo::StderrCapture capture;
  capture.start();
  ur_result_t r = urLoaderInit(0, nullptr);
  if (r != UR_RESULT_SUCCESS) {
    capture.stop();
    std::fprintf(stderr, "ordo-demo: urLoaderInit failed with %s\n", urinfo::result_name(r).c_str());
    return 1;
  }
  urinfo::Discovery found = urinfo::discover();
  found.log_lines = capture.stop();

  const char *dir = std::getenv("ORDO_KERNEL_DIR");
  const std::string kernel_dir = dir && *dir ? dir : ORDO_KERNEL_DIR;
  std::printf("ordo-demo: %zu device(s)\n", found.devices.size());
  if (found.devices.empty()) std::printf("no devices: %s\n", found.why_no_devices().c_str());
  int failures = 0;
  for (const urinfo::FoundDevice &d : found.devices) failures += run_on(d, kernel_dir) ? 0 : 1;

  urinfo::release(found);
  urLoaderTearDown();
  if (failures) std::printf("\nordo-demo: %d device(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
