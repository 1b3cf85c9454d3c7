// SPDX-License-Identifier: Apache-2.0
// The pool object of the stream-ordered layer: its cores (one ordered_pool per
// memory class, all sharing the pool's budget), its handle and lifetime, and the
// one table from core status to ur_result_t (docs/async-alloc.md, "Errors").
#include <algorithm>
#include <unordered_set>

#include "ordo/ddi_fill.hpp"
#include "ordo/retired_handles.hpp"
#include "pool_core.hpp"

ur_usm_pool_handle_t_::ur_usm_pool_handle_t_(ordo::stream_ordered::pool *p)
    : ordo::object(ordo::handle_kind::usm_pool), owner(p) {}

namespace ordo::stream_ordered {

using ordo::pool::status;

// ---- handles ------------------------------------------------------------------

namespace {
// Every live pool handle of this adapter library. A destroyed handle leaves it at
// once, so a later call with it is refused instead of touching freed memory.
struct handle_registry {
  std::shared_mutex mu;
  std::unordered_set<const ur_usm_pool_handle_t_ *> live;
};
handle_registry &handles() {
  static handle_registry *r = new handle_registry; // outlives static destructors
  return *r;
}
void register_handle(const ur_usm_pool_handle_t_ *h) {
  std::unique_lock<std::shared_mutex> lock(handles().mu);
  handles().live.insert(h);
}
void unregister_handle(const ur_usm_pool_handle_t_ *h) {
  std::unique_lock<std::shared_mutex> lock(handles().mu);
  handles().live.erase(h);
}
} // namespace

ur_result_t acquire(ur_usm_pool_handle_t h, pool_ref &out) {
  if (!h) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::shared_lock<std::shared_mutex> lock(handles().mu);
  if (!handles().live.count(h)) return UR_RESULT_ERROR_INVALID_VALUE;
  pool *p = h->owner;
  if (p->destroyed()) return UR_RESULT_ERROR_INVALID_VALUE;
  out = pool_ref(p); // registered objects are alive: the reference is safe here
  return UR_RESULT_SUCCESS;
}

ur_result_t to_result(status s, ur_usm_type_t kind) {
  switch (s) {
  case status::success: return UR_RESULT_SUCCESS;
  case status::out_of_memory:
    return kind == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  case status::invalid_size: return UR_RESULT_ERROR_INVALID_USM_SIZE;
  case status::invalid_alignment: return UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  case status::invalid_argument:
  case status::closed: return UR_RESULT_ERROR_INVALID_VALUE; // a destroyed pool
  case status::not_owned:
  case status::not_block_start:
  case status::double_free: return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  }
  return UR_RESULT_ERROR_UNKNOWN;
}

const void *new_queue_identity() {
  static std::atomic<uintptr_t> next{0x1000};
  return reinterpret_cast<const void *>(next.fetch_add(64, std::memory_order_relaxed));
}

// ---- the pool -----------------------------------------------------------------------

pool::pool(context_pools &ctx, pool_scope scope, ur_device_handle_t device, bool is_default, const pool_settings &s)
    : handle_(this), ctx_(ctx), scope_(scope), device_(device), is_default_(is_default), settings_(s) {
  size_t max = s.user_memory ? s.user_size : s.config.max_size;
  budget_ = std::make_shared<ordo::pool::pool_budget>(max, std::min(s.config.release_threshold, max ? max : SIZE_MAX));
  if (s.user_memory) {
    // A fixed pool has exactly one core, over the user's memory.
    mem_class cls;
    ur_result_t err =
        ctx.hooks().memory_class(s.user_kind, s.user_kind == UR_USM_TYPE_HOST ? nullptr : s.user_device, cls);
    if (err != UR_RESULT_SUCCESS) cls = mem_class{s.user_device, unsigned(s.user_kind)};
    auto c = std::make_unique<core>(*this, cls);
    c->op = std::make_unique<ordo::pool::ordered_pool>(*c, s.config, s.user_memory, s.user_size, budget_);
    cores_.push_back(std::move(c));
    fast_cores_[0].store(cores_.back().get(), std::memory_order_relaxed);
    fast_core_count_.store(1, std::memory_order_release);
  }
  register_handle(&handle_);
  if (!is_default_) ctx_.hooks().retain_context(); // last: nothing after it can throw
}

pool::~pool() {
  unregister_handle(&handle_);
  if (claimed_) ctx_.unclaim_user_memory(settings_.user_memory);
  cores_.clear(); // returns every chunk and every event
  if (!is_default_) ctx_.hooks().release_context();
}

ur_result_t pool::claim_user_memory() {
  ur_result_t r = ctx_.claim_user_memory(settings_.user_memory, settings_.user_size, settings_.user_kind, this,
                                         cores_.front().get());
  claimed_ = r == UR_RESULT_SUCCESS;
  return r;
}

bool pool::try_add_ref() {
  uint32_t n = refs_.load(std::memory_order_acquire);
  do {
    if (n == 0) return false;
  } while (!refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel));
  return true;
}

bool pool::close_if_idle() {
  std::lock_guard<std::mutex> lock(cores_mu_);
  if (closed_.load(std::memory_order_relaxed)) return true;
  size_t done = 0;
  while (done < cores_.size() && cores_[done]->op->close_if_idle()) ++done;
  if (done != cores_.size()) { // something is live or pending again: not yet
    for (size_t i = 0; i < done; ++i) cores_[i]->op->reopen();
    return false;
  }
  closed_.store(true, std::memory_order_release);
  return true;
}

// The last reference: the pool goes, but its handle's storage is retired, not freed
// (docs/adapter-guide.md, "Released handles"), so a call on a destroyed pool's handle
// gets INVALID_VALUE from the retired table instead of a jump through freed memory.
void pool::drop_ref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  ordo::retire_object(this, &handle_);
}

bool pool::end_user_handle() {
  uint32_t have = handle_.ref_count.load(std::memory_order_acquire);
  do {
    if (have == 0) return false;
  } while (!handle_.ref_count.compare_exchange_weak(have, 0, std::memory_order_acq_rel));
  destroyed_.store(true, std::memory_order_release);
  unregister_handle(&handle_);
  ctx_.user_released(*this);
  drop_ref(); // the user's
  return true;
}

ur_result_t pool::serves(ur_usm_type_t kind, ur_device_handle_t device) const {
  if (settings_.user_memory) {
    if (kind != settings_.user_kind) return UR_RESULT_ERROR_INVALID_VALUE;
    if (kind != UR_USM_TYPE_HOST && settings_.user_device && device != settings_.user_device)
      return UR_RESULT_ERROR_INVALID_DEVICE;
    return UR_RESULT_SUCCESS;
  }
  switch (scope_) {
  case pool_scope::device:
    if (kind != UR_USM_TYPE_DEVICE && kind != UR_USM_TYPE_SHARED) return UR_RESULT_ERROR_INVALID_VALUE;
    return device == device_ ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_DEVICE;
  case pool_scope::host: return kind == UR_USM_TYPE_HOST ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_VALUE;
  case pool_scope::context: return UR_RESULT_SUCCESS;
  }
  return UR_RESULT_ERROR_INVALID_VALUE;
}

pool::core *pool::core_for(const mem_class &c, ur_result_t &err) {
  const size_t n = fast_core_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    core *k = fast_cores_[i].load(std::memory_order_relaxed);
    if (k->cls == c) return k;
  }
  std::lock_guard<std::mutex> lock(cores_mu_);
  for (auto &k : cores_)
    if (k->cls == c) return k.get();
  if (closed_.load(std::memory_order_relaxed)) {
    err = UR_RESULT_ERROR_INVALID_VALUE; // destroyed and reaped: see alloc_in_command
    return nullptr;
  }
  if (settings_.user_memory) {
    err = UR_RESULT_ERROR_INVALID_VALUE; // a fixed pool has no other memory
    return nullptr;
  }
  try {
    auto made = std::make_unique<core>(*this, c);
    made->op = std::make_unique<ordo::pool::ordered_pool>(*made, settings_.config, budget_);
    cores_.push_back(std::move(made));
  } catch (...) {
    err = UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return nullptr;
  }
  core *k = cores_.back().get();
  const size_t i = fast_core_count_.load(std::memory_order_relaxed);
  if (i < kFastCores) {
    fast_cores_[i].store(k, std::memory_order_relaxed);
    fast_core_count_.store(i + 1, std::memory_order_release);
  }
  return k;
}

status pool::free_if_live(void *ptr, const ordo::pool::release_info &rel) {
  const size_t n = fast_core_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    const status s = fast_cores_[i].load(std::memory_order_relaxed)->op->free_if_live(ptr, rel);
    if (s != status::not_owned) return s;
  }
  return status::not_owned;
}

size_t pool::live_allocations() const {
  std::lock_guard<std::mutex> lock(cores_mu_);
  size_t n = 0;
  for (auto &k : cores_) n += k->op->live_allocations();
  return n;
}

size_t pool::pending_blocks() const {
  std::lock_guard<std::mutex> lock(cores_mu_);
  size_t n = 0;
  for (auto &k : cores_) n += k->op->pending_blocks();
  return n;
}

void pool::collect() {
  std::lock_guard<std::mutex> lock(cores_mu_);
  for (auto &k : cores_) k->op->collect();
}

void pool::drop_lane(const void *queue) {
  std::lock_guard<std::mutex> lock(cores_mu_);
  for (auto &k : cores_) k->op->drop_lane(queue);
}

void pool::forget_taken_over() {
  std::lock_guard<std::mutex> lock(cores_mu_);
  for (auto &k : cores_) k->op->forget_taken_over();
}

void pool::release_above_threshold() {
  std::lock_guard<std::mutex> lock(cores_mu_);
  for (auto &k : cores_) k->op->release_above_threshold();
}

// The floor is the pool's: each core gives back while the pool as a whole holds more.
void pool::trim_to(size_t keep) {
  std::lock_guard<std::mutex> lock(cores_mu_);
  for (auto &k : cores_) k->op->trim_to(keep);
}

// The requesting core's own idle chunks count too: they could not serve the request
// (too small or badly placed), but giving them back makes room for a chunk that can.
// Other classes give back first, the requester last.
bool pool::release_idle_except(const core *except, size_t need) {
  const size_t max = budget_->max_size();
  if (!max || need > max) return false; // no maximum, or a request that can never fit
  std::lock_guard<std::mutex> lock(cores_mu_);
  size_t idle = 0;
  for (auto &k : cores_) idle += k->op->idle_bytes();
  if (idle == 0 || budget_->room() + idle < need) return false;
  size_t released = 0;
  for (auto &k : cores_)
    if (k.get() != except && budget_->room() < need) released += k->op->trim_to(max - need); // only as much as needed
  for (auto &k : cores_)
    if (k.get() == except && budget_->room() < need) released += k->op->trim_to(max - need);
  return released != 0;
}

ur_usm_type_t pool::kind_of(const void *base, ur_usm_type_t primary) const {
  if (kinds_count_.load(std::memory_order_acquire) == 0) return primary;
  std::lock_guard<std::mutex> lock(kinds_mu_);
  auto it = kinds_.find(reinterpret_cast<uintptr_t>(base));
  return it == kinds_.end() ? primary : it->second;
}

void pool::set_kind(const void *base, ur_usm_type_t kind, ur_usm_type_t primary) {
  if (kind == primary) return;
  std::lock_guard<std::mutex> lock(kinds_mu_);
  kinds_[reinterpret_cast<uintptr_t>(base)] = kind;
  kinds_count_.store(kinds_.size(), std::memory_order_release);
}

void pool::clear_kind(const void *base) {
  if (kinds_count_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(kinds_mu_);
  kinds_.erase(reinterpret_cast<uintptr_t>(base));
  kinds_count_.store(kinds_.size(), std::memory_order_release);
}

} // namespace ordo::stream_ordered
