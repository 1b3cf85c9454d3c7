// Entry points written once over an adapter's own other entry points: each is installed
// only into a slot the adapter left empty, and only where what it is built from is
// there. Call after every other install and before ordo::fill_unsupported().
#pragma once
#include "ur_ddi.h"

namespace ordo::derived {
void install_entry_points(ur_dditable_t &t);
} // namespace ordo::derived
