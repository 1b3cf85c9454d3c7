// urContext*: contexts over the one device.
#include <cstdlib>

#include "entry_points.hpp"
#include "context.hpp"

#include "ordo/info.hpp"
#include "platform.hpp"

namespace nc {

Context::Context() : pools(std::make_unique<ordo::so::context_pools>(pool_hooks)) {}

Context::~Context() {
  pools->shutdown(); // before the plain allocations: a fixed pool may lie in one
  for (auto &a : pools->plain_allocations()) {
    forget_usm_memory(a.base);
    std::free(a.base);
  }
  if (deleter) deleter(deleter_data);
}

void Context::on_user_released() { pools->user_released_context(); }

// seq_cst on both counters: a finisher that reads no waiter after its decrement is
// ordered before the waiter's own check of the count (no lost wake-up).
void Context::command_finished() noexcept {
  if (unfinished.fetch_sub(1, std::memory_order_seq_cst) == 1 && idle_waiters.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(idle_mu);
    idle_cv.notify_all();
  }
}

void Context::wait_idle() {
  std::unique_lock<std::mutex> lock(idle_mu);
  idle_waiters.fetch_add(1, std::memory_order_seq_cst);
  idle_cv.wait(lock, [&] { return unfinished.load(std::memory_order_seq_cst) == 0; });
  idle_waiters.fetch_sub(1, std::memory_order_seq_cst);
}

namespace {

ur_result_t UR_APICALL contextCreate(uint32_t DeviceCount, const ur_device_handle_t *phDevices,
                                     const ur_context_properties_t *pProperties, ur_context_handle_t *phContext) {
  if (!phDevices || !phContext) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (DeviceCount == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < DeviceCount; ++i)
    if (!is_device(phDevices[i])) return device_error(phDevices[i]);
  if (pProperties && (pProperties->flags & UR_CONTEXT_FLAGS_MASK)) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  return guarded([&] {
    *phContext = publish(new Context);
    return UR_RESULT_SUCCESS;
  });
}

ur_result_t UR_APICALL contextRetain(ur_context_handle_t hContext) { return user_retain<Context>(hContext); }
ur_result_t UR_APICALL contextRelease(ur_context_handle_t hContext) { return user_release<Context>(hContext); }

ur_result_t UR_APICALL contextGetInfo(ur_context_handle_t hContext, ur_context_info_t propName, size_t propSize,
                                      void *pPropValue, size_t *pPropSizeRet) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  switch (propName) {
  case UR_CONTEXT_INFO_NUM_DEVICES: return out.value(uint32_t{1});
  case UR_CONTEXT_INFO_DEVICES: {
    ur_device_handle_t dev = device_handle();
    return out.array(&dev, 1);
  }
  case UR_CONTEXT_INFO_REFERENCE_COUNT: return out.value(ctx->count());
  case UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT:
  case UR_CONTEXT_INFO_USM_FILL2D_SUPPORT: return out.boolean(true);
  case UR_CONTEXT_INFO_FORCE_UINT32: break;
  }
  return UR_RESULT_ERROR_INVALID_ENUMERATION;
}

ur_result_t UR_APICALL contextSetExtendedDeleter(ur_context_handle_t hContext, ur_context_extended_deleter_t pfnDeleter,
                                                 void *pUserData) {
  Context *ctx = lookup<Context>(hContext);
  if (!ctx) return Context::invalid_handle(hContext);
  if (!pfnDeleter) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  std::lock_guard<std::mutex> lock(ctx->mu);
  ctx->deleter = pfnDeleter;
  ctx->deleter_data = pUserData;
  return UR_RESULT_SUCCESS;
}

} // namespace

void install_context_entry_points(ur_dditable_t &t) {
  t.Context.pfnCreate = contextCreate;
  t.Context.pfnRetain = contextRetain;
  t.Context.pfnRelease = contextRelease;
  t.Context.pfnGetInfo = contextGetInfo;
  t.Context.pfnSetExtendedDeleter = contextSetExtendedDeleter;
}

} // namespace nc
