// SPDX-License-Identifier: Apache-2.0
/* What does an OpenCL runtime answer for a wait list holding an event of another context?
 * OpenCL makes that invalid: the events of a clEnqueue* wait list must be of the queue's
 * context, and the call returns CL_INVALID_CONTEXT otherwise. Per platform: two contexts
 * on the same device; the event is a completed marker of context B; on an out-of-order
 * queue of context A, each case in a forked child (a crash ends only that case), one of
 * a marker, a barrier, a buffer fill and a non-blocking buffer write with that event in
 * its wait list, then clFinish. One line per case: the enqueue's code and clFinish's, or
 * "... the process died" where the child crashed. Exit 1 when an enqueue took the event
 * or a case crashed. OpenCL only: no Ordo code runs here. docs/bad-input.md ("Found")
 * has what it showed. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kMarker, kBarrier, kFill, kWrite, kCases };
static const char *const kNames[kCases] = {"clEnqueueMarkerWithWaitList", "clEnqueueBarrierWithWaitList",
                                           "clEnqueueFillBuffer", "clEnqueueWriteBuffer (non-blocking)"};

/* Runs in the child: 0 when the enqueue was refused, 1 when it was taken. */
static int one_case(cl_device_id dev, int which) {
  cl_int err = CL_SUCCESS;
  cl_context a = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_context b = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue qa = clCreateCommandQueueWithProperties(a, dev, ooo, &err);
  cl_command_queue qb = clCreateCommandQueueWithProperties(b, dev, NULL, &err);
  cl_event foreign = NULL, out = NULL;
  clEnqueueMarkerWithWaitList(qb, 0, NULL, &foreign);
  clFinish(qb);
  static unsigned char host[4096];
  cl_mem buf = clCreateBuffer(a, CL_MEM_READ_WRITE, sizeof host, NULL, &err);
  int pattern = 5;
  printf("    %s: ", kNames[which]);
  fflush(stdout);
  switch (which) {
  case kMarker: err = clEnqueueMarkerWithWaitList(qa, 1, &foreign, &out); break;
  case kBarrier: err = clEnqueueBarrierWithWaitList(qa, 1, &foreign, &out); break;
  case kFill: err = clEnqueueFillBuffer(qa, buf, &pattern, 2, 886, 1696, 1, &foreign, &out); break;
  default: err = clEnqueueWriteBuffer(qa, buf, CL_FALSE, 0, sizeof host, host, 1, &foreign, &out); break;
  }
  printf("returned %d%s", err, err == CL_INVALID_CONTEXT ? " (CL_INVALID_CONTEXT)" : "");
  fflush(stdout);
  cl_int fin = clFinish(qa);
  printf("; clFinish %d\n", fin);
  fflush(stdout);
  if (out) clReleaseEvent(out);
  clReleaseEvent(foreign);
  clReleaseMemObject(buf);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qb);
  clReleaseContext(a);
  clReleaseContext(b);
  return err == CL_SUCCESS;
}

/* The child finds the platform itself: a runtime started before fork() would be missing
 * its threads in the child. Exit 3: no such platform. */
static int child_main(cl_uint p, int which) {
  cl_platform_id platforms[8];
  cl_uint n = 0;
  clGetPlatformIDs(8, platforms, &n);
  cl_device_id dev;
  if (p >= n || clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) return 3;
  if (which == 0) {
    char name[256] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
    printf("%s: an event of another context in the wait list of\n", name);
    fflush(stdout);
  }
  return one_case(dev, which);
}

int main(void) {
  int took = 0;
  for (cl_uint p = 0; p < 8; ++p) {
    for (int which = 0; which < kCases; ++which) {
      fflush(stdout);
      pid_t child = fork();
      if (child == 0) _exit(child_main(p, which));
      int status = 0;
      waitpid(child, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return took;
      if (WIFSIGNALED(status)) {
        printf(" ... the process died of signal %d (%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
        took = 1;
      } else {
        took |= WEXITSTATUS(status) == 1;
      }
    }
  }
  return took;
}
