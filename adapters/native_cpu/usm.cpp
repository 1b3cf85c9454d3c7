// SPDX-License-Identifier: Apache-2.0
// urUSM* allocation entry points (ur_common/usm.hpp) over the C heap: every kind is
// host memory here. urUSMContextMemcpyExp is this file's.
#include <cstdlib>
#include <cstring>

#include "context.hpp"
#include "entry_points.hpp"
#include "event.hpp"
#include "logging.hpp"
#include "ordo/checked_math.hpp"
#include "ordo/usm_owners.hpp"
#include "platform.hpp"
#include "ur_common/usm.hpp"
#include "worker_pool.hpp"

namespace ordo::native_cpu {

namespace {

// Default alignment: a cache line, so that allocations never share one.
constexpr size_t kDefaultAlign = 64;

struct usm_hooks {
  using Context = ordo::native_cpu::Context;
  using Device = ordo::native_cpu::Device;
  static size_t max_alloc(const Device *) { return max_alloc_size(); }
  static bool shared_supported(const Device *) { return true; }
  // Flags the spec does not define are refused; the size limit holds for pools too.
  static ur_result_t check_alloc(const ur_usm_desc_t *desc, size_t size) {
    if (ur_result_t r = ordo::ur_common::check_chained_flags(desc, 64)) return r;
    if (size > max_alloc_size()) return UR_RESULT_ERROR_INVALID_USM_SIZE;
    return UR_RESULT_SUCCESS;
  }
  static ur_result_t alloc_plain(Context *ctx, ur_usm_type_t kind, Device *, size_t size, size_t align, void **out) {
    void *p = nullptr;
    if (posix_memalign(&p, align > kDefaultAlign ? align : kDefaultAlign, size) != 0 || !p)
      return kind == UR_USM_TYPE_HOST ? UR_RESULT_ERROR_OUT_OF_HOST_MEMORY : UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    ur_result_t r = guarded([&] {
      note_usm_memory(p, size, *ctx);
      return UR_RESULT_SUCCESS;
    });
    if (r != UR_RESULT_SUCCESS) std::free(p);
    *out = r == UR_RESULT_SUCCESS ? p : nullptr;
    return r;
  }
  // The C heap may hand a freed allocation out again at once, so urUSMFree waits until
  // no command of the context is unfinished; a host task or callback, whose own command
  // is unfinished, frees at once (docs/native-cpu.md, "USM").
  static ur_result_t wait_before_free(Context *ctx) {
    if (!WorkerPool::on_worker_thread() && !graph::in_callback()) ctx->wait_idle();
    return UR_RESULT_SUCCESS;
  }
  static void free_refused(Context *, void *p) {
    NC_LOG(info, "urUSMFree: %p is not the start of a live USM allocation of this context", p);
  }
};

ordo::usm_owners<const Context *> &usm_owners() { return ordo::usm_owners<const Context *>::instance(); }

ur_result_t UR_APICALL urUSMContextMemcpyExp(ur_context_handle_t hContext, void *pDst, const void *pSrc, size_t size) {
  ORDO_LOOKUP(Context, ctx, hContext);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (ur_result_t r = check_usm_range(*ctx, pDst, size)) return r;
  if (ur_result_t r = check_usm_range(*ctx, pSrc, size)) return r;
  std::memmove(pDst, pSrc, size);
  return UR_RESULT_SUCCESS;
}

} // namespace

void note_usm_memory(const void *base, size_t size, const Context &owner) { usm_owners().note(base, size, &owner); }

void free_usm_memory(void *base) {
  usm_owners().forget(base);
  std::free(base);
}

// The layer's one rule (a command past a pool block wrote into its neighbour before),
// then another context's memory (ur_common/pool_hooks.hpp).
ur_result_t check_usm_range(Context &ctx, const void *p, size_t bytes) {
  return ordo::ur_common::check_usm_range<const Context *>(&ctx, p, bytes);
}

void install_usm_entry_points(ur_dditable_t &t) {
  ordo::ur_common::usm_entry_points<usm_hooks>::install(t);
  t.USMExp.pfnContextMemcpyExp = urUSMContextMemcpyExp;
}

} // namespace ordo::native_cpu
