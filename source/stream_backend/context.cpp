// Contexts: a set of devices, each used through its primary context. urContext* are
// ur_common/context.hpp's; this file says what the driver adds.
#include "backend.hpp"
#include "ur_common/context.hpp"

namespace ordo::sb {

namespace {

struct context_hooks : handle_types {
  static ur_result_t check_device(const std::vector<Device *> &, Device *d) {
    return d->context() ? UR_RESULT_SUCCESS : to_ur(d->context_error);
  }
  static ur_result_t create(const std::vector<Device *> &, Context *&out) {
    out = new Context();
    return UR_RESULT_SUCCESS;
  }
  static void free_plain(Context *ctx, const ordo::so::context_pools::block_facts &a) {
    sb::free_plain(ctx, a.base, a.kind, a.device);
  }
  static void destroy(Context *) {}
  static ur_result_t native_handle(Context *ctx, ur_native_handle_t *out) {
    // One dctx_t stands for one device: only a single-device context has one.
    if (ctx->devices.size() != 1) return UR_RESULT_ERROR_INVALID_CONTEXT;
    *out = reinterpret_cast<ur_native_handle_t>(ctx->devices[0]->context());
    return UR_RESULT_SUCCESS;
  }
};

using entry_points = ordo::uc::context_entry_points<context_hooks>;

} // namespace

void context_hold(Context *ctx) { ctx->life.hold(); }
void context_drop(Context *ctx) { entry_points::drop(ctx); }
void install_context_entry_points(ur_dditable_t &t) { entry_points::install(t); }

} // namespace ordo::sb
