// SPDX-License-Identifier: Apache-2.0
/* A tracing stand-in for libOpenCL.so.1: point Ordo's OpenCL adapter at it with
 * ORDO_OPENCL_LIBRARY=<path>/libordo-cl-trace.so and it logs, per thread, every queue,
 * enqueue, event and wait call the adapter makes (handles, wait lists, return codes) to
 * ORDO_CL_TRACE (a file, default /tmp/ordo-cl-trace.<pid>), then forwards the call to the
 * real libOpenCL.so.1. Functions it does not define resolve to the real library (it links
 * it), so the adapter finds every entry point it looks up. Intel USM entry points come
 * from clGetExtensionFunctionAddressForPlatform and are wrapped there.
 *
 * A watchdog thread notes any clWaitForEvents / clFinish / blocking enqueue still running
 * after ORDO_CL_TRACE_STALL seconds (default 15) and writes "STALL" lines: the waits, and
 * every event the program still holds with its execution status, so a hang's trace says
 * which command never completed. tools/opencl_probes/trace_graph.py reads the log.
 * docs/opencl.md says what it showed. No Ordo code here. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int trace_fd = -1;
static void *real_lib;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct timespec start_time;
static unsigned long long seq;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - start_time.tv_sec) + (double)(t.tv_nsec - start_time.tv_nsec) * 1e-9;
}

static void *real(const char *name) {
  void *f = dlsym(real_lib, name);
  if (!f) {
    fprintf(stderr, "cl_trace: the real libOpenCL.so.1 lacks %s\n", name);
    abort();
  }
  return f;
}

/* One line per call; a single write() keeps lines of different threads apart, and what
 * was written survives the SIGKILL that ends a hung run. */
static void logf_(const char *fmt, ...) {
  char line[4096];
  int n = snprintf(line, sizeof line, "%llu %ld %.6f ", __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED),
                   (long)syscall(SYS_gettid), now_s());
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  (void)!write(trace_fd, line, (size_t)n);
}

/* Wait lists as "[e1,e2]"; returns buf. */
static const char *list_str(char *buf, size_t cap, cl_uint n, const cl_event *list) {
  size_t at = 0;
  at += (size_t)snprintf(buf + at, cap - at, "[");
  for (cl_uint i = 0; i < n && list && at < cap - 24; ++i)
    at += (size_t)snprintf(buf + at, cap - at, "%s%p", i ? "," : "", (void *)list[i]);
  snprintf(buf + at, cap - at, "]");
  return buf;
}

/* ---- the events the program holds (our count of its references), for the stall dump ---- */
#define MAX_EVENTS 65536
struct held_event {
  cl_event ev;
  long refs;
  unsigned long long made_at; /* seq of the line that made it */
  const char *what;
};
static struct held_event held[MAX_EVENTS];
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static struct held_event *find_held(cl_event e) {
  for (int i = 0; i < MAX_EVENTS; ++i)
    if (held[i].ev == e && held[i].refs > 0) return &held[i];
  return NULL;
}

static void note_event(cl_event e, const char *what) {
  if (!e) return;
  pthread_mutex_lock(&held_lock);
  for (int i = 0; i < MAX_EVENTS; ++i)
    if (held[i].refs <= 0) {
      held[i].ev = e;
      held[i].refs = 1;
      held[i].made_at = __atomic_load_n(&seq, __ATOMIC_RELAXED);
      held[i].what = what;
      break;
    }
  pthread_mutex_unlock(&held_lock);
}

static void add_ref(cl_event e, long d) {
  pthread_mutex_lock(&held_lock);
  struct held_event *h = find_held(e);
  if (h) h->refs += d;
  pthread_mutex_unlock(&held_lock);
}

/* ---- waits in progress, for the watchdog ---- */
#define MAX_WAITS 256
struct wait_slot {
  int busy;
  long tid;
  double since;
  char what[512];
  int reported;
};
static struct wait_slot waits[MAX_WAITS];
static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;

static int wait_begin(const char *what) {
  pthread_mutex_lock(&waits_lock);
  int slot = -1;
  for (int i = 0; i < MAX_WAITS; ++i)
    if (!waits[i].busy) {
      slot = i;
      waits[i].busy = 1;
      waits[i].tid = (long)syscall(SYS_gettid);
      waits[i].since = now_s();
      waits[i].reported = 0;
      snprintf(waits[i].what, sizeof waits[i].what, "%s", what);
      break;
    }
  pthread_mutex_unlock(&waits_lock);
  return slot;
}

static void wait_end(int slot) {
  if (slot < 0) return;
  pthread_mutex_lock(&waits_lock);
  if (waits[slot].reported)
    logf_("UNSTALL tid=%ld after %.1fs: %s", waits[slot].tid, now_s() - waits[slot].since, waits[slot].what);
  waits[slot].busy = 0;
  pthread_mutex_unlock(&waits_lock);
}

static const char *status_name(cl_int s) {
  switch (s) {
  case CL_COMPLETE: return "COMPLETE";
  case CL_RUNNING: return "RUNNING";
  case CL_SUBMITTED: return "SUBMITTED";
  case CL_QUEUED: return "QUEUED";
  default: return s < 0 ? "ERROR" : "?";
  }
}

static void dump_held_events(void) {
  cl_int(CL_API_CALL * get_info)(cl_event, cl_event_info, size_t, void *, size_t *) = real("clGetEventInfo");
  pthread_mutex_lock(&held_lock);
  int not_complete = 0;
  for (int i = 0; i < MAX_EVENTS; ++i) {
    if (held[i].refs <= 0) continue;
    cl_int status = 99;
    cl_command_queue q = NULL;
    cl_command_type type = 0;
    get_info(held[i].ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    get_info(held[i].ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL);
    get_info(held[i].ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    if (status != CL_COMPLETE) ++not_complete;
    logf_("STALL event %p %s (%d) refs=%ld made_at=%llu by %s queue=%p type=0x%x", (void *)held[i].ev,
          status_name(status), status, held[i].refs, held[i].made_at, held[i].what, (void *)q, type);
  }
  pthread_mutex_unlock(&held_lock);
  logf_("STALL %d held events not complete", not_complete);
}

static void *watchdog(void *arg) {
  (void)arg;
  const char *env = getenv("ORDO_CL_TRACE_STALL");
  const double limit = env && atof(env) > 0 ? atof(env) : 15.0;
  for (;;) {
    sleep(1);
    int fresh = 0;
    pthread_mutex_lock(&waits_lock);
    for (int i = 0; i < MAX_WAITS; ++i)
      if (waits[i].busy && !waits[i].reported && now_s() - waits[i].since > limit) fresh = 1;
    if (fresh)
      for (int i = 0; i < MAX_WAITS; ++i)
        if (waits[i].busy) {
          logf_("STALL wait tid=%ld for %.1fs: %s", waits[i].tid, now_s() - waits[i].since, waits[i].what);
          waits[i].reported = 1;
        }
    pthread_mutex_unlock(&waits_lock);
    if (fresh) dump_held_events();
  }
  return NULL;
}

static void init(void) {
  clock_gettime(CLOCK_MONOTONIC, &start_time);
  const char *lib = getenv("ORDO_CL_TRACE_REAL");
  real_lib = dlopen(lib && *lib ? lib : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!real_lib) {
    fprintf(stderr, "cl_trace: %s\n", dlerror());
    abort();
  }
  char path[256];
  const char *out = getenv("ORDO_CL_TRACE");
  if (!out || !*out) {
    snprintf(path, sizeof path, "/tmp/ordo-cl-trace.%d", (int)getpid());
    out = path;
  }
  trace_fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
  if (trace_fd < 0) trace_fd = 2;
  logf_("START pid=%d", (int)getpid());
  pthread_t t;
  pthread_create(&t, NULL, watchdog, NULL);
  pthread_detach(t);
}

#define INIT() pthread_once(&init_once, init)
#define REAL(name) ((__typeof__(&name))real(#name))

/* An enqueue: log queue, wait list, the event made and the result. */
#define ENQ_LOG(name, q, n, list, ev, ret, fmt, ...)                                                                   \
  do {                                                                                                                 \
    char wl_[2048];                                                                                                    \
    logf_("%s q=%p wait=%s -> ev=%p ret=%d " fmt, name, (void *)(q), list_str(wl_, sizeof wl_, n, list),               \
          (void *)((ev) ? *(ev) : NULL), ret, __VA_ARGS__);                                                            \
    if ((ret) == CL_SUCCESS && (ev)) note_event(*(ev), name);                                                          \
  } while (0)

static int blocking_begin(const char *name, cl_command_queue q, cl_bool blocking, cl_uint n, const cl_event *list) {
  if (!blocking) return -1;
  char wl[2048], what[512];
  snprintf(what, sizeof what, "blocking %s q=%p wait=%s", name, (void *)q, list_str(wl, sizeof wl, n, list));
  logf_("BEGIN %s", what);
  return wait_begin(what);
}

/* ---- queues ---- */
EXPORT cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                                                       const cl_queue_properties *props, cl_int *err) {
  INIT();
  cl_int e = 0;
  cl_command_queue q = REAL(clCreateCommandQueueWithProperties)(ctx, dev, props, &e);
  cl_ulong flags = 0;
  for (const cl_queue_properties *p = props; p && p[0]; p += 2)
    if (p[0] == CL_QUEUE_PROPERTIES) flags = p[1];
  logf_("clCreateCommandQueueWithProperties ctx=%p props=0x%llx -> q=%p ret=%d", (void *)ctx, (unsigned long long)flags,
        (void *)q, e);
  if (err) *err = e;
  return q;
}

EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context ctx, cl_device_id dev,
                                                         cl_command_queue_properties props, cl_int *err) {
  INIT();
  cl_int e = 0;
  cl_command_queue q = REAL(clCreateCommandQueue)(ctx, dev, props, &e);
  logf_("clCreateCommandQueue ctx=%p props=0x%llx -> q=%p ret=%d", (void *)ctx, (unsigned long long)props, (void *)q,
        e);
  if (err) *err = e;
  return q;
}

EXPORT cl_int CL_API_CALL clRetainCommandQueue(cl_command_queue q) {
  INIT();
  cl_int r = REAL(clRetainCommandQueue)(q);
  logf_("clRetainCommandQueue q=%p ret=%d", (void *)q, r);
  return r;
}

EXPORT cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q) {
  INIT();
  logf_("BEGIN clReleaseCommandQueue q=%p", (void *)q);
  char what[128];
  snprintf(what, sizeof what, "clReleaseCommandQueue q=%p", (void *)q);
  int slot = wait_begin(what);
  cl_int r = REAL(clReleaseCommandQueue)(q);
  wait_end(slot);
  logf_("clReleaseCommandQueue q=%p ret=%d", (void *)q, r);
  return r;
}

EXPORT cl_int CL_API_CALL clFlush(cl_command_queue q) {
  INIT();
  cl_int r = REAL(clFlush)(q);
  logf_("clFlush q=%p ret=%d", (void *)q, r);
  return r;
}

EXPORT cl_int CL_API_CALL clFinish(cl_command_queue q) {
  INIT();
  char what[128];
  snprintf(what, sizeof what, "clFinish q=%p", (void *)q);
  logf_("BEGIN %s", what);
  int slot = wait_begin(what);
  cl_int r = REAL(clFinish)(q);
  wait_end(slot);
  logf_("clFinish q=%p ret=%d", (void *)q, r);
  return r;
}

/* ---- events ---- */
EXPORT cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *list) {
  INIT();
  char wl[2048], what[512];
  snprintf(what, sizeof what, "clWaitForEvents %s", list_str(wl, sizeof wl, n, list));
  logf_("BEGIN %s", what);
  int slot = wait_begin(what);
  cl_int r = REAL(clWaitForEvents)(n, list);
  wait_end(slot);
  logf_("clWaitForEvents %s ret=%d", wl, r);
  return r;
}

EXPORT cl_int CL_API_CALL clRetainEvent(cl_event e) {
  INIT();
  cl_int r = REAL(clRetainEvent)(e);
  if (r == CL_SUCCESS) add_ref(e, 1);
  logf_("clRetainEvent ev=%p ret=%d", (void *)e, r);
  return r;
}

EXPORT cl_int CL_API_CALL clReleaseEvent(cl_event e) {
  INIT();
  /* Counted down before the call: once the last reference goes the handle may be reused
   * by another thread's new event at once. */
  add_ref(e, -1);
  cl_int r = REAL(clReleaseEvent)(e);
  logf_("clReleaseEvent ev=%p ret=%d", (void *)e, r);
  return r;
}

EXPORT cl_event CL_API_CALL clCreateUserEvent(cl_context ctx, cl_int *err) {
  INIT();
  cl_int e = 0;
  cl_event ev = REAL(clCreateUserEvent)(ctx, &e);
  logf_("clCreateUserEvent ctx=%p -> ev=%p ret=%d", (void *)ctx, (void *)ev, e);
  if (e == CL_SUCCESS) note_event(ev, "clCreateUserEvent");
  if (err) *err = e;
  return ev;
}

EXPORT cl_int CL_API_CALL clSetUserEventStatus(cl_event ev, cl_int status) {
  INIT();
  cl_int r = REAL(clSetUserEventStatus)(ev, status);
  logf_("clSetUserEventStatus ev=%p status=%d ret=%d", (void *)ev, status, r);
  return r;
}

struct callback_record {
  void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
  void *user;
};

static void CL_CALLBACK traced_callback(cl_event ev, cl_int status, void *p) {
  struct callback_record rec = *(struct callback_record *)p;
  free(p);
  logf_("CALLBACK ev=%p status=%d begin", (void *)ev, status);
  rec.fn(ev, status, rec.user);
  logf_("CALLBACK ev=%p status=%d end", (void *)ev, status);
}

EXPORT cl_int CL_API_CALL clSetEventCallback(cl_event ev, cl_int type, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                             void *user) {
  INIT();
  struct callback_record *rec = malloc(sizeof *rec);
  rec->fn = fn;
  rec->user = user;
  cl_int r = REAL(clSetEventCallback)(ev, type, fn ? traced_callback : NULL, rec);
  if (r != CL_SUCCESS) free(rec);
  logf_("clSetEventCallback ev=%p type=%d ret=%d", (void *)ev, type, r);
  return r;
}

/* ---- enqueues ---- */
EXPORT cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *list,
                                                      cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueMarkerWithWaitList)(q, n, list, ev);
  ENQ_LOG("clEnqueueMarkerWithWaitList", q, n, list, ev, r, "%s", "");
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event *list,
                                                       cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueBarrierWithWaitList)(q, n, list, ev);
  ENQ_LOG("clEnqueueBarrierWithWaitList", q, n, list, ev, r, "%s", "");
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t *off,
                                                 const size_t *global, const size_t *local, cl_uint n,
                                                 const cl_event *list, cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueNDRangeKernel)(q, k, dims, off, global, local, n, list, ev);
  ENQ_LOG("clEnqueueNDRangeKernel", q, n, list, ev, r, "kernel=%p global0=%zu", (void *)k, global ? global[0] : 0);
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *pat, size_t pat_size,
                                              size_t off, size_t size, cl_uint n, const cl_event *list, cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueFillBuffer)(q, b, pat, pat_size, off, size, n, list, ev);
  ENQ_LOG("clEnqueueFillBuffer", q, n, list, ev, r, "mem=%p off=%zu size=%zu", (void *)b, off, size);
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t size,
                                              void *ptr, cl_uint n, const cl_event *list, cl_event *ev) {
  INIT();
  int slot = blocking_begin("clEnqueueReadBuffer", q, blocking, n, list);
  cl_int r = REAL(clEnqueueReadBuffer)(q, b, blocking, off, size, ptr, n, list, ev);
  wait_end(slot);
  ENQ_LOG("clEnqueueReadBuffer", q, n, list, ev, r, "blocking=%u mem=%p size=%zu", blocking, (void *)b, size);
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t size,
                                               const void *ptr, cl_uint n, const cl_event *list, cl_event *ev) {
  INIT();
  int slot = blocking_begin("clEnqueueWriteBuffer", q, blocking, n, list);
  cl_int r = REAL(clEnqueueWriteBuffer)(q, b, blocking, off, size, ptr, n, list, ev);
  wait_end(slot);
  ENQ_LOG("clEnqueueWriteBuffer", q, n, list, ev, r, "blocking=%u mem=%p size=%zu", blocking, (void *)b, size);
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dof,
                                              size_t size, cl_uint n, const cl_event *list, cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueCopyBuffer)(q, src, dst, so, dof, size, n, list, ev);
  ENQ_LOG("clEnqueueCopyBuffer", q, n, list, ev, r, "src=%p dst=%p size=%zu", (void *)src, (void *)dst, size);
  return r;
}

EXPORT void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags flags,
                                            size_t off, size_t size, cl_uint n, const cl_event *list, cl_event *ev,
                                            cl_int *err) {
  INIT();
  cl_int e = 0;
  int slot = blocking_begin("clEnqueueMapBuffer", q, blocking, n, list);
  void *p = REAL(clEnqueueMapBuffer)(q, b, blocking, flags, off, size, n, list, ev, &e);
  wait_end(slot);
  ENQ_LOG("clEnqueueMapBuffer", q, n, list, ev, e, "blocking=%u mem=%p size=%zu", blocking, (void *)b, size);
  if (err) *err = e;
  return p;
}

EXPORT cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue q, cl_mem b, void *p, cl_uint n,
                                                  const cl_event *list, cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueUnmapMemObject)(q, b, p, n, list, ev);
  ENQ_LOG("clEnqueueUnmapMemObject", q, n, list, ev, r, "mem=%p", (void *)b);
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking, void *dst, const void *src,
                                             size_t size, cl_uint n, const cl_event *list, cl_event *ev) {
  INIT();
  int slot = blocking_begin("clEnqueueSVMMemcpy", q, blocking, n, list);
  cl_int r = REAL(clEnqueueSVMMemcpy)(q, blocking, dst, src, size, n, list, ev);
  wait_end(slot);
  ENQ_LOG("clEnqueueSVMMemcpy", q, n, list, ev, r, "blocking=%u dst=%p src=%p size=%zu", blocking, dst, src, size);
  return r;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue q, void *dst, const void *pat, size_t pat_size,
                                              size_t size, cl_uint n, const cl_event *list, cl_event *ev) {
  INIT();
  cl_int r = REAL(clEnqueueSVMMemFill)(q, dst, pat, pat_size, size, n, list, ev);
  ENQ_LOG("clEnqueueSVMMemFill", q, n, list, ev, r, "dst=%p size=%zu", dst, size);
  return r;
}

/* ---- Intel USM, reached through clGetExtensionFunctionAddressForPlatform ---- */
static clHostMemAllocINTEL_fn real_host_alloc;
static clDeviceMemAllocINTEL_fn real_device_alloc;
static clSharedMemAllocINTEL_fn real_shared_alloc;
static clMemFreeINTEL_fn real_mem_free;
static clMemBlockingFreeINTEL_fn real_blocking_free;
static clEnqueueMemcpyINTEL_fn real_memcpy;
static clEnqueueMemFillINTEL_fn real_fill;
static clEnqueueMigrateMemINTEL_fn real_migrate;
static clEnqueueMemAdviseINTEL_fn real_advise;

static void *CL_API_CALL host_alloc(cl_context c, const cl_mem_properties_intel *p, size_t size, cl_uint align,
                                    cl_int *err) {
  cl_int e = 0;
  void *r = real_host_alloc(c, p, size, align, &e);
  logf_("clHostMemAllocINTEL size=%zu -> %p ret=%d", size, r, e);
  if (err) *err = e;
  return r;
}

static void *CL_API_CALL device_alloc(cl_context c, cl_device_id d, const cl_mem_properties_intel *p, size_t size,
                                      cl_uint align, cl_int *err) {
  cl_int e = 0;
  void *r = real_device_alloc(c, d, p, size, align, &e);
  logf_("clDeviceMemAllocINTEL size=%zu -> %p ret=%d", size, r, e);
  if (err) *err = e;
  return r;
}

static void *CL_API_CALL shared_alloc(cl_context c, cl_device_id d, const cl_mem_properties_intel *p, size_t size,
                                      cl_uint align, cl_int *err) {
  cl_int e = 0;
  void *r = real_shared_alloc(c, d, p, size, align, &e);
  logf_("clSharedMemAllocINTEL size=%zu -> %p ret=%d", size, r, e);
  if (err) *err = e;
  return r;
}

static cl_int CL_API_CALL mem_free(cl_context c, void *p) {
  cl_int r = real_mem_free(c, p);
  logf_("clMemFreeINTEL %p ret=%d", p, r);
  return r;
}

static cl_int CL_API_CALL blocking_free(cl_context c, void *p) {
  char what[128];
  snprintf(what, sizeof what, "clMemBlockingFreeINTEL %p", p);
  logf_("BEGIN %s", what);
  int slot = wait_begin(what);
  cl_int r = real_blocking_free(c, p);
  wait_end(slot);
  logf_("clMemBlockingFreeINTEL %p ret=%d", p, r);
  return r;
}

static cl_int CL_API_CALL usm_memcpy(cl_command_queue q, cl_bool blocking, void *dst, const void *src, size_t size,
                                     cl_uint n, const cl_event *list, cl_event *ev) {
  int slot = blocking_begin("clEnqueueMemcpyINTEL", q, blocking, n, list);
  cl_int r = real_memcpy(q, blocking, dst, src, size, n, list, ev);
  wait_end(slot);
  ENQ_LOG("clEnqueueMemcpyINTEL", q, n, list, ev, r, "blocking=%u dst=%p src=%p size=%zu", blocking, dst, src, size);
  return r;
}

static cl_int CL_API_CALL usm_fill(cl_command_queue q, void *dst, const void *pat, size_t pat_size, size_t size,
                                   cl_uint n, const cl_event *list, cl_event *ev) {
  cl_int r = real_fill(q, dst, pat, pat_size, size, n, list, ev);
  ENQ_LOG("clEnqueueMemFillINTEL", q, n, list, ev, r, "dst=%p pattern_size=%zu size=%zu", dst, pat_size, size);
  return r;
}

static cl_int CL_API_CALL usm_migrate(cl_command_queue q, const void *p, size_t size, cl_mem_migration_flags f,
                                      cl_uint n, const cl_event *list, cl_event *ev) {
  cl_int r = real_migrate(q, p, size, f, n, list, ev);
  ENQ_LOG("clEnqueueMigrateMemINTEL", q, n, list, ev, r, "ptr=%p size=%zu", p, size);
  return r;
}

static cl_int CL_API_CALL usm_advise(cl_command_queue q, const void *p, size_t size, cl_mem_advice_intel a, cl_uint n,
                                     const cl_event *list, cl_event *ev) {
  cl_int r = real_advise(q, p, size, a, n, list, ev);
  ENQ_LOG("clEnqueueMemAdviseINTEL", q, n, list, ev, r, "ptr=%p size=%zu", p, size);
  return r;
}

EXPORT void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id p, const char *name) {
  INIT();
  void *f = REAL(clGetExtensionFunctionAddressForPlatform)(p, name);
  if (!f) return f;
#define WRAP(ext, slot, wrapper)                                                                                       \
  if (!strcmp(name, #ext)) {                                                                                           \
    slot = (ext##_fn)f;                                                                                                \
    return (void *)wrapper;                                                                                            \
  }
  WRAP(clHostMemAllocINTEL, real_host_alloc, host_alloc)
  WRAP(clDeviceMemAllocINTEL, real_device_alloc, device_alloc)
  WRAP(clSharedMemAllocINTEL, real_shared_alloc, shared_alloc)
  WRAP(clMemFreeINTEL, real_mem_free, mem_free)
  WRAP(clMemBlockingFreeINTEL, real_blocking_free, blocking_free)
  WRAP(clEnqueueMemcpyINTEL, real_memcpy, usm_memcpy)
  WRAP(clEnqueueMemFillINTEL, real_fill, usm_fill)
  WRAP(clEnqueueMigrateMemINTEL, real_migrate, usm_migrate)
  WRAP(clEnqueueMemAdviseINTEL, real_advise, usm_advise)
#undef WRAP
  return f;
}
