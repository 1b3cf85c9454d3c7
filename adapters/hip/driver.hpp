// SPDX-License-Identifier: Apache-2.0
// The HIP runtime, loaded at run time.
//
// The adapter never links libamdhip64: it opens libamdhip64.so.5 (then
// libamdhip64.so; ORDO_HIP_LIBRARY names another, e.g. the test mapping onto CUDA in
// test/hip_on_cuda), resolves every function of hip_api.hpp with dlsym and calls
// hipInit. Where that fails, or the runtime reports no device, the adapter reports
// no platform and says why in one log line (docs/hip.md).
#pragma once
#include <string>

#include "driver_api.hpp"
#include "hip_api.hpp"
#include "ordo/dynlib.hpp"

namespace ordo::hip {

struct Driver {
#define ORDO_HIP_DECLARE(name, ret, params) ret(*name) params = nullptr;
  ORDO_HIP_FUNCTIONS(ORDO_HIP_DECLARE)
#undef ORDO_HIP_DECLARE

  int runtime_version = 0; // e.g. 50231153 (HIP 5.2) or the CUDA version under the test mapping
  std::string library;     // the file that was opened

  // False with why() set when the runtime cannot be used.
  bool load();
  const std::string &why() const { return why_; }
  bool not_installed = false; // after a failed load(): no libamdhip64, or no AMD GPU

private:
  DynLib lib_;
  std::string why_;
};

// The process-wide table; valid only after a successful load.
Driver &drv();

// "hipErrorOutOfMemory (2)": for logs.
std::string error_text(hipError_t r);

// A runtime result in the stream backend's terms (source/stream_backend/driver_api.hpp).
ordo::stream_backend::status status_of(hipError_t r);

} // namespace ordo::hip
