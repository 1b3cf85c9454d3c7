// SPDX-License-Identifier: Apache-2.0
// urUsmP2P*Exp where a device is its own only peer (ordo_derived/derived.hpp,
// docs/command-buffers.md "Derived entry points"). A device always reaches its own
// memory, so access with itself is reported supported, atomics as the device answers for
// its own device USM (UR_DEVICE_INFO_USM_DEVICE_SUPPORT's ATOMIC_ACCESS), and enabling or
// disabling access with itself succeeds and changes nothing. Native CPU has one device;
// an OpenCL platform may have more, but the adapter offers no access to another
// device's memory: for two different devices the query answers 0 and enabling is
// UNSUPPORTED_FEATURE.
#include "ordo/ddi_fill.hpp"
#include "ordo/info.hpp"
#include "ordo_derived/derived.hpp"

namespace ordo::derived {

namespace {

const ur_dditable_t &table() { return ordo::adapter_ddi(); }

// The adapter's own handle check: any device query refuses a handle it does not know.
ur_result_t check_device(ur_device_handle_t d) {
  if (!d) return UR_RESULT_ERROR_INVALID_NULL_HANDLE;
  ur_device_type_t type{};
  return table().Device.pfnGetInfo(d, UR_DEVICE_INFO_TYPE, sizeof type, &type, nullptr);
}

ur_result_t check_pair(ur_device_handle_t command, ur_device_handle_t peer) {
  if (ur_result_t r = check_device(command)) return r;
  return check_device(peer);
}

ur_result_t UR_APICALL urUsmP2PEnablePeerAccessExp(ur_device_handle_t commandDevice, ur_device_handle_t peerDevice) {
  if (ur_result_t r = check_pair(commandDevice, peerDevice)) return r;
  return commandDevice == peerDevice ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ur_result_t UR_APICALL urUsmP2PDisablePeerAccessExp(ur_device_handle_t commandDevice, ur_device_handle_t peerDevice) {
  if (ur_result_t r = check_pair(commandDevice, peerDevice)) return r;
  return commandDevice == peerDevice ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ur_result_t UR_APICALL urUsmP2PPeerAccessGetInfoExp(ur_device_handle_t commandDevice, ur_device_handle_t peerDevice,
                                                    ur_exp_peer_info_t propName, size_t propSize, void *pPropValue,
                                                    size_t *pPropSizeRet) {
  if (ur_result_t r = check_pair(commandDevice, peerDevice)) return r;
  if (propName > UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (propSize == 0 && pPropValue) return UR_RESULT_ERROR_INVALID_SIZE;
  if (propSize != 0 && !pPropValue) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!pPropValue && !pPropSizeRet) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  int answer = 0;
  if (commandDevice == peerDevice) {
    if (propName == UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT) {
      answer = 1;
    } else {
      ur_device_usm_access_capability_flags_t caps = 0;
      if (ur_result_t r =
              table().Device.pfnGetInfo(commandDevice, UR_DEVICE_INFO_USM_DEVICE_SUPPORT, sizeof caps, &caps, nullptr))
        return r;
      answer = (caps & UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS) ? 1 : 0;
    }
  }
  ordo::InfoWriter out(propSize, pPropValue, pPropSizeRet);
  return out.value(answer);
}

} // namespace

void install_peer_access(ur_dditable_t &t) {
  if (t.UsmP2PExp.pfnEnablePeerAccessExp || t.UsmP2PExp.pfnDisablePeerAccessExp ||
      t.UsmP2PExp.pfnPeerAccessGetInfoExp || !t.Device.pfnGetInfo)
    return;
  t.UsmP2PExp.pfnEnablePeerAccessExp = urUsmP2PEnablePeerAccessExp;
  t.UsmP2PExp.pfnDisablePeerAccessExp = urUsmP2PDisablePeerAccessExp;
  t.UsmP2PExp.pfnPeerAccessGetInfoExp = urUsmP2PPeerAccessGetInfoExp;
}

} // namespace ordo::derived
