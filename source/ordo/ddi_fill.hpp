// Helpers every adapter uses to build its dispatch table (docs/architecture.md,
// "Handle-first dispatch"; docs/adapter-guide.md, "The contract").
#pragma once
#include <cstddef>

#include "ur_ddi.h"

namespace ordo {

// Puts the generated "unsupported" stub into every slot that is still null, so no
// slot an adapter exposes is ever null.
void fill_unsupported(ur_dditable_t &ddi);

// How many slots hold something other than the unsupported stub (for logs and docs).
size_t count_supported(const ur_dditable_t &ddi);
size_t slot_count();

// The adapter's complete table; every handle it creates points at it. Defined once
// per adapter library (the generated getters copy tables out of it).
const ur_dditable_t &adapter_ddi();

// Same major version, and a caller no older than the header we were built with.
inline bool version_supported(ur_api_version_t v) {
  return UR_MAJOR_VERSION(v) == UR_MAJOR_VERSION(UR_API_VERSION_CURRENT) &&
         UR_MINOR_VERSION(v) >= UR_MINOR_VERSION(UR_API_VERSION_CURRENT);
}

} // namespace ordo
