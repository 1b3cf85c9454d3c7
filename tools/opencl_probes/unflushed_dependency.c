// SPDX-License-Identifier: Apache-2.0
/* Does an OpenCL runtime finish a command whose wait list holds a command of another
 * queue that nobody flushed? clWaitForEvents flushes only the queues of the events it
 * is given. Two shapes: A waits for B; A waits for B, which waits for C. Prints one
 * line per platform and shape; "HANG" (exit 2) when a wait does not return in 5 s.
 * docs/opencl.md ("Hangs on Intel's CPU runtime") has what it showed. OpenCL only: no
 * Ordo code runs here. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void on_alarm(int s) {
  (void)s;
  static const char msg[] = "HANG: clWaitForEvents did not return in 5 s\n";
  (void)!write(1, msg, sizeof msg - 1);
  _exit(2);
}

static int run(cl_context ctx, cl_device_id dev, int chain) {
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_int err = CL_SUCCESS;
  cl_command_queue qa = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  cl_command_queue qb = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  cl_command_queue qc = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
  int pattern = 7;
  cl_event ec = NULL, eb = NULL, ea = NULL;
  if (chain) {
    err = clEnqueueFillBuffer(qc, buf, &pattern, sizeof pattern, 0, 1 << 20, 0, NULL, &ec);
    err |= clEnqueueMarkerWithWaitList(qb, 1, &ec, &eb);
  } else {
    err = clEnqueueFillBuffer(qb, buf, &pattern, sizeof pattern, 0, 1 << 20, 0, NULL, &eb);
  }
  err |= clEnqueueMarkerWithWaitList(qa, 1, &eb, &ea);
  if (err != CL_SUCCESS) return printf("  enqueue failed (%d)\n", err), 1;
  alarm(5);
  err = clWaitForEvents(1, &ea); /* flushes qa only */
  alarm(0);
  printf("  %s: clWaitForEvents returned %d\n",
         chain ? "A <- B <- C, B and C never flushed" : "A <- B, B never flushed", err);
  if (ec) clReleaseEvent(ec);
  clReleaseEvent(eb);
  clReleaseEvent(ea);
  clReleaseMemObject(buf);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qb);
  clReleaseCommandQueue(qc);
  return err != CL_SUCCESS;
}

int main(void) {
  cl_platform_id platforms[8];
  cl_uint n = 0;
  clGetPlatformIDs(8, platforms, &n);
  signal(SIGALRM, on_alarm);
  int failed = 0;
  for (cl_uint p = 0; p < n; ++p) {
    char name[256] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
    cl_device_id dev;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) continue;
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    printf("%s\n", name);
    failed |= run(ctx, dev, 0) | run(ctx, dev, 1);
    clReleaseContext(ctx);
  }
  return failed;
}
