// SPDX-License-Identifier: Apache-2.0
// A host-only stand-in for libcuda.so.1 that does no GPU work, for counting the CPU
// instructions of Ordo's CUDA path under callgrind (docs/performance.md, "CPU cost of the
// stream backend") and for running the CUDA adapter's own locking and lifetimes under the
// sanitizers (stream_stress.cpp). Never a test backend for what a GPU does: streams,
// events and kernels do nothing, every event is complete at once, device memory is host
// memory. Functions it does not name resolve to one that returns success and writes nothing.
//
// With ORDO_NULL_CUDA_LAG=1 work is not complete at once: each stream counts the events
// recorded on it and how many of them have completed, and only a question moves it on
// (cuEventQuery and cuStreamQuery one record a call, answering CUDA_ERROR_NOT_READY until
// then; cuEventSynchronize, cuStreamSynchronize and cuCtxSynchronize all the way). So the
// adapter's not-ready paths run, while completion keeps CUDA's order: a stream's events
// complete in record order, an event a stream waits for completes when the wait is
// enqueued, and the default stream's work completes with everything recorded before it.
// Completing early is always allowed: the stand-in does no work that could be too late.
#define _GNU_SOURCE
#include <pthread.h>
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
static int destroy_handle(void *h) {
  free(h);
  return kSuccess;
}

// ---- streams and events (the lag mode above) ----
enum { kNotReady = 600 };
struct stream {
  uint64_t recorded, completed;
  struct stream *next; // every stream ever made: a destroyed one stays for its events
};
struct event {
  struct stream *on; // null: never recorded
  uint64_t seq;
};
static pthread_mutex_t lag_mu = PTHREAD_MUTEX_INITIALIZER;
static struct stream default_stream; // handles 0, 1 (legacy) and 2 (per thread)
static struct stream *streams = &default_stream;
static int lag; // ORDO_NULL_CUDA_LAG, read once at load (before any thread can ask)
__attribute__((constructor)) static void read_lag(void) {
  const char *v = getenv("ORDO_NULL_CUDA_LAG");
  lag = v && *v && *v != '0';
}
static struct stream *stream_of(void *s) { return (uintptr_t)s <= 2 ? &default_stream : (struct stream *)s; }
static void complete_all(void) {
  for (struct stream *t = streams; t; t = t->next) t->completed = t->recorded;
}
static int cuStreamCreateWithPriority_(void **s, unsigned f, int p) {
  (void)f;
  (void)p;
  struct stream *t = calloc(1, sizeof *t);
  if (!t) return 2;
  pthread_mutex_lock(&lag_mu);
  t->next = streams;
  streams = t;
  pthread_mutex_unlock(&lag_mu);
  *s = t;
  return kSuccess;
}
static int cuStreamDestroy_(void *s) {
  if (!lag) return kSuccess;
  pthread_mutex_lock(&lag_mu);
  stream_of(s)->completed = stream_of(s)->recorded; // its work goes on to the end
  pthread_mutex_unlock(&lag_mu);
  return kSuccess;
}
static int cuEventCreate_(void **e, unsigned f) {
  (void)f;
  *e = calloc(1, sizeof(struct event));
  return *e ? kSuccess : 2;
}
static int cuEventRecord_(void *e, void *s) {
  if (!lag) return kSuccess; // never recorded: complete
  struct event *ev = e;
  struct stream *t = stream_of(s);
  pthread_mutex_lock(&lag_mu);
  if (t == &default_stream)
    complete_all(); // the default stream's work follows everything before it
  else
    default_stream.completed = default_stream.recorded; // and everything after it follows it
  ev->on = t;
  ev->seq = ++t->recorded;
  pthread_mutex_unlock(&lag_mu);
  return kSuccess;
}
static int cuEventQuery_(void *e) {
  if (!lag) return kSuccess;
  struct event *ev = e;
  pthread_mutex_lock(&lag_mu);
  int r = kSuccess;
  if (ev->on && ev->seq > ev->on->completed) {
    ++ev->on->completed;
    if (ev->seq > ev->on->completed) r = kNotReady;
  }
  pthread_mutex_unlock(&lag_mu);
  return r;
}
static int cuEventSynchronize_(void *e) {
  if (!lag) return kSuccess;
  struct event *ev = e;
  pthread_mutex_lock(&lag_mu);
  if (ev->on && ev->seq > ev->on->completed) ev->on->completed = ev->seq;
  pthread_mutex_unlock(&lag_mu);
  return kSuccess;
}
static int cuStreamWaitEvent_(void *s, void *e, unsigned f) {
  (void)s;
  (void)f;
  return cuEventSynchronize_(e); // what waits on it then follows it
}
static int cuStreamQuery_(void *s) {
  if (!lag) return kSuccess;
  struct stream *t = stream_of(s);
  pthread_mutex_lock(&lag_mu);
  if (t->completed < t->recorded) ++t->completed;
  const int r = t->completed < t->recorded ? kNotReady : kSuccess;
  pthread_mutex_unlock(&lag_mu);
  return r;
}
static int cuStreamSynchronize_(void *s) {
  if (!lag) return kSuccess;
  struct stream *t = stream_of(s);
  pthread_mutex_lock(&lag_mu);
  t->completed = t->recorded;
  pthread_mutex_unlock(&lag_mu);
  return kSuccess;
}
static int cuCtxSynchronize_(void) {
  if (!lag) return kSuccess;
  pthread_mutex_lock(&lag_mu);
  complete_all();
  pthread_mutex_unlock(&lag_mu);
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
    E(cuStreamDestroy),
    E(cuStreamQuery),
    E(cuStreamSynchronize),
    E(cuStreamWaitEvent),
    E(cuCtxSynchronize),
    E(cuEventCreate),
    E(cuEventRecord),
    E(cuEventQuery),
    E(cuEventSynchronize),
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
