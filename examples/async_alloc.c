// SPDX-License-Identifier: Apache-2.0
/*
 * async_alloc: stream-ordered allocation in plain C.
 *
 * On each device that reports UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, an
 * in-order queue runs
 *
 *     urEnqueueUSMDeviceAllocExp  ->  kernel "fill" into the new memory
 *                                 ->  copy to the host
 *                                 ->  urEnqueueUSMFreeExp
 *
 * without the host waiting in between: the queue's order is what makes the memory
 * valid for the kernel and safe to free. Devices without support say so.
 * docs/async-alloc.md states the rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ur_api.h"

#define N 4096u

/* Stops the current device's run at the first failing call. */
#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    ur_result_t r_ = (call);                                                                                           \
    if (r_ != UR_RESULT_SUCCESS) {                                                                                     \
      printf("  FAILED: %s returned %d\n", #call, (int)r_);                                                            \
      goto done;                                                                                                       \
    }                                                                                                                  \
  } while (0)

static const char *backend_folder(ur_backend_t b) {
  switch (b) {
  case UR_BACKEND_NATIVE_CPU: return "native_cpu";
  case UR_BACKEND_OPENCL: return "opencl";
  case UR_BACKEND_CUDA: return "cuda";
  case UR_BACKEND_LEVEL_ZERO: return "level_zero";
  default: return NULL;
  }
}

/* Reads a whole file; NULL if it is not there. */
static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *data = NULL;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = malloc((size_t)n);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
      free(data);
      data = NULL;
    }
    *size = (size_t)n;
  }
  fclose(f);
  return data;
}

/* The test-kernel program for the device (test/kernels/README.md), built; NULL if none. */
static ur_program_handle_t load_kernels(ur_context_handle_t ctx, ur_device_handle_t dev, ur_backend_t backend) {
  const char *dir = getenv("ORDO_KERNEL_DIR");
  const char *folder = backend_folder(backend);
  char path[4096], il[256] = "";
  int as_il = 0;
  size_t size = 0;
  unsigned char *bytes;
  ur_program_handle_t program = NULL;
  const char *ext = ".so";
  if (!folder) return NULL;
  if (backend == UR_BACKEND_CUDA) ext = ".ptx";
  if (backend == UR_BACKEND_OPENCL || backend == UR_BACKEND_LEVEL_ZERO) {
    urDeviceGetInfo(dev, UR_DEVICE_INFO_IL_VERSION, sizeof il, il, NULL);
    as_il = il[0] != '\0' || backend == UR_BACKEND_LEVEL_ZERO;
    ext = as_il ? ".spv" : ".bc";
  }
  snprintf(path, sizeof path, "%s/%s/ordo_test_kernels%s", dir && *dir ? dir : ORDO_KERNEL_DIR, folder, ext);
  bytes = read_file(path, &size);
  if (!bytes) {
    printf("  (no test kernels at %s: the example fills with urEnqueueUSMFill instead)\n", path);
    return NULL;
  }
  if (as_il) {
    if (urProgramCreateWithIL(ctx, bytes, size, NULL, &program) != UR_RESULT_SUCCESS) program = NULL;
  } else {
    const uint8_t *data = bytes;
    if (urProgramCreateWithBinary(ctx, 1, &dev, &size, &data, NULL, &program) != UR_RESULT_SUCCESS) program = NULL;
  }
  free(bytes);
  if (program && urProgramBuild(ctx, program, NULL) != UR_RESULT_SUCCESS) {
    urProgramRelease(program);
    program = NULL;
  }
  return program;
}

/* Returns 0 on success or when the device does not support the feature. */
static int run_on(ur_device_handle_t dev, ur_backend_t backend) {
  char name[256] = "";
  ur_bool_t supported = 0;
  ur_context_handle_t ctx = NULL;
  ur_queue_handle_t queue = NULL;
  ur_program_handle_t program = NULL;
  ur_kernel_handle_t fill = NULL;
  ur_event_handle_t allocated = NULL, filled = NULL, copied = NULL, freed = NULL;
  uint32_t *mem = NULL;
  uint32_t host[N];
  const uint32_t value = 0xA11C;
  size_t global = N, i;
  int failed = 1;

  urDeviceGetInfo(dev, UR_DEVICE_INFO_NAME, sizeof name, name, NULL);
  printf("%s\n", name);
  if (urDeviceGetInfo(dev, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, sizeof supported, &supported, NULL) !=
          UR_RESULT_SUCCESS ||
      !supported) {
    printf("  stream-ordered allocation not supported on %s\n", name);
    return 0;
  }

  CHECK(urContextCreate(1, &dev, NULL, &ctx));
  CHECK(urQueueCreate(ctx, dev, NULL, &queue)); /* in-order: each command follows the last */

  /* 1. The allocation is a command: the pointer comes back now, usable by later commands. */
  CHECK(urEnqueueUSMDeviceAllocExp(queue, NULL, N * sizeof(uint32_t), NULL, 0, NULL, (void **)&mem, &allocated));

  /* 2. A kernel writes into it. */
  program = load_kernels(ctx, dev, backend);
  if (program) {
    ur_exp_kernel_arg_properties_t args[2];
    memset(args, 0, sizeof args);
    args[0].stype = args[1].stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
    args[0].type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
    args[0].index = 0;
    args[0].size = sizeof(void *);
    args[0].value.pointer = mem;
    args[1].type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
    args[1].index = 1;
    args[1].size = sizeof value;
    args[1].value.value = &value;
    CHECK(urKernelCreate(program, "fill", &fill));
    CHECK(urEnqueueKernelLaunchWithArgsExp(queue, fill, 1, NULL, &global, NULL, 2, args, NULL, 0, NULL, &filled));
  } else {
    CHECK(urEnqueueUSMFill(queue, mem, sizeof value, &value, N * sizeof(uint32_t), 0, NULL, &filled));
  }

  /* 3. Copy the result out, 4. free the memory: both ordered after the kernel. */
  CHECK(urEnqueueUSMMemcpy(queue, 0, host, mem, sizeof host, 0, NULL, &copied));
  CHECK(urEnqueueUSMFreeExp(queue, NULL, mem, 0, NULL, &freed));
  mem = NULL;

  /* The host waits once, at the end. */
  CHECK(urEventWait(1, &freed));
  for (i = 0; i < N && host[i] == value; ++i) {
  }
  printf("  alloc -> %s -> copy -> free on one in-order queue: %s\n", program ? "kernel fill" : "fill",
         i == N ? "verified" : "WRONG");
  failed = i != N;

done:
  if (queue) urQueueFinish(queue);
  if (mem) urUSMFree(ctx, mem);
  if (allocated) urEventRelease(allocated);
  if (filled) urEventRelease(filled);
  if (copied) urEventRelease(copied);
  if (freed) urEventRelease(freed);
  if (fill) urKernelRelease(fill);
  if (program) urProgramRelease(program);
  if (queue) urQueueRelease(queue);
  if (ctx) urContextRelease(ctx);
  return failed;
}

int main(void) {
  uint32_t num_adapters = 0, a, p, d;
  ur_adapter_handle_t adapters[16];
  int failures = 0, devices = 0;

  if (urLoaderInit(0, NULL) != UR_RESULT_SUCCESS) {
    fprintf(stderr, "async_alloc: urLoaderInit failed\n");
    return 1;
  }
  urAdapterGet(16, adapters, &num_adapters);
  if (num_adapters > 16) num_adapters = 16;
  for (a = 0; a < num_adapters; ++a) {
    ur_platform_handle_t platforms[16];
    uint32_t num_platforms = 0;
    if (urPlatformGet(adapters[a], 16, platforms, &num_platforms) != UR_RESULT_SUCCESS) continue;
    if (num_platforms > 16) num_platforms = 16;
    for (p = 0; p < num_platforms; ++p) {
      ur_device_handle_t devs[16];
      uint32_t num_devices = 0;
      ur_backend_t backend = UR_BACKEND_UNKNOWN;
      urPlatformGetInfo(platforms[p], UR_PLATFORM_INFO_BACKEND, sizeof backend, &backend, NULL);
      if (urDeviceGetSelected(platforms[p], UR_DEVICE_TYPE_ALL, 16, devs, &num_devices) != UR_RESULT_SUCCESS) continue;
      if (num_devices > 16) num_devices = 16;
      for (d = 0; d < num_devices; ++d) {
        ++devices;
        failures += run_on(devs[d], backend);
        urDeviceRelease(devs[d]);
      }
    }
  }
  if (devices == 0) printf("async_alloc: no devices found\n");
  for (a = 0; a < num_adapters; ++a) urAdapterRelease(adapters[a]);
  urLoaderTearDown();
  return failures ? 1 : 0;
}
