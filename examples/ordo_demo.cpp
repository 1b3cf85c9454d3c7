// ordo-demo: on every device the loader finds, a small pipeline of dependent commands on
// an out-of-order queue, ordered by explicit wait lists:
//
//     fill a ─┐
//             ├─> vector_add c = a + b ─> saxpy c = 2 b + c ─> copy c back
//     fill b ─┘
//
// It checks the result and prints what ran where and how long each step took (event
// profiling). The kernels are Ordo's test kernels (test/kernels/), found in the build tree.
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

struct Step {
  const char *what;
  ur_event_handle_t event = nullptr;
};

// Stops at the first failing call of a device's run, saying which.
#define DEMO_CHECK(call)                                                                  \
  do {                                                                                    \
    ur_result_t demo_r_ = (call);                                                         \
    if (demo_r_ != UR_RESULT_SUCCESS) {                                                   \
      std::printf("   FAILED: %s returned %s\n", #call, urinfo::result_name(demo_r_).c_str()); \
      return false;                                                                       \
    }                                                                                     \
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

// Microseconds between start and end of a profiled command, or -1 when unknown.
double step_micros(ur_event_handle_t e) {
  uint64_t start = 0, end = 0;
  if (urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_START, sizeof start, &start, nullptr) != UR_RESULT_SUCCESS ||
      urEventGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, sizeof end, &end, nullptr) != UR_RESULT_SUCCESS)
    return -1;
  return (end - start) / 1000.0;
}

// Everything one device's run holds, released whatever happens.
struct DeviceRun {
  ur_context_handle_t context = nullptr;
  ur_queue_handle_t queue = nullptr;
  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t add = nullptr, saxpy = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<Step> steps;

  ~DeviceRun() {
    if (queue) urQueueFinish(queue);
    for (Step &s : steps)
      if (s.event) urEventRelease(s.event);
    for (float *p : {a, b, c})
      if (p) urUSMFree(context, p);
    if (add) urKernelRelease(add);
    if (saxpy) urKernelRelease(saxpy);
    if (program) urProgramRelease(program);
    if (queue) urQueueRelease(queue);
    if (context) urContextRelease(context);
  }
};

// Returns false on a failure; a device that cannot run the demo (no kernels for its
// backend) is skipped with a note and counts as no failure.
bool run_on(const urinfo::FoundDevice &d, const std::string &kernel_dir) {
  std::printf("\n== %s  [%s:%u]\n", d.label().c_str(), d.backend_name.c_str(), d.backend_index);
  DeviceRun run;
  ur_device_handle_t dev = d.device;
  DEMO_CHECK(urContextCreate(1, &dev, nullptr, &run.context));

  ur_queue_flags_t offered = 0;
  urDeviceGetInfo(dev, UR_DEVICE_INFO_QUEUE_PROPERTIES, sizeof offered, &offered, nullptr);
  ur_queue_flags_t flags = offered & (UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE | UR_QUEUE_FLAG_PROFILING_ENABLE);
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
  DEMO_CHECK(urQueueCreate(run.context, dev, &props, &run.queue));
  std::printf("   queue: %s, profiling %s\n",
              flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE ? "out-of-order" : "in-order (no out-of-order queues)",
              flags & UR_QUEUE_FLAG_PROFILING_ENABLE ? "on" : "off (not offered)");

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
  std::printf("   program: %s (%s)\n", p.path.c_str(), p.how.c_str());
  DEMO_CHECK(urKernelCreate(run.program, "vector_add", &run.add));
  DEMO_CHECK(urKernelCreate(run.program, "saxpy", &run.saxpy));

  const size_t bytes = kElements * sizeof(float);
  for (float **buffer : {&run.a, &run.b, &run.c})
    DEMO_CHECK(urUSMDeviceAlloc(run.context, dev, nullptr, nullptr, bytes, reinterpret_cast<void **>(buffer)));

  auto t0 = std::chrono::steady_clock::now();
  run.steps = {{"fill a"}, {"fill b"}, {"vector_add c = a + b"}, {"saxpy c = 2 b + c"}, {"copy c to host"}};
  Step *s = run.steps.data();
  DEMO_CHECK(urEnqueueUSMFill(run.queue, run.a, sizeof kA, &kA, bytes, 0, nullptr, &s[0].event));
  DEMO_CHECK(urEnqueueUSMFill(run.queue, run.b, sizeof kB, &kB, bytes, 0, nullptr, &s[1].event));

  ur_event_handle_t both_fills[2] = {s[0].event, s[1].event};
  ur_exp_kernel_arg_properties_t add_args[3] = {pointer_arg(0, run.a), pointer_arg(1, run.b), pointer_arg(2, run.c)};
  DEMO_CHECK(urEnqueueKernelLaunchWithArgsExp(run.queue, run.add, 1, nullptr, &kElements, nullptr, 3, add_args,
                                              nullptr, 2, both_fills, &s[2].event));

  ur_exp_kernel_arg_properties_t saxpy_args[3] = {value_arg(0, sizeof kAlpha, &kAlpha), pointer_arg(1, run.b),
                                                  pointer_arg(2, run.c)};
  DEMO_CHECK(urEnqueueKernelLaunchWithArgsExp(run.queue, run.saxpy, 1, nullptr, &kElements, nullptr, 3, saxpy_args,
                                              nullptr, 1, &s[2].event, &s[3].event));

  std::vector<float> host(kElements, 0.0f);
  DEMO_CHECK(urEnqueueUSMMemcpy(run.queue, false, host.data(), run.c, bytes, 1, &s[3].event, &s[4].event));
  DEMO_CHECK(urEventWait(1, &s[4].event));
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  for (const Step &step : run.steps) {
    double us = step_micros(step.event);
    if (us >= 0) std::printf("   %-24s %10.1f us\n", step.what, us);
    else std::printf("   %-24s %10s\n", step.what, "done");
  }

  const float expected = kAlpha * kB + (kA + kB);
  size_t wrong = 0;
  for (float v : host) wrong += std::fabs(v - expected) > 1e-6f;
  std::printf("   %zu elements, c[i] == %.2f: %s   (%.2f ms wall, enqueue to result)\n", kElements, expected,
              wrong ? "WRONG" : "verified", wall_ms);
  if (wrong) std::printf("   FAILED: %zu elements differ (c[0] = %f)\n", wrong, host[0]);
  return wrong == 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1) {
    std::printf("usage: ordo-demo\nRuns a pipeline of dependent kernels on every device the UR loader finds\n"
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
