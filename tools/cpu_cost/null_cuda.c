// SPDX-License-Identifier: Apache-2.0
// A host-only stand-in for libcuda.so.1 that does no GPU work, for counting the CPU
// instructions of Ordo's CUDA path under callgrind (docs/performance.md, "CPU cost of the
// stream backend") and for running the CUDA adapter's own locking and lifetimes under the
// sanitizers (stream_stress.cpp, stream_attack.cpp). Never a test backend for what a GPU
// does: streams, events and kernels do nothing, every event is complete at once, device
// memory is host memory. Functions it does not name resolve to one that returns success
// and writes nothing.
//
// With ORDO_NULL_CUDA_LAG=1 work is not complete at once: each stream counts the events
// recorded on it and how many of them have completed, and only a question moves it on
// (cuEventQuery and cuStreamQuery one record a call, answering CUDA_ERROR_NOT_READY until
// then; cuEventSynchronize, cuStreamSynchronize and cuCtxSynchronize all the way). So the
// adapter's not-ready paths run, while completion keeps CUDA's order: a stream's events
// complete in record order, an event a stream waits for completes when the wait is
// enqueued, and the default stream's work completes with everything recorded before it.
// Completing early is always allowed: the stand-in does no work that could be too late.
//
// Memory. Device memory (cuMemAlloc/cuMemFree) is C heap memory and nothing more: it is
// not tracked, so its alloc and free cost what they always did, and a pointer query
// about it answers as for memory of no allocation (cuPointerGetAttribute:
// CUDA_ERROR_INVALID_VALUE; cuPointerGetAttributes: zeros). Host memory (cuMemHostAlloc,
// cuMemAllocHost; cuMemFreeHost), managed memory (cuMemAllocManaged; cuMemFree) and
// registered memory (cuMemHostRegister/Unregister) are heap memory too, but each
// allocation is kept in a table, so the driver answers for them as CUDA does: pointer
// attributes (memory type host for host and registered memory, device with IS_MANAGED
// for managed memory; context, device and host pointer (the same address: unified
// addressing, no write-combined or disjoint mappings), device ordinal 0, range start and
// size, mapped), cuMemHostGetDevicePointer, and the refusals: a free by the wrong
// function or of an interior pointer (CUDA_ERROR_INVALID_VALUE), registering memory
// already registered or pinned (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), unregistering
// memory that is not (CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED), allocating or registering
// with no current context (CUDA_ERROR_INVALID_CONTEXT), prefetch or advice outside
// managed memory (CUDA_ERROR_INVALID_VALUE). The device reports managed memory and
// concurrent managed access, no access to pageable memory. Copies and memsets (1-D and
// 2-D) are done on the calling thread before the call returns (completing early again:
// whatever they follow in stream order was done when it was enqueued, before them); a
// range that starts in a host, managed or registered allocation must end in it
// (CUDA_ERROR_INVALID_VALUE otherwise), other addresses are taken as device memory,
// unchecked. Not modelled: migration (prefetch and advice do nothing), read-only
// registration (the device could write), attach flags, the other pointer attributes
// (CUDA_ERROR_INVALID_VALUE), arrays. ordo_null_cuda_live(kind) counts live host (1),
// managed (2) and registered (3) allocations, so a tool can check that everything went
// back.
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
  case 19:                   // can map host memory
  case 41:                   // unified addressing
  case 83:                   // managed memory
  case 89: *v = 1; break;    // concurrent managed access (host and "device" are one)
  case 88: *v = 0; break;    // pageable memory access: only allocations the table knows
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
// ---- host, managed and registered memory (the table: see the top) ----
enum { kHost = 1, kManaged = 2, kRegistered = 3 };
enum { kInvalidContext = 201, kAlreadyRegistered = 712, kNotRegistered = 713 };
struct range {
  uintptr_t base;
  size_t size;
  void *ctx; // current at allocation
  int kind;
};
static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER;
static struct range *ranges; // sorted by base, never overlapping
static size_t nranges, cap_ranges;
static size_t live[4]; // by kind
static int tracked;    // nranges, read without the lock by cuMemFree (device memory)

// The index of the range holding p, or -1 (mem_mu held).
static long find_range(uintptr_t p) {
  size_t lo = 0, hi = nranges; // first range with base > p
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (ranges[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || p - ranges[lo - 1].base >= ranges[lo - 1].size) return -1;
  return (long)lo - 1;
}
// The index of a range overlapping [p, p + n), or -1 (mem_mu held): the last range
// that starts before p + n overlaps if any does, since ranges never overlap.
static long overlapping(uintptr_t p, size_t n) {
  size_t lo = 0, hi = nranges;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (ranges[mid].base < p + n)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 0 && ranges[lo - 1].base + ranges[lo - 1].size > p ? (long)lo - 1 : -1;
}
static void erase_range(size_t i) { // mem_mu held
  --live[ranges[i].kind];
  memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
  __atomic_store_n(&tracked, (int)--nranges, __ATOMIC_RELEASE);
}
static int insert_range(uintptr_t base, size_t size, int kind) { // mem_mu held; no overlap
  if (nranges == cap_ranges) {
    const size_t cap = cap_ranges ? 2 * cap_ranges : 64;
    struct range *r = realloc(ranges, cap * sizeof *r);
    if (!r) return 0;
    ranges = r;
    cap_ranges = cap;
  }
  size_t at = nranges;
  while (at > 0 && ranges[at - 1].base > base) --at;
  memmove(&ranges[at + 1], &ranges[at], (nranges - at) * sizeof *ranges);
  ranges[at] = (struct range){base, size, current_ctx, kind};
  ++live[kind];
  __atomic_store_n(&tracked, (int)++nranges, __ATOMIC_RELEASE);
  return 1;
}
// Heap memory for a host or managed allocation, entered in the table.
static int alloc_tracked(void **out, size_t n, int kind) {
  if (!current_ctx) return kInvalidContext;
  if (!n) return kInvalidValue;
  void *m = NULL;
  if (posix_memalign(&m, 4096, n)) return 2;
  pthread_mutex_lock(&mem_mu);
  // The heap just handed these bytes out: a range over them is a registration whose
  // memory went back to the heap without cuMemHostUnregister, stale.
  for (long i; (i = overlapping((uintptr_t)m, n)) >= 0;) erase_range((size_t)i);
  const int ok = insert_range((uintptr_t)m, n, kind);
  pthread_mutex_unlock(&mem_mu);
  if (!ok) {
    free(m);
    return 2;
  }
  *out = m;
  return kSuccess;
}
// Ends the allocation of `kind` that starts at p; CUDA_ERROR_INVALID_VALUE (and nothing
// freed) for anything else the table knows. `*unknown`: the table does not know p.
static int free_tracked(uintptr_t p, int kind, int *unknown) {
  *unknown = 0;
  pthread_mutex_lock(&mem_mu);
  const long i = find_range(p);
  int r = kInvalidValue;
  if (i < 0)
    *unknown = 1;
  else if (ranges[i].kind == kind && ranges[i].base == p) {
    erase_range((size_t)i);
    r = kSuccess;
  }
  pthread_mutex_unlock(&mem_mu);
  if (r == kSuccess) free((void *)p);
  return r;
}
static int cuMemFree_(uintptr_t p) {
  if (__atomic_load_n(&tracked, __ATOMIC_ACQUIRE)) { // only while host or managed memory lives
    int unknown = 0;
    const int r = free_tracked(p, kManaged, &unknown);
    if (!unknown) return r;
  }
  free((void *)p);
  return kSuccess;
}
static int cuMemHostAlloc_(void **pp, size_t n, unsigned flags) {
  if (flags & ~7u) return kInvalidValue; // portable, device-mapped, write-combined
  return alloc_tracked(pp, n, kHost);
}
static int cuMemAllocHost_(void **pp, size_t n) { return alloc_tracked(pp, n, kHost); }
static int cuMemAllocManaged_(uintptr_t *p, size_t n, unsigned flags) {
  if (flags != 1 && flags != 2) return kInvalidValue; // CU_MEM_ATTACH_GLOBAL or _HOST
  void *m = NULL;
  const int r = alloc_tracked(&m, n, kManaged);
  if (r == kSuccess) *p = (uintptr_t)m;
  return r;
}
static int cuMemFreeHost_(void *p) {
  int unknown = 0;
  return free_tracked((uintptr_t)p, kHost, &unknown);
}
static int cuMemHostRegister_(void *p, size_t n, unsigned flags) {
  if (!current_ctx) return kInvalidContext;
  if (!p || !n || (flags & ~15u)) return kInvalidValue;
  pthread_mutex_lock(&mem_mu);
  int r = kAlreadyRegistered;
  if (overlapping((uintptr_t)p, n) < 0) r = insert_range((uintptr_t)p, n, kRegistered) ? kSuccess : 2;
  pthread_mutex_unlock(&mem_mu);
  return r;
}
static int cuMemHostUnregister_(void *p) {
  pthread_mutex_lock(&mem_mu);
  const long i = find_range((uintptr_t)p);
  int r = kNotRegistered;
  if (i >= 0 && ranges[i].kind == kRegistered && ranges[i].base == (uintptr_t)p) {
    erase_range((size_t)i);
    r = kSuccess;
  }
  pthread_mutex_unlock(&mem_mu);
  return r;
}
// A copy of the range holding p; 0 where the table knows none.
static int range_of(uintptr_t p, struct range *out) {
  if (!__atomic_load_n(&tracked, __ATOMIC_ACQUIRE)) return 0;
  pthread_mutex_lock(&mem_mu);
  const long i = find_range(p);
  if (i >= 0) *out = ranges[i];
  pthread_mutex_unlock(&mem_mu);
  return i >= 0;
}
static int cuMemHostGetDevicePointer_(uintptr_t *d, void *p, unsigned flags) {
  struct range r;
  if (flags || !range_of((uintptr_t)p, &r) || r.kind == kManaged) return kInvalidValue;
  *d = (uintptr_t)p;
  return kSuccess;
}
// One attribute of a known range; CUDA_ERROR_INVALID_VALUE for those not modelled.
static int attribute_of(const struct range *r, int attr, uintptr_t p, void *data) {
  switch (attr) {
  case 1: *(void **)data = r->ctx; return kSuccess;                           // context
  case 2: *(unsigned *)data = r->kind == kManaged ? 2u : 1u; return kSuccess; // memory type
  case 3: *(uintptr_t *)data = p; return kSuccess;                            // device pointer
  case 4: *(void **)data = (void *)p; return kSuccess;                        // host pointer
  case 8: *(unsigned *)data = r->kind == kManaged; return kSuccess;           // is managed
  case 9: *(int *)data = 0; return kSuccess;                                  // device ordinal
  case 11: *(uintptr_t *)data = r->base; return kSuccess;                     // range start
  case 12: *(size_t *)data = r->size; return kSuccess;                        // range size
  case 13: *(unsigned *)data = 1; return kSuccess;                            // mapped
  default: return kInvalidValue;
  }
}
// What cuPointerGetAttributes writes for memory of no allocation.
static int attribute_none(int attr, void *data) {
  switch (attr) {
  case 1:
  case 4: *(void **)data = NULL; return kSuccess;
  case 3:
  case 11: *(uintptr_t *)data = 0; return kSuccess;
  case 12: *(size_t *)data = 0; return kSuccess;
  case 2:
  case 8:
  case 13: *(unsigned *)data = 0; return kSuccess;
  case 9: *(int *)data = -1; return kSuccess;
  default: return kInvalidValue;
  }
}
static int cuPointerGetAttribute_(void *data, int attr, uintptr_t p) {
  struct range r;
  if (!range_of(p, &r)) return kInvalidValue;
  return attribute_of(&r, attr, p, data);
}
static int cuPointerGetAttributes_(unsigned n, int *attrs, void **data, uintptr_t p) {
  struct range r;
  const int known = range_of(p, &r);
  for (unsigned i = 0; i < n; ++i) {
    const int e = known ? attribute_of(&r, attrs[i], p, data[i]) : attribute_none(attrs[i], data[i]);
    if (e) return e;
  }
  return kSuccess;
}
// Whether the `n` bytes at p may be written or read: inside the allocation p starts in,
// where the table knows one.
static int span_ok(uintptr_t p, size_t n) {
  struct range r;
  return !n || !range_of(p, &r) || n <= r.size - (p - r.base);
}
// [p, p + pitch * (height - 1) + width): the bytes a 2-D operation touches.
static size_t span_2d(size_t pitch, size_t width, size_t height) { return height ? pitch * (height - 1) + width : 0; }
static int cuMemcpyAsync_(uintptr_t dst, uintptr_t src, size_t n, void *s) {
  (void)s;
  if ((n && (!dst || !src)) || !span_ok(dst, n) || !span_ok(src, n)) return kInvalidValue;
  if (n) memmove((void *)dst, (const void *)src, n);
  return kSuccess;
}
// CUDA_MEMCPY2D (cuda.h, the _v2 layout).
struct copy_2d {
  size_t src_x, src_y;
  int src_type;
  const void *src_host;
  uintptr_t src_device;
  void *src_array;
  size_t src_pitch;
  size_t dst_x, dst_y;
  int dst_type;
  void *dst_host;
  uintptr_t dst_device;
  void *dst_array;
  size_t dst_pitch;
  size_t width, height;
};
static uintptr_t address_2d(int type, const void *host, uintptr_t device, size_t x, size_t y, size_t pitch) {
  const uintptr_t at = type == 1 ? (uintptr_t)host : device; // host, or device / unified
  return at ? at + y * pitch + x : 0;
}
static int cuMemcpy2DAsync_(const struct copy_2d *c, void *s) {
  (void)s;
  if (c->src_type == 3 || c->dst_type == 3 || c->src_type < 1 || c->src_type > 4 || c->dst_type < 1 || c->dst_type > 4)
    return kInvalidValue; // arrays are not modelled
  if (c->height > 1 && (c->width > c->src_pitch || c->width > c->dst_pitch)) return kInvalidValue;
  const uintptr_t src = address_2d(c->src_type, c->src_host, c->src_device, c->src_x, c->src_y, c->src_pitch);
  const uintptr_t dst = address_2d(c->dst_type, c->dst_host, c->dst_device, c->dst_x, c->dst_y, c->dst_pitch);
  if (!c->width || !c->height) return kSuccess;
  if (!src || !dst) return kInvalidValue;
  if (!span_ok(src, span_2d(c->src_pitch, c->width, c->height)) ||
      !span_ok(dst, span_2d(c->dst_pitch, c->width, c->height)))
    return kInvalidValue;
  for (size_t row = 0; row < c->height; ++row)
    memmove((void *)(dst + row * c->dst_pitch), (const void *)(src + row * c->src_pitch), c->width);
  return kSuccess;
}
// Memsets of 1, 2 and 4-byte values, 1-D (pitch = the row, height 1) and 2-D.
static int memset_2d(uintptr_t dst, size_t pitch, uint32_t v, unsigned bytes, size_t width, size_t height) {
  if (dst % bytes || (!dst && width && height)) return kInvalidValue;
  if (height > 1 && (pitch < width * bytes || pitch % bytes)) return kInvalidValue;
  if (!span_ok(dst, span_2d(pitch, width * bytes, height))) return kInvalidValue;
  for (size_t row = 0; row < height; ++row) {
    unsigned char *at = (unsigned char *)(dst + row * pitch);
    if (bytes == 1) {
      memset(at, (int)(v & 0xff), width);
    } else if (width) { // the value's low bytes first (little-endian, as CUDA's hosts), then doubling
      memcpy(at, &v, bytes);
      for (size_t done = bytes, all = width * bytes; done < all; done *= 2)
        memcpy(at + done, at, done < all - done ? done : all - done);
    }
  }
  return kSuccess;
}
static int cuMemsetD8Async_(uintptr_t d, unsigned char v, size_t n, void *s) { return memset_2d(d, n, v, 1, n, 1); }
static int cuMemsetD16Async_(uintptr_t d, unsigned short v, size_t n, void *s) {
  return memset_2d(d, 2 * n, v, 2, n, 1);
}
static int cuMemsetD32Async_(uintptr_t d, unsigned v, size_t n, void *s) { return memset_2d(d, 4 * n, v, 4, n, 1); }
static int cuMemsetD2D8Async_(uintptr_t d, size_t pitch, unsigned char v, size_t w, size_t h, void *s) {
  return memset_2d(d, pitch, v, 1, w, h);
}
static int cuMemsetD2D16Async_(uintptr_t d, size_t pitch, unsigned short v, size_t w, size_t h, void *s) {
  return memset_2d(d, pitch, v, 2, w, h);
}
static int cuMemsetD2D32Async_(uintptr_t d, size_t pitch, unsigned v, size_t w, size_t h, void *s) {
  return memset_2d(d, pitch, v, 4, w, h);
}
// CUmemLocation: passed by value.
struct location {
  int type, id;
};
static int managed_span(uintptr_t p, size_t n) {
  struct range r;
  return n && range_of(p, &r) && r.kind == kManaged && n <= r.size - (p - r.base);
}
static int cuMemPrefetchAsync_(uintptr_t p, size_t n, struct location to, unsigned flags, void *s) {
  (void)to;
  (void)s;
  return !flags && managed_span(p, n) ? kSuccess : kInvalidValue;
}
static int cuMemAdvise_(uintptr_t p, size_t n, int advice, struct location at) {
  (void)at;
  return advice >= 1 && advice <= 6 && managed_span(p, n) ? kSuccess : kInvalidValue;
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
    E(cuMemHostAlloc),
    E(cuMemAllocHost),
    E(cuMemAllocManaged),
    E(cuMemFreeHost),
    E(cuMemHostRegister),
    E(cuMemHostUnregister),
    E(cuMemHostGetDevicePointer),
    E(cuMemcpyAsync),
    E(cuMemcpy2DAsync),
    E(cuMemsetD8Async),
    E(cuMemsetD16Async),
    E(cuMemsetD32Async),
    E(cuMemsetD2D8Async),
    E(cuMemsetD2D16Async),
    E(cuMemsetD2D32Async),
    E(cuMemPrefetchAsync),
    E(cuMemAdvise),
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

// Live allocations of a kind the table knows (1 host, 2 managed, 3 registered), for the
// tools' checks that everything went back.
__attribute__((visibility("default"))) size_t ordo_null_cuda_live(int kind) {
  if (kind < 1 || kind > 3) return 0;
  pthread_mutex_lock(&mem_mu);
  const size_t n = live[kind];
  pthread_mutex_unlock(&mem_mu);
  return n;
}
