// SPDX-License-Identifier: Apache-2.0
// The recorded form of a command buffer (docs/command-buffers.md): each appended command
// keeps copies of its arguments and holds the handles it uses, so the buffer can be
// enqueued again and again through the adapter's own enqueue entry points.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "ordo/ddi_fill.hpp"
#include "ordo/object.hpp"
#include "ordo/handle.hpp"
#include "ur_api.h"

namespace ordo::command_buffer {

// The adapter's own table: every recorded command is replayed through it.
inline const ur_dditable_t &table() { return ordo::adapter_ddi(); }
// The same without graph capture's wrappers (graph_capture.cpp): for the adapter's own
// events, where a wrapper's lock may be held already (a recording destroyed under it).
const ur_dditable_t &unwrapped();

// An argument of a recorded launch, its value copied at append (or update) time.
struct ArgRecord {
  ur_exp_kernel_arg_type_t type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  uint32_t index = 0;
  size_t size = 0;
  std::vector<unsigned char> bytes; // VALUE
  const void *pointer = nullptr;    // POINTER
  ur_mem_handle_t mem = nullptr;    // MEM_OBJ, retained (may be null)
  ur_mem_flags_t mem_flags = 0;
};

struct LaunchRecord {
  ur_kernel_handle_t kernel = nullptr;          // retained
  std::vector<ur_kernel_handle_t> alternatives; // retained; kernel is one of these or the first
  uint32_t dims = 1;
  size_t offset[3] = {0, 0, 0};
  size_t global[3] = {1, 1, 1};
  size_t local[3] = {1, 1, 1};
  bool has_offset = false;
  bool has_local = false;
  std::vector<ArgRecord> args; // one per argument index, in the order first set

  ~LaunchRecord();
  ur_result_t enqueue(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *out) const;
};

// Replays one non-launch command on a queue after the given events.
using Replay = std::function<ur_result_t(ur_queue_handle_t, uint32_t, const ur_event_handle_t *, ur_event_handle_t *)>;

struct CommandBuffer;

// One appended command; a pointer to it is its ur_exp_command_buffer_command_handle_t.
struct Command : ordo::object {
  Command() : object(handle_kind::command_buffer_command) {}
  ~Command();
  CommandBuffer *owner = nullptr;
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
  std::vector<uint32_t> after;          // sync points this command follows
  std::unique_ptr<LaunchRecord> launch; // kernel launches
  Replay replay;                        // every other command
  std::vector<ur_mem_handle_t> held;    // buffers the command uses, retained
  std::vector<ur_event_handle_t> waits; // events every run of it waits for, retained
  ur_event_handle_t signal = nullptr;   // its bound event (bound_events.hpp), one reference
};
ORDO_HANDLE_CHECK(Command);

struct CommandBuffer : ordo::object {
  CommandBuffer(ur_context_handle_t c, ur_device_handle_t d, const ur_exp_command_buffer_desc_t &de);
  ~CommandBuffer();
  const ur_context_handle_t context; // retained
  const ur_device_handle_t device;
  ur_exp_command_buffer_desc_t desc;
  // One user handle (ref_count) plus each call in progress keeps the object alive.
  std::atomic<uint32_t> alive{1};

  std::mutex mu; // appends, finalize, updates and enqueues
  bool finalized = false;
  std::vector<std::unique_ptr<Command>> commands; // index = sync point
  ur_event_handle_t last_run = nullptr;           // the previous enqueue's event (held)
};
ORDO_HANDLE_CHECK(CommandBuffer);

// ---- for graph capture (graph_capture.cpp) ----
// Appends a command that `replay` runs, after the given sync points.
ur_result_t append_replay(ur_exp_command_buffer_handle_t h, ur_command_t type,
                          const std::vector<ur_exp_command_buffer_sync_point_t> &after, Replay replay,
                          ur_exp_command_buffer_sync_point_t *point);
// Takes back the newest command when it is the one at `point` (a wait graph capture
// recorded for a command that was then refused).
void take_back(ur_exp_command_buffer_handle_t h, ur_exp_command_buffer_sync_point_t point);
// Each command's type and the sync points it follows, in append order.
struct CommandShape {
  ur_command_t type;
  std::vector<uint32_t> after;
};
std::vector<CommandShape> shape_of(ur_exp_command_buffer_handle_t h);

// ---- the live handles of this library ----
// A command buffer kept alive for the duration of one call; empty for an unknown handle.
class Hold {
public:
  explicit Hold(ur_exp_command_buffer_handle_t h);
  explicit Hold(ur_exp_command_buffer_command_handle_t h, Command **cmd);
  Hold(const Hold &) = delete;
  Hold &operator=(const Hold &) = delete;
  ~Hold();
  CommandBuffer *get() const { return cb_; }
  CommandBuffer *operator->() const { return cb_; }
  explicit operator bool() const { return cb_ != nullptr; }

private:
  CommandBuffer *cb_ = nullptr;
};
void register_buffer(CommandBuffer *cb);
void register_command(Command *c);
void unregister_command(Command *c);
// The user's last release: unknown handles answer false.
bool unregister_buffer(CommandBuffer *cb);
void drop(CommandBuffer *cb); // one `alive` reference less

} // namespace ordo::command_buffer
