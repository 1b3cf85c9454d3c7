// The answer to a device-info query an adapter does not answer (docs/adapter-guide.md,
// "Shared rules"): an adapter's urDeviceGetInfo switch ends in
//   default: return ordo::device_info_default(propName);
// so a query the spec has and the adapter does not know is UNSUPPORTED_ENUMERATION,
// and a value that is no ur_device_info_t at all INVALID_ENUMERATION, in every adapter
// and for every value a newer spec adds.
#pragma once
#include "ur_api.h"

namespace ordo {

// Whether value is one of the spec's ur_device_info_t values (generated from
// scripts/spec/ur.json: source/generated/device_info.gen.cpp).
bool is_device_info(ur_device_info_t value);

inline ur_result_t device_info_default(ur_device_info_t value) {
  return is_device_info(value) ? UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION : UR_RESULT_ERROR_INVALID_ENUMERATION;
}

} // namespace ordo
