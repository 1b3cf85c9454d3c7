// SPDX-License-Identifier: Apache-2.0
/* Does clMemBlockingFreeINTEL wait for an enqueued USM command that uses the memory?
 * cl_intel_unified_shared_memory makes it block until the commands enqueued before it
 * that may use the allocation have completed (clMemFreeINTEL is the one that does not);
 * a USM pointer anywhere inside an allocation is a valid argument of clEnqueueMemcpyINTEL.
 *
 * Per platform with that extension, on an in-order queue: clEnqueueMemcpyINTEL from a
 * host allocation `src` waits for a user event; the main thread calls
 * clMemBlockingFreeINTEL(src); a second thread sets the user event 200 ms later, to
 * CL_COMPLETE while the free is still blocked (it waited: the copy runs first), or to an
 * error status when the free has already returned (it did not wait: the copy is then
 * terminated instead of reading freed memory). Two shapes: the copy reads from `src`
 * itself, and from `src + 64` (an interior pointer). Prints one line per shape; exit 1
 * when a free did not wait. With "--run-copy" a copy the free did not wait for is let run
 * (on freed memory: on Intel's CPU runtime it then crashes in its copy code, as
 * ordo-bad-input's batches did; docs/bad-input.md, "Found").
 * OpenCL only: no Ordo code runs here.
 *   ordo-cl-blocking_free_pending [--run-copy] [MiB (default 64)] */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  clHostMemAllocINTEL_fn host_alloc;
  clMemBlockingFreeINTEL_fn blocking_free;
  clEnqueueMemcpyINTEL_fn memcpy;
} usm_fns;

typedef struct {
  cl_event gate;
  atomic_int free_returned;
  int run_copy;
} gate_keeper;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *open_gate_later(void *arg) {
  gate_keeper *k = arg;
  usleep(200 * 1000);
  /* A free that already returned did not wait: terminate the copy unless asked to run it. */
  int early = atomic_load(&k->free_returned);
  clSetUserEventStatus(k->gate, early && !k->run_copy ? -1 : CL_COMPLETE);
  return NULL;
}

/* Returns 1 when the free did not wait for the copy. */
static int run(const usm_fns *f, cl_context ctx, cl_command_queue q, size_t bytes, size_t offset, int run_copy) {
  cl_int err = CL_SUCCESS;
  char *src = f->host_alloc(ctx, NULL, bytes, 0, &err);
  char *dst = f->host_alloc(ctx, NULL, bytes, 0, &err);
  if (!src || !dst) return printf("  host alloc of %zu bytes failed (%d)\n", bytes, err), 0;
  memset(src, 7, bytes);
  gate_keeper k = {clCreateUserEvent(ctx, &err), 0, run_copy};
  cl_event copy = NULL;
  err = f->memcpy(q, CL_FALSE, dst + offset, src + offset, bytes - offset, 1, &k.gate, &copy);
  if (err != CL_SUCCESS) return printf("  clEnqueueMemcpyINTEL failed (%d)\n", err), 0;
  clFlush(q);
  pthread_t keeper;
  pthread_create(&keeper, NULL, open_gate_later, &k);
  double t0 = now_ms();
  err = f->blocking_free(ctx, src);
  double took = now_ms() - t0;
  atomic_store(&k.free_returned, 1);
  cl_int status = 0;
  clGetEventInfo(copy, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  int waited = status == CL_COMPLETE;
  printf("  copy from src+%zu: clMemBlockingFreeINTEL(src) returned %d after %.1f ms, the copy's status then %d: %s\n",
         offset, err, took, status, waited ? "it waited" : "DID NOT WAIT");
  fflush(stdout);
  pthread_join(keeper, NULL);
  cl_int werr = clWaitForEvents(1, &copy);
  printf("    clWaitForEvents(copy) afterwards: %d%s\n", werr,
         waited || run_copy ? "" : " (terminated by the probe, so as not to read freed memory)");
  clReleaseEvent(k.gate);
  clReleaseEvent(copy);
  f->blocking_free(ctx, dst);
  return !waited;
}

int main(int argc, char **argv) {
  int run_copy = 0;
  size_t mib = 64;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--run-copy") == 0)
      run_copy = 1;
    else
      mib = (size_t)atoi(argv[i]);
  }
  cl_platform_id platforms[8];
  cl_uint n = 0;
  clGetPlatformIDs(8, platforms, &n);
  int failed = 0;
  for (cl_uint p = 0; p < n; ++p) {
    char name[256] = "", version[256] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
    clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof version, version, NULL);
    printf("%s (%s)\n", name, version);
    usm_fns f = {
        (clHostMemAllocINTEL_fn)clGetExtensionFunctionAddressForPlatform(platforms[p], "clHostMemAllocINTEL"),
        (clMemBlockingFreeINTEL_fn)clGetExtensionFunctionAddressForPlatform(platforms[p], "clMemBlockingFreeINTEL"),
        (clEnqueueMemcpyINTEL_fn)clGetExtensionFunctionAddressForPlatform(platforms[p], "clEnqueueMemcpyINTEL")};
    if (!f.host_alloc || !f.blocking_free || !f.memcpy) {
      printf("  no cl_intel_unified_shared_memory: skipped\n");
      continue;
    }
    cl_device_id dev;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) continue;
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    failed |= run(&f, ctx, q, mib << 20, 0, run_copy);
    failed |= run(&f, ctx, q, mib << 20, 64, run_copy);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
  }
  return failed;
}
