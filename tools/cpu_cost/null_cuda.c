// SPDX-License-Identifier: Apache-2.0
// A host-only stand-in for libcuda.so.1 that does no GPU work, for counting the CPU
// instructions of Ordo's CUDA path under callgrind (docs/performance.md, "CPU cost of the
// stream backend") and for running the CUDA adapter's own locking and lifetimes under the
// sanitizers (stream_stress.cpp). Never a test backend for what a GPU does: streams,
// events and kernels do nothing, every event is complete at once, device memory is host
// memory. Functions it does not name resolve to one that returns success and writes nothing.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { kSuccess = 0, kInvalidValue = 1, kNotFound = 500 };

static int succeed(void) { return kSuccess; }

static __thread void *current_ctx;
static char primary_ctx;

static int cuInit_(unsigned flags) {
  (void)flags;
  return kSuccess;
}
static int cuDriverGetVersion_(int *v) {
  *v = 13000;
  return kSuccess;
}
static int cuDeviceGetCount_(int *n) {
  *n = 1;
  return kSuccess;
}
static int cuDeviceGet_(int *d, int ordinal) {
  *d = ordinal;
  return ordinal == 0 ? kSuccess : 101;
}
static int cuDeviceGetName_(char *name, int len, int d) {
  (void)d;
  strncpy(name, "host-only CUDA stand-in", (size_t)len);
  if (len > 0) name[len - 1] = 0;
  return kSuccess;
}
static int cuDeviceGetAttribute_(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
  case 75: *v = 9; break;   // compute capability major
  case 76: *v = 0; break;   // minor
  case 10: *v = 32; break;  // warp size
  case 1: *v = 1024; break; // max threads per block
  case 2: *v = 1024; break; // max block x (y, z: 1)
  case 5:
  case 6:
  case 7: *v = 65535; break; // max grid x, y, z
  default: *v = 1; break;
  }
  return kSuccess;
}
static int cuDeviceTotalMem_(size_t *bytes, int d) {
  (void)d;
  *bytes = (size_t)80 << 30;
  return kSuccess;
}
static int cuDeviceGetUuid_(char *uuid, int d) {
  memset(uuid, 0, 16);
  uuid[0] = (char)(d + 1);
  return kSuccess;
}
static int cuDevicePrimaryCtxRetain_(void **ctx, int d) {
  (void)d;
  *ctx = &primary_ctx;
  return kSuccess;
}
static int cuCtxGetCurrent_(void **ctx) {
  *ctx = current_ctx;
  return kSuccess;
}
static int cuCtxSetCurrent_(void *ctx) {
  current_ctx = ctx;
  return kSuccess;
}
static int cuCtxGetStreamPriorityRange_(int *least, int *greatest) {
  *least = 0;
  *greatest = -5;
  return kSuccess;
}
static int make_handle(void **out) {
  *out = malloc(16);
  return *out ? kSuccess : 2;
}
static int cuStreamCreateWithPriority_(void **s, unsigned f, int p) {
  (void)f;
  (void)p;
  return make_handle(s);
}
static int cuEventCreate_(void **e, unsigned f) {
  (void)f;
  return make_handle(e);
}
static int destroy_handle(void *h) {
  free(h);
  return kSuccess;
}
static int cuMemAlloc_(uintptr_t *p, size_t n) {
  void *m = NULL;
  if (posix_memalign(&m, 4096, n ? n : 1)) return 2;
  *p = (uintptr_t)m;
  return kSuccess;
}
static int cuMemFree_(uintptr_t p) {
  free((void *)p);
  return kSuccess;
}
static int cuMemGetInfo_(size_t *free_b, size_t *total) {
  *free_b = (size_t)79 << 30;
  *total = (size_t)80 << 30;
  return kSuccess;
}
static int cuMemGetAllocationGranularity_(size_t *g, const void *prop, int opt) {
  (void)prop;
  (void)opt;
  *g = 2 << 20;
  return kSuccess;
}
static int cuGetErrorName_(int r, const char **s) {
  (void)r;
  *s = "CUDA_ERROR_STAND_IN";
  return kSuccess;
}
static int cuPointerGetAttribute_(void *data, int attr, uintptr_t p) {
  (void)data;
  (void)attr;
  (void)p;
  return kInvalidValue;
}
static int cuPointerGetAttributes_(unsigned n, int *attrs, void **data, uintptr_t p) {
  (void)n;
  (void)attrs;
  (void)data;
  (void)p;
  return kInvalidValue;
}

// Modules and functions: handles; every function takes a pointer and a 4-byte value
// (the shape of pair_cost's kernel).
static int cuModuleLoadDataEx_(void **m, const void *image, unsigned n, void *keys, void *values) {
  (void)image;
  (void)n;
  (void)keys;
  (void)values;
  return make_handle(m);
}
// A function handle is never freed by the caller: one of a few static slots, by name.
static char functions[64];
static int cuModuleGetFunction_(void **f, void *m, const char *name) {
  (void)m;
  unsigned h = 0;
  for (const char *c = name; *c; ++c) h = h * 31u + (unsigned char)*c;
  *f = &functions[h % sizeof functions];
  return kSuccess;
}
static int cuFuncGetParamInfo_(void *f, size_t i, size_t *offset, size_t *size) {
  (void)f;
  if (i > 1) return kInvalidValue;
  *offset = i * 8;
  *size = i ? 4 : 8;
  return kSuccess;
}
static int cuFuncGetAttribute_(int *v, int attr, void *f) {
  (void)f;
  *v = attr == 0 ? 1024 : 0; // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  return kSuccess;
}

struct entry {
  const char *name;
  void *fn;
};
static const struct entry table[] = {
#define E(n)                                                                                                           \
  { #n, (void *)n##_ }
    E(cuInit),
    E(cuDriverGetVersion),
    E(cuDeviceGetCount),
    E(cuDeviceGet),
    E(cuDeviceGetName),
    E(cuDeviceGetAttribute),
    E(cuDeviceTotalMem),
    E(cuDeviceGetUuid),
    E(cuDevicePrimaryCtxRetain),
    E(cuCtxGetCurrent),
    E(cuCtxSetCurrent),
    E(cuCtxGetStreamPriorityRange),
    E(cuStreamCreateWithPriority),
    E(cuEventCreate),
    E(cuMemAlloc),
    E(cuMemFree),
    E(cuMemGetInfo),
    E(cuMemGetAllocationGranularity),
    E(cuGetErrorName),
    E(cuPointerGetAttribute),
    E(cuPointerGetAttributes),
    E(cuModuleLoadDataEx),
    E(cuModuleGetFunction),
    E(cuFuncGetParamInfo),
    E(cuFuncGetAttribute),
#undef E
    {"cuStreamDestroy", (void *)destroy_handle},
    {"cuEventDestroy", (void *)destroy_handle},
    {"cuModuleUnload", (void *)destroy_handle},
};

__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) { return cuInit_(flags); }
__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int *v) { return cuDriverGetVersion_(v); }
__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char *name, void **fn, int version,
                                                                    uint64_t flags, int *status) {
  (void)version;
  (void)flags;
  *fn = (void *)succeed;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (strcmp(table[i].name, name) == 0) *fn = table[i].fn;
  if (status) *status = 0;
  return kSuccess;
}
