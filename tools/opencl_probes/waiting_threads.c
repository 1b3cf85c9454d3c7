// SPDX-License-Identifier: Apache-2.0
/* Several threads enqueue a fill and a marker on one out-of-order queue and wait for
 * their own marker, round after round: the pattern under which Ordo's suite saw Intel's
 * CPU runtime stay in clWaitForEvents. `waiting_threads [threads] [rounds]`; "HANG"
 * (exit 2) when the whole run takes over 60 s. docs/opencl.md has what it showed.
 * OpenCL only: no Ordo code runs here. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static cl_command_queue queue;
static cl_mem buffer;
static int rounds = 2000;

static void on_alarm(int s) {
  (void)s;
  static const char msg[] = "HANG: the waits did not all return within 60 s\n";
  (void)!write(1, msg, sizeof msg - 1);
  _exit(2);
}

static void *worker(void *arg) {
  const long id = (long)arg;
  const int pattern = (int)id;
  for (int i = 0; i < rounds; ++i) {
    cl_event fill, marker;
    if (clEnqueueFillBuffer(queue, buffer, &pattern, sizeof pattern, (size_t)id * 4096, 4096, 0, NULL, &fill) !=
        CL_SUCCESS)
      return NULL;
    clEnqueueMarkerWithWaitList(queue, 1, &fill, &marker);
    clWaitForEvents(1, &marker);
    clReleaseEvent(fill);
    clReleaseEvent(marker);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 8;
  if (threads < 1 || threads > 64) threads = 8;
  if (argc > 2) rounds = atoi(argv[2]);
  cl_platform_id platform;
  cl_device_id dev;
  if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
    return printf("no OpenCL device\n"), 1;
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  queue = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
  buffer = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 4096, NULL, &err);
  signal(SIGALRM, on_alarm);
  alarm(60);
  pthread_t t[64];
  for (long i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  printf("%d threads x %d rounds on one out-of-order queue: done\n", threads, rounds);
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(queue);
  clReleaseContext(ctx);
  return 0;
}
