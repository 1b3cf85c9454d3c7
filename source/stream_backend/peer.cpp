// SPDX-License-Identifier: Apache-2.0
// Peer access (urUsmP2P*Exp): one device using another's memory. Enabling maps all of the
// peer's memory into the command device's context, allocations made later included, so
// every pool chunk, buffer and USM allocation of the peer becomes usable from the
// command device's kernels and copies. A device always reaches its own memory: with
// itself, support is reported and enable/disable have nothing to do.
#include "backend.hpp"
#include "ordo/info.hpp"

namespace ordo::stream_backend {

namespace {

ur_result_t devices_of(ur_device_handle_t hCommand, ur_device_handle_t hPeer, Device *&d, Device *&p) {
  if (ur_result_t r = unwrap(hCommand, d)) return r;
  if (ur_result_t r = unwrap(hPeer, p)) return r;
  return d->platform == p->platform ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_DEVICE;
}

// Enables or disables `d`'s access to `p`'s memory.
ur_result_t set_access(ur_device_handle_t hCommand, ur_device_handle_t hPeer, bool enable) {
  Device *d, *p;
  if (ur_result_t r = devices_of(hCommand, hPeer, d, p)) return r;
  if (d == p) return UR_RESULT_SUCCESS;
  bool access = false, atomics = false;
  ORDO_DRV(drv::peer_query(d->native, p->native, &access, &atomics));
  if (!access) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE; // no link between the two
  dctx_t peer_ctx = p->context();
  if (!peer_ctx) return to_ur(p->context_error);
  ORDO_DRV(d->make_current());
  ORDO_DRV(enable ? drv::peer_enable(p->native, peer_ctx) : drv::peer_disable(p->native, peer_ctx));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL urUsmP2PEnablePeerAccessExp(ur_device_handle_t hCommand, ur_device_handle_t hPeer) {
  return set_access(hCommand, hPeer, true);
}

ur_result_t UR_APICALL urUsmP2PDisablePeerAccessExp(ur_device_handle_t hCommand, ur_device_handle_t hPeer) {
  return set_access(hCommand, hPeer, false);
}

ur_result_t UR_APICALL urUsmP2PPeerAccessGetInfoExp(ur_device_handle_t hCommand, ur_device_handle_t hPeer,
                                                    ur_exp_peer_info_t propName, size_t propSize, void *pPropValue,
                                                    size_t *pPropSizeRet) {
  Device *d, *p;
  if (ur_result_t r = devices_of(hCommand, hPeer, d, p)) return r;
  if (propName > UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (ur_result_t r = check_info_args(propSize, pPropValue, pPropSizeRet)) return r;
  bool access = true, atomics = true;
  if (d != p) ORDO_DRV(drv::peer_query(d->native, p->native, &access, &atomics));
  InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(int(propName == UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT ? access : atomics));
}

} // namespace

void install_peer_entry_points(ur_dditable_t &t) {
  t.UsmP2PExp.pfnEnablePeerAccessExp = urUsmP2PEnablePeerAccessExp;
  t.UsmP2PExp.pfnDisablePeerAccessExp = urUsmP2PDisablePeerAccessExp;
  t.UsmP2PExp.pfnPeerAccessGetInfoExp = urUsmP2PPeerAccessGetInfoExp;
}

} // namespace ordo::stream_backend
