// SPDX-License-Identifier: Apache-2.0
// Events that are signalled again and again (docs/command-buffers.md, "Events that are
// signalled again"): an event handle of this library that stands for the newest real
// event of the adapter bound to it. Reusable events (urEventCreateExp, signalled by
// urEnqueueEventsWaitWithBarrierExt) and the signal events of command-buffer commands
// (bound at every run) are such events. Graph capture's wrappers (graph_capture.cpp)
// answer the event entry points for them and replace them in wait lists by what they
// stand for; a bound event never signalled stands for nothing and is left out.
#pragma once
#include <cstdint>
#include <vector>

#include "ur_api.h"

namespace ordo::command_buffer {

// One more or one less live bound event or capture (graph_capture.cpp): while there is
// none, every wrapper passes straight through.
void note_activity(int delta);

// A new bound event with one reference. `reusable`: urEnqueueEventsWaitWithBarrierExt
// may signal it. OUT_OF_HOST_MEMORY on failure.
ur_result_t make_bound(ur_context_handle_t ctx, ur_command_t type, bool reusable, ur_event_handle_t *out);
// Binds `real` (taking a reference to it) to `bound`, letting the previous one go.
void bind(ur_event_handle_t bound, ur_event_handle_t real);
bool is_reusable(ur_event_handle_t e);

// A wait list with every bound event replaced by what it stands for now.
class SubstitutedWaits {
public:
  SubstitutedWaits(uint32_t n, const ur_event_handle_t *w);
  ~SubstitutedWaits();
  SubstitutedWaits(const SubstitutedWaits &) = delete;
  SubstitutedWaits &operator=(const SubstitutedWaits &) = delete;
  uint32_t n = 0;
  const ur_event_handle_t *w = nullptr;

private:
  std::vector<ur_event_handle_t> list_, held_;
};

// The event entry points for bound events: each returns false when `e` is not one
// (then the caller passes it on), otherwise sets `r`.
bool bound_retain(ur_event_handle_t e, ur_result_t &r);
bool bound_release(ur_event_handle_t e, ur_result_t &r);
bool bound_get_info(ur_event_handle_t e, ur_event_info_t prop, size_t size, void *value, size_t *sizeRet,
                    ur_result_t &r);
bool bound_profiling_info(ur_event_handle_t e, ur_profiling_info_t prop, size_t size, void *value, size_t *sizeRet,
                          ur_result_t &r);
bool bound_set_callback(ur_event_handle_t e, ur_execution_info_t status, ur_event_callback_t fn, void *data,
                        ur_result_t &r);
bool bound_native_handle(ur_event_handle_t e, ur_native_handle_t *out, ur_result_t &r);

// urEventCreateExp.
ur_result_t UR_APICALL urEventCreateExp(ur_context_handle_t hContext, ur_device_handle_t hDevice,
                                        const ur_exp_event_desc_t *pEventDesc, ur_event_handle_t *phEvent);

} // namespace ordo::command_buffer
