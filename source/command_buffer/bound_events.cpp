// SPDX-License-Identifier: Apache-2.0
// Bound events (bound_events.hpp, docs/command-buffers.md "Events that are signalled
// again"): the registry, binding, and the answers of the event entry points.
#include "bound_events.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <unordered_map>

#include "ordo/info.hpp"
#include "records.hpp"

namespace ordo::command_buffer {

namespace {

struct BoundEvent : ordo::object {
  BoundEvent() : object(handle_kind::bound_event) {}
  ur_context_handle_t context = nullptr; // retained
  ur_command_t type = UR_COMMAND_EVENTS_WAIT;
  bool reusable = false;
  std::mutex mu;
  ur_event_handle_t current = nullptr; // the adapter's event it stands for now (held)
  // References held for callbacks that have not run yet: not the user's, so left out
  // of REFERENCE_COUNT.
  std::atomic<uint32_t> callback_holds{0};
};
ORDO_HANDLE_CHECK(BoundEvent);

struct Registry {
  std::mutex mu;
  std::unordered_map<const void *, BoundEvent *> live;
};
Registry &registry() {
  static Registry *r = new Registry; // never destroyed: events may be released at exit
  return *r;
}
std::atomic<uint32_t> g_live{0};

// A live bound event, held for the length of a call (null: `e` is not one).
class Ref {
public:
  explicit Ref(ur_event_handle_t e) {
    if (g_live.load(std::memory_order_acquire) == 0) return;
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.live.find(e);
    if (it == r.live.end()) return;
    b_ = it->second;
    b_->retain();
  }
  ~Ref() {
    if (b_) drop(b_);
  }
  Ref(const Ref &) = delete;
  Ref &operator=(const Ref &) = delete;
  BoundEvent *operator->() const { return b_; }
  explicit operator bool() const { return b_ != nullptr; }
  BoundEvent *get() const { return b_; }

  // One reference less; the last one forgets and frees the event.
  static void drop(BoundEvent *b) {
    {
      Registry &r = registry();
      std::lock_guard<std::mutex> lock(r.mu);
      if (!b->release()) return;
      r.live.erase(b);
    }
    g_live.fetch_sub(1, std::memory_order_acq_rel);
    note_activity(-1);
    if (b->current) unwrapped().Event.pfnRelease(b->current);
    table().Context.pfnRelease(b->context);
    delete b;
  }

private:
  BoundEvent *b_ = nullptr;
};

// What `b` stands for now, held for the caller (null: never signalled).
ur_event_handle_t current_of(BoundEvent *b) {
  std::lock_guard<std::mutex> lock(b->mu);
  if (b->current) unwrapped().Event.pfnRetain(b->current);
  return b->current;
}

} // namespace

ur_result_t make_bound(ur_context_handle_t ctx, ur_command_t type, bool reusable, ur_event_handle_t *out) {
  BoundEvent *b = new (std::nothrow) BoundEvent();
  if (!b) return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  b->context = ctx;
  b->type = type;
  b->reusable = reusable;
  try {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.emplace(b, b);
  } catch (...) {
    delete b;
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  table().Context.pfnRetain(ctx);
  g_live.fetch_add(1, std::memory_order_acq_rel);
  note_activity(+1);
  *out = reinterpret_cast<ur_event_handle_t>(b);
  return UR_RESULT_SUCCESS;
}

void bind(ur_event_handle_t bound, ur_event_handle_t real) {
  Ref b(bound);
  if (!b) return;
  unwrapped().Event.pfnRetain(real);
  ur_event_handle_t old = nullptr;
  {
    std::lock_guard<std::mutex> lock(b->mu);
    old = b->current;
    b->current = real;
  }
  if (old) unwrapped().Event.pfnRelease(old);
}

bool is_reusable(ur_event_handle_t e) {
  Ref b(e);
  return b && b->reusable;
}

SubstitutedWaits::SubstitutedWaits(uint32_t count, const ur_event_handle_t *list) : n(count), w(list) {
  if (g_live.load(std::memory_order_acquire) == 0 || !list || count == 0) return;
  bool any = false;
  for (uint32_t i = 0; i < count; ++i) {
    Ref b(list[i]);
    if (!b) {
      list_.push_back(list[i]);
      continue;
    }
    any = true;
    if (ur_event_handle_t cur = current_of(b.get())) {
      list_.push_back(cur);
      held_.push_back(cur);
    } // never signalled: nothing to wait for
  }
  if (!any) return;
  n = static_cast<uint32_t>(list_.size());
  w = list_.empty() ? nullptr : list_.data();
}

SubstitutedWaits::~SubstitutedWaits() {
  for (ur_event_handle_t e : held_) unwrapped().Event.pfnRelease(e);
}

bool bound_retain(ur_event_handle_t e, ur_result_t &r) {
  Ref b(e);
  if (!b) return false;
  b->retain();
  r = UR_RESULT_SUCCESS;
  return true;
}

bool bound_release(ur_event_handle_t e, ur_result_t &r) {
  Ref b(e);
  if (!b) return false;
  Ref::drop(b.get()); // the caller's; the Ref's own hold goes last
  r = UR_RESULT_SUCCESS;
  return true;
}

bool bound_get_info(ur_event_handle_t e, ur_event_info_t prop, size_t size, void *value, size_t *sizeRet,
                    ur_result_t &r) {
  Ref b(e);
  if (!b) return false;
  if (value && size == 0) {
    r = UR_RESULT_ERROR_INVALID_SIZE;
    return true;
  }
  if (!value && !sizeRet) {
    r = UR_RESULT_ERROR_INVALID_NULL_POINTER;
    return true;
  }
  ordo::InfoWriter out(size, value, sizeRet);
  ur_event_handle_t cur = current_of(b.get());
  switch (prop) {
  case UR_EVENT_INFO_CONTEXT: r = out.value(b->context); break;
  case UR_EVENT_INFO_COMMAND_TYPE: r = out.value(b->type); break;
  case UR_EVENT_INFO_REFERENCE_COUNT: // less this call's hold and the callbacks'
    r = out.value(b->count() - 1 - b->callback_holds.load());
    break;
  case UR_EVENT_INFO_COMMAND_QUEUE:
  case UR_EVENT_INFO_COMMAND_EXECUTION_STATUS:
    if (cur) {
      r = unwrapped().Event.pfnGetInfo(cur, prop, size, value, sizeRet);
    } else if (prop == UR_EVENT_INFO_COMMAND_QUEUE) {
      r = out.value(ur_queue_handle_t{nullptr}); // not signalled yet: no queue
    } else {
      r = out.value(UR_EVENT_STATUS_QUEUED);
    }
    break;
  default: r = UR_RESULT_ERROR_INVALID_ENUMERATION; break;
  }
  if (cur) unwrapped().Event.pfnRelease(cur);
  return true;
}

bool bound_profiling_info(ur_event_handle_t e, ur_profiling_info_t prop, size_t size, void *value, size_t *sizeRet,
                          ur_result_t &r) {
  Ref b(e);
  if (!b) return false;
  ur_event_handle_t cur = current_of(b.get());
  r = cur ? unwrapped().Event.pfnGetProfilingInfo(cur, prop, size, value, sizeRet)
          : UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE;
  if (cur) unwrapped().Event.pfnRelease(cur);
  return true;
}

namespace {

// A user's callback on a bound event, set on the adapter's event bound at the time.
// It holds both until it has run: the bound event, so that the user's handle it passes
// stays valid even after the user's last release, and the adapter's event, which the
// next signal lets go.
struct ForwardedCallback {
  BoundEvent *bound;
  ur_event_handle_t real;
  ur_event_callback_t fn;
  void *data;
};

void release_forwarded(ForwardedCallback *c) {
  unwrapped().Event.pfnRelease(c->real);
  c->bound->callback_holds.fetch_sub(1);
  Ref::drop(c->bound);
  delete c;
}

void UR_APICALL forward_callback(ur_event_handle_t, ur_execution_info_t status, void *p) {
  auto *c = static_cast<ForwardedCallback *>(p);
  c->fn(reinterpret_cast<ur_event_handle_t>(c->bound), status, c->data); // the handle the user has
  release_forwarded(c);
}

} // namespace

bool bound_set_callback(ur_event_handle_t e, ur_execution_info_t status, ur_event_callback_t fn, void *data,
                        ur_result_t &r) {
  Ref b(e);
  if (!b) return false;
  // The callback watches the signal bound now: a later signal is another event.
  ur_event_handle_t cur = current_of(b.get());
  if (!cur) {
    r = UR_RESULT_ERROR_INVALID_EVENT;
    return true;
  }
  if (!fn) { // the adapter's own checks come first for everything else
    unwrapped().Event.pfnRelease(cur);
    r = UR_RESULT_ERROR_INVALID_NULL_POINTER;
    return true;
  }
  auto *c = new (std::nothrow) ForwardedCallback{b.get(), cur, fn, data}; // takes current_of's hold on cur
  if (!c) {
    unwrapped().Event.pfnRelease(cur);
    r = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return true;
  }
  b->retain();
  b->callback_holds.fetch_add(1);
  r = unwrapped().Event.pfnSetCallback(cur, status, forward_callback, c);
  if (r != UR_RESULT_SUCCESS) release_forwarded(c); // never set: nothing will call it
  return true;
}

bool bound_native_handle(ur_event_handle_t e, ur_native_handle_t *out, ur_result_t &r) {
  Ref b(e);
  if (!b) return false;
  ur_event_handle_t cur = current_of(b.get());
  r = cur ? unwrapped().Event.pfnGetNativeHandle(cur, out) : UR_RESULT_ERROR_INVALID_EVENT;
  if (cur) unwrapped().Event.pfnRelease(cur);
  return true;
}

ur_result_t UR_APICALL urEventCreateExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        const ur_exp_event_desc_t *pEventDesc, ur_event_handle_t *phEvent) {
  if (!hContext || !hDevice) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!pEventDesc || !phEvent) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pEventDesc->flags & UR_EXP_EVENT_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  // An event another process opens would need the adapter's own IPC events.
  if (pEventDesc->flags & UR_EXP_EVENT_FLAG_IPC_EXP) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  uint32_t n = 0;
  if (table().Context.pfnGetInfo(hContext, UR_CONTEXT_INFO_NUM_DEVICES, sizeof n, &n, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_ERROR_INVALID_CONTEXT;
  try {
    std::vector<ur_device_handle_t> devices(n);
    if (table().Context.pfnGetInfo(hContext, UR_CONTEXT_INFO_DEVICES, n * sizeof(ur_device_handle_t), devices.data(),
                                   nullptr) != UR_RESULT_SUCCESS)
      return UR_RESULT_ERROR_INVALID_CONTEXT;
    if (std::find(devices.begin(), devices.end(), hDevice) == devices.end()) return UR_RESULT_ERROR_INVALID_DEVICE;
  } catch (const std::bad_alloc &) {
    return UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return make_bound(hContext, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, phEvent);
}

} // namespace ordo::command_buffer
