// urUSMPool*: pools for urUSM*Alloc and stream-ordered allocation.
#include "usm_pool.hpp"

#include "tables.hpp"

namespace ordo::ocl {

struct ContextPools::Impl {};

ContextPools::ContextPools(ur_context_handle_t) : impl_(new Impl) {}
ContextPools::~ContextPools() = default;
void ContextPools::sync_point() {}
void ContextPools::forget_queue(ur_queue_handle_t) {}

ur_result_t pool_alloc_now(ur_context_handle_t, ur_usm_pool_handle_t, ur_usm_type_t, ur_device_handle_t, size_t,
                           size_t, void **) {
  return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
}
ur_result_t pool_free_now(ur_context_handle_t, const UsmAllocation &) { return UR_RESULT_ERROR_INVALID_MEM_OBJECT; }

void fill_usm_pool_table(ur_dditable_t &) {}
void fill_async_alloc_table(ur_dditable_t &) {}

} // namespace ordo::ocl
