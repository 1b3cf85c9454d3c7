// The ordered pool core's CUDA backend and the context-wide core bookkeeping
// (ordered_core.hpp says why user pools run on it).
#include "ordered_core.hpp"

#include <algorithm>

namespace ordo::cuda {

CorePool::CorePool(Context *ctx, MemKind kind, Device *dev, const ordo::pool::pool_config &cfg,
                   void *user_memory, size_t user_size)
    : ctx_(ctx), kind_(kind), dev_(dev ? dev : ctx->devices[0]) {
  pool_ = user_memory ? std::make_unique<ordo::pool::ordered_pool>(*this, cfg, user_memory, user_size)
                      : std::make_unique<ordo::pool::ordered_pool>(*this, cfg);
  if (user_memory) {
    // The caller's range answers pointer queries like a chunk (never freed by us).
    std::lock_guard<std::mutex> lock(ctx_->chunks_mutex);
    ctx_->chunks[reinterpret_cast<uintptr_t>(user_memory)] = {user_size, this};
  }
}

CorePool::~CorePool() {
  // Frees still pending may have kernels on the memory: let them finish before the
  // chunks go back to the driver.
  pool_->collect();
  if (pool_->pending_blocks() != 0 && dev_->make_current() == CUDA_SUCCESS) drv().cuCtxSynchronize();
  bool fixed = pool_->is_fixed();
  pool_.reset();
  if (fixed) {
    std::lock_guard<std::mutex> lock(ctx_->chunks_mutex);
    for (auto it = ctx_->chunks.begin(); it != ctx_->chunks.end();)
      it = it->second.second == this ? ctx_->chunks.erase(it) : std::next(it);
  }
}

void *CorePool::get_chunk(std::size_t size) {
  if (dev_->make_current() != CUDA_SUCCESS) return nullptr;
  void *base = nullptr;
  CUresult r = CUDA_SUCCESS;
  if (kind_ == MemKind::host) {
    r = drv().cuMemHostAlloc(&base, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  } else {
    CUdeviceptr p = 0;
    r = kind_ == MemKind::shared ? drv().cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL)
                                 : drv().cuMemAlloc(&p, size);
    base = reinterpret_cast<void *>(p);
  }
  if (r != CUDA_SUCCESS) return nullptr;
  std::lock_guard<std::mutex> lock(ctx_->chunks_mutex);
  ctx_->chunks[reinterpret_cast<uintptr_t>(base)] = {size, this};
  return base;
}

// The pool gives back only chunks with no live or pending block.
void CorePool::put_chunk(void *base, std::size_t) {
  {
    std::lock_guard<std::mutex> lock(ctx_->chunks_mutex);
    ctx_->chunks.erase(reinterpret_cast<uintptr_t>(base));
  }
  dev_->make_current();
  if (kind_ == MemKind::host)
    drv().cuMemFreeHost(base);
  else
    drv().cuMemFree(reinterpret_cast<CUdeviceptr>(base));
}

// Release events are the free commands' UR events (recorded before the pool sees them).
bool CorePool::event_complete(ordo::pool::event_handle ev) {
  auto *e = static_cast<Event *>(ev);
  if (!e->done) return true;
  e->dev->make_current();
  return drv().cuEventQuery(e->done) == CUDA_SUCCESS;
}

bool CorePool::add_dependency(ordo::pool::command_context cmd, ordo::pool::event_handle ev) {
  auto *c = static_cast<CoreCommand *>(cmd);
  if (!c || !c->stream) return false;
  auto *e = static_cast<Event *>(ev);
  if (!e->done) return true; // nothing pending behind it
  // The wait captures the record now, so no reference outlives the call.
  return drv().cuStreamWaitEvent(c->stream, e->done, 0) == CUDA_SUCCESS;
}

void CorePool::retain_event(ordo::pool::event_handle ev) { static_cast<Event *>(ev)->retain(); }

// Dropping an event may drop its queue; neither touches a pool, so this is safe
// under the pool's lock.
void CorePool::release_event(ordo::pool::event_handle ev) {
  auto *e = static_cast<Event *>(ev);
  if (e->release()) event_destroy(e);
}

ur_result_t core_result(ordo::pool::status s, MemKind kind) {
  using ordo::pool::status;
  switch (s) {
  case status::success: return UR_RESULT_SUCCESS;
  case status::out_of_memory:
    return kind == MemKind::host ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  case status::invalid_size: return UR_RESULT_ERROR_INVALID_USM_SIZE;
  case status::invalid_alignment: return UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  case status::invalid_argument: return UR_RESULT_ERROR_INVALID_VALUE;
  case status::not_owned:
  case status::not_block_start:
  case status::double_free: return UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  }
  return UR_RESULT_ERROR_UNKNOWN;
}

void core_register(Context *ctx, CorePool *core) {
  std::lock_guard<std::mutex> lock(ctx->cores_mutex);
  ctx->cores.push_back(core);
  ctx->core_count.store(ctx->cores.size(), std::memory_order_release);
}

void core_unregister(Context *ctx, CorePool *core) {
  std::lock_guard<std::mutex> lock(ctx->cores_mutex);
  ctx->cores.erase(std::remove(ctx->cores.begin(), ctx->cores.end(), core), ctx->cores.end());
  ctx->core_count.store(ctx->cores.size(), std::memory_order_release);
}

void release_cores_above_threshold(Context *ctx) {
  if (ctx->core_count.load(std::memory_order_acquire) == 0) return; // default pools only
  // Held across the calls: a core is unregistered (under this lock) before it dies.
  std::lock_guard<std::mutex> lock(ctx->cores_mutex);
  for (CorePool *core : ctx->cores) core->pool().release_above_threshold();
}

bool core_block_base(Context *ctx, const void *ptr, const void **base) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  CorePool *core = nullptr;
  {
    std::lock_guard<std::mutex> lock(ctx->chunks_mutex);
    auto it = ctx->chunks.upper_bound(p);
    if (it == ctx->chunks.begin()) return false;
    --it;
    if (p >= it->first + it->second.first) return false;
    core = it->second.second;
  }
  // A live block keeps its pool (and core) alive, so the core is safe to ask.
  ordo::pool::block_info info;
  if (!core->pool().lookup(ptr, info)) return false;
  *base = info.base;
  return true;
}

} // namespace ordo::cuda
