// SPDX-License-Identifier: Apache-2.0
// Entry points written once over an adapter's own other entry points: each is installed
// only into a slot the adapter left empty, and only where what it is built from is
// there. Call after every other install and before ordo::fill_unsupported().
#pragma once
#include "ur_ddi.h"

namespace ordo::derived {
void install_entry_points(ur_dditable_t &t);
// urEnqueueTimestampRecordingExp from urEnqueueHostTaskExp and urDeviceGetGlobalTimestamps
// (timestamp.cpp); wraps urEventGetProfilingInfo, urEventGetInfo and urEventRelease to
// answer for its events. Call after urEnqueueHostTaskExp is installed; nothing happens
// where the adapter has its own or lacks what it is built from.
void install_timestamp_recording(ur_dditable_t &t);
// urUsmP2P*Exp for an adapter whose platforms have one device each: a device is its own
// only peer (peer_access.cpp). Nothing happens where the adapter has its own.
void install_peer_access(ur_dditable_t &t);
} // namespace ordo::derived
