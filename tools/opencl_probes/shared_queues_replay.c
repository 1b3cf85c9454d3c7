// SPDX-License-Identifier: Apache-2.0
/* The OpenCL calls Ordo's urStressTest.SharedQueuesManyThreads makes on Intel's CPU
 * runtime, as tools/opencl_probes/cl_trace.c recorded them, replayed without Ordo:
 * one context, one in-order and one out-of-order queue shared by eight threads. Each
 * thread, round after round, alternating between the two queues:
 *
 *   p = clDeviceMemAllocINTEL(16 KiB)
 *   k1 = fill(p, v)                 wait list empty
 *   k2 = increment(p)               waits for k1
 *   c  = clEnqueueMemcpyINTEL(host <- p, non-blocking)   waits for k2
 *   clWaitForEvents(c); check host == v + 1; release k1 k2 c
 *   free: under one process-wide lock, clFinish(in-order), clFinish(out-of-order),
 *         clMemBlockingFreeINTEL(p)     (what Ordo's urUSMFree does; "-n" leaves it out
 *         and frees at the end of the round set instead)
 *
 * Every command waits only for commands of its own queue, every wait is clWaitForEvents
 * or clFinish (both flush), so nothing is left unflushed and the sequence is valid
 * OpenCL. `shared_queues_replay [-n] [-w] [-o|-i|-p] [sets] [threads] [rounds]`: sets of
 * `threads` x `rounds` (defaults 20, 8, 40), queues made fresh for each set; "-o" or "-i"
 * puts every round on the out-of-order or the in-order queue (both are still made and
 * finished at each free); "-p" gives each thread a queue of its own, out-of-order for odd
 * threads (the shape of urAsyncAllocTest.ThreadsShareOnePool), finished before its frees;
 * "-w" waits for each copy by clFlush and polling its status instead of clWaitForEvents. Prints "HANG" and exits
 * 2 when no round completes for 20 s; exit 1 on an error or a wrong value.
 * docs/opencl.md has what it showed. OpenCL only: no Ordo code runs here. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ELEMENTS 4096
#define MAX_THREADS 64

static const char *source = "__kernel void fill(__global uint *p, uint v) { p[get_global_id(0)] = v; }\n"
                            "__kernel void increment(__global uint *p) { p[get_global_id(0)] += 1; }\n";

static cl_context ctx;
static cl_device_id dev;
static cl_program program;
static cl_command_queue in_order, out_of_order;
static int threads = 8, rounds = 40, free_each_round = 1, queue_choice = 0; /* 0 both, 'o', 'i' or 'p' */
static int poll_waits; /* -w: clFlush, then poll the event's status instead of clWaitForEvents */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long progress;
static volatile int failed;

static clDeviceMemAllocINTEL_fn device_alloc;
static clMemBlockingFreeINTEL_fn blocking_free;
static clEnqueueMemcpyINTEL_fn usm_memcpy;
static clSetKernelArgMemPointerINTEL_fn set_arg_ptr;

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    cl_int err_ = (call);                                                                                              \
    if (err_ != CL_SUCCESS) {                                                                                          \
      printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #call, err_);                                                     \
      failed = 1;                                                                                                      \
      return NULL;                                                                                                     \
    }                                                                                                                  \
  } while (0)

/* Ordo's urUSMFree: finish every queue of the context, then the blocking free. */
static cl_int free_like_ordo(void *p) {
  pthread_mutex_lock(&free_lock);
  cl_int err = clFinish(in_order);
  if (err == CL_SUCCESS) err = clFinish(out_of_order);
  if (err == CL_SUCCESS) err = blocking_free(ctx, p);
  pthread_mutex_unlock(&free_lock);
  return err;
}

static void *worker(void *arg) {
  const int t = (int)(long)arg;
  cl_int err = CL_SUCCESS;
  cl_kernel fill = clCreateKernel(program, "fill", &err);
  CHECK(err);
  cl_kernel inc = clCreateKernel(program, "increment", &err);
  CHECK(err);
  static __thread cl_uint host[ELEMENTS];
  void *kept[256];
  int nkept = 0;
  const size_t global = ELEMENTS;
  cl_command_queue own = NULL;
  if (queue_choice == 'p') {
    cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    own = clCreateCommandQueueWithProperties(ctx, dev, t % 2 ? ooo : NULL, &err);
    CHECK(err);
  }
  for (int i = 0; i < rounds && !failed; ++i) {
    cl_command_queue q = own                   ? own
                         : queue_choice == 'o' ? out_of_order
                         : queue_choice == 'i' ? in_order
                         : (i + t) % 2         ? in_order
                                               : out_of_order;
    void *p = device_alloc(ctx, dev, NULL, ELEMENTS * 4, 0, &err);
    CHECK(err);
    const cl_uint value = (cl_uint)(t * 1000 + i);
    cl_event k1, k2, copy;
    CHECK(set_arg_ptr(fill, 0, p));
    CHECK(clSetKernelArg(fill, 1, sizeof value, &value));
    CHECK(clEnqueueNDRangeKernel(q, fill, 1, NULL, &global, NULL, 0, NULL, &k1));
    CHECK(set_arg_ptr(inc, 0, p));
    CHECK(clEnqueueNDRangeKernel(q, inc, 1, NULL, &global, NULL, 1, &k1, &k2));
    CHECK(usm_memcpy(q, CL_FALSE, host, p, ELEMENTS * 4, 1, &k2, &copy));
    if (poll_waits) {
      CHECK(clFlush(q));
      cl_int status = CL_QUEUED;
      while (status > CL_COMPLETE) {
        CHECK(clGetEventInfo(copy, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        if (status > CL_COMPLETE) usleep(20);
      }
      CHECK(status);
    } else {
      CHECK(clWaitForEvents(1, &copy));
    }
    for (int j = 0; j < ELEMENTS; ++j)
      if (host[j] != value + 1) {
        printf("thread %d round %d: element %d is %u, not %u\n", t, i, j, host[j], value + 1);
        failed = 1;
        break;
      }
    clReleaseEvent(k1);
    clReleaseEvent(k2);
    clReleaseEvent(copy);
    if (free_each_round && own) {
      CHECK(clFinish(own));
      CHECK(blocking_free(ctx, p));
    } else if (free_each_round)
      CHECK(free_like_ordo(p));
    else if (nkept < 256)
      kept[nkept++] = p;
    __atomic_add_fetch(&progress, 1, __ATOMIC_RELAXED);
  }
  for (int i = 0; i < nkept; ++i) CHECK(free_like_ordo(kept[i]));
  if (own) {
    CHECK(clFinish(own));
    clReleaseCommandQueue(own);
  }
  clReleaseKernel(fill);
  clReleaseKernel(inc);
  return NULL;
}

/* Reports a hang: no round finished for 20 s. */
static void *watchdog(void *arg) {
  (void)arg;
  unsigned long last = (unsigned long)-1;
  int still = 0;
  for (;;) {
    sleep(1);
    unsigned long now = __atomic_load_n(&progress, __ATOMIC_RELAXED);
    still = now == last ? still + 1 : 0;
    last = now;
    if (still >= 20) {
      printf("HANG: no round finished for 20 s (%lu rounds done)\n", now);
      fflush(stdout);
      _exit(2);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int arg = 1;
  for (; argc > arg && argv[arg][0] == '-'; ++arg)
    if (!strcmp(argv[arg], "-n"))
      free_each_round = 0;
    else if (!strcmp(argv[arg], "-w"))
      poll_waits = 1;
    else if (!strcmp(argv[arg], "-o") || !strcmp(argv[arg], "-i") || !strcmp(argv[arg], "-p"))
      queue_choice = argv[arg][1];
    else
      return printf("usage: %s [-n] [-w] [-o|-i|-p] [sets] [threads] [rounds]\n", argv[0]), 1;
  int sets = argc > arg ? atoi(argv[arg]) : 20;
  if (argc > arg + 1) threads = atoi(argv[arg + 1]);
  if (argc > arg + 2) rounds = atoi(argv[arg + 2]);
  if (threads < 1 || threads > MAX_THREADS) threads = 8;
  cl_platform_id platform;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
    return printf("no OpenCL device\n"), 1;
  device_alloc = (clDeviceMemAllocINTEL_fn)clGetExtensionFunctionAddressForPlatform(platform, "clDeviceMemAllocINTEL");
  blocking_free =
      (clMemBlockingFreeINTEL_fn)clGetExtensionFunctionAddressForPlatform(platform, "clMemBlockingFreeINTEL");
  usm_memcpy = (clEnqueueMemcpyINTEL_fn)clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueMemcpyINTEL");
  set_arg_ptr = (clSetKernelArgMemPointerINTEL_fn)clGetExtensionFunctionAddressForPlatform(
      platform, "clSetKernelArgMemPointerINTEL");
  if (!device_alloc || !blocking_free || !usm_memcpy || !set_arg_ptr)
    return printf("SKIP: the platform has no cl_intel_unified_shared_memory\n"), 77;
  cl_int err = CL_SUCCESS;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS) return printf("clCreateContext: %d\n", err), 1;
  program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  if (err != CL_SUCCESS || clBuildProgram(program, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
    return printf("cannot build the kernels\n"), 1;
  pthread_t dog;
  pthread_create(&dog, NULL, watchdog, NULL);
  for (int s = 0; s < sets && !failed; ++s) {
    cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    in_order = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (err == CL_SUCCESS) out_of_order = clCreateCommandQueueWithProperties(ctx, dev, ooo, &err);
    if (err != CL_SUCCESS) return printf("cannot create the queues: %d\n", err), 1;
    pthread_t t[MAX_THREADS];
    for (long i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    clFinish(in_order);
    clFinish(out_of_order);
    clReleaseCommandQueue(in_order);
    clReleaseCommandQueue(out_of_order);
  }
  if (failed) return printf("FAILED\n"), 1;
  printf("%d sets of %d threads x %d rounds on an in-order and an out-of-order queue: done\n", sets, threads, rounds);
  clReleaseProgram(program);
  clReleaseContext(ctx);
  return 0;
}
