// SPDX-License-Identifier: Apache-2.0
// The answer to a device-info query an adapter does not answer (docs/adapter-guide.md,
// "Shared rules"): an adapter's urDeviceGetInfo switch ends in
//   default: return ordo::device_info_default(propName, out);
// so a feature query (a ur_bool_t) the adapter does not list is "false": the feature
// is not there (and the limits of bindless images, which no adapter has, are zero);
// any other query the spec has is UNSUPPORTED_ENUMERATION, and a value
// that is no ur_device_info_t at all INVALID_ENUMERATION, in every adapter and for
// every value a newer spec adds.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ordo/info.hpp"
#include "ur_api.h"

namespace ordo {

// Whether value is one of the spec's ur_device_info_t values (generated from
// scripts/spec/ur.json: source/generated/device_info.gen.cpp).
bool is_device_info(ur_device_info_t value);
// Whether it is one whose answer is a ur_bool_t (a feature query).
bool is_device_info_bool(ur_device_info_t value);

inline ur_result_t device_info_default(ur_device_info_t value) {
  return is_device_info(value) ? UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION : UR_RESULT_ERROR_INVALID_ENUMERATION;
}

inline ur_result_t device_info_default(ur_device_info_t value, InfoWriter &out) {
  if (is_device_info_bool(value)) return out.boolean(false);
  switch (value) {
  // The bindless-image limits of a device without bindless images (no adapter of
  // Ordo's has urBindlessImages*, so BINDLESS_IMAGES_SUPPORT_EXP is false): zero.
  case UR_DEVICE_INFO_IMAGE_PITCH_ALIGN_EXP:
  case UR_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY_EXP:
  case UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP: return out.value(uint32_t{0});
  case UR_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH_EXP:
  case UR_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT_EXP:
  case UR_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH_EXP: return out.value(size_t{0});
  default: return device_info_default(value);
  }
}

} // namespace ordo
