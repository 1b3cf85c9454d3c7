// SPDX-License-Identifier: Apache-2.0
// Lifetimes of recorded command buffers and their commands, and the replay of a launch.
#include "records.hpp"

#include <unordered_map>
#include <unordered_set>

namespace ordo::command_buffer {

namespace {

// Live command buffers, and each live command's buffer. A handle is looked up here
// before it is touched, so an unknown or released one is refused, never dereferenced.
struct Registry {
  std::mutex mu;
  std::unordered_set<const void *> buffers;
  std::unordered_map<const void *, CommandBuffer *> commands;
};
Registry &registry() {
  static Registry *r = new Registry; // never destroyed: handles may be released at exit
  return *r;
}

} // namespace

LaunchRecord::~LaunchRecord() {
  for (ur_kernel_handle_t k : alternatives) table().Kernel.pfnRelease(k);
  for (const ArgRecord &a : args)
    if (a.mem) table().Mem.pfnRelease(a.mem);
}

ur_result_t LaunchRecord::enqueue(ur_queue_handle_t q, uint32_t n, const ur_event_handle_t *waits,
                                  ur_event_handle_t *out) const {
  std::vector<ur_exp_kernel_arg_properties_t> props(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgRecord &a = args[i];
    ur_exp_kernel_arg_properties_t &p = props[i];
    p.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
    p.pNext = nullptr;
    p.type = a.type;
    p.index = a.index;
    p.size = a.size;
    switch (a.type) {
    case UR_EXP_KERNEL_ARG_TYPE_VALUE: p.value.value = a.bytes.data(); break;
    case UR_EXP_KERNEL_ARG_TYPE_POINTER: p.value.pointer = a.pointer; break;
    case UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ: p.value.memObjTuple = {a.mem, a.mem_flags}; break;
    default: p.value.value = nullptr; break; // LOCAL: only the size
    }
  }
  return table().EnqueueExp.pfnKernelLaunchWithArgsExp(q, kernel, dims, has_offset ? offset : nullptr, global,
                                                       has_local ? local : nullptr, static_cast<uint32_t>(props.size()),
                                                       props.empty() ? nullptr : props.data(), nullptr, n, waits, out);
}

Command::~Command() {
  for (ur_mem_handle_t m : held) table().Mem.pfnRelease(m);
  for (ur_event_handle_t e : waits) table().Event.pfnRelease(e);
  if (signal) table().Event.pfnRelease(signal);
}

CommandBuffer::CommandBuffer(ur_context_handle_t c, ur_device_handle_t d, const ur_exp_command_buffer_desc_t &de)
    : object(handle_kind::command_buffer), context(c), device(d), desc(de) {
  desc.pNext = nullptr; // the caller's chain is not ours to keep
  table().Context.pfnRetain(context);
}

CommandBuffer::~CommandBuffer() {
  commands.clear();
  if (last_run) unwrapped().Event.pfnRelease(last_run);
  table().Context.pfnRelease(context);
}

void register_buffer(CommandBuffer *cb) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.buffers.insert(cb);
}

void register_command(Command *c) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.commands.emplace(c, c->owner);
}

void unregister_command(Command *c) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.commands.erase(c);
}

bool unregister_buffer(CommandBuffer *cb) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.buffers.erase(cb)) return false;
  for (auto &c : cb->commands) r.commands.erase(c.get());
  return true;
}

void drop(CommandBuffer *cb) {
  if (cb->alive.fetch_sub(1, std::memory_order_acq_rel) == 1) delete cb;
}

Hold::Hold(ur_exp_command_buffer_handle_t h) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!h || !r.buffers.count(h)) return;
  cb_ = reinterpret_cast<CommandBuffer *>(h);
  cb_->alive.fetch_add(1, std::memory_order_relaxed);
}

Hold::Hold(ur_exp_command_buffer_command_handle_t h, Command **cmd) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = h ? r.commands.find(h) : r.commands.end();
  if (it == r.commands.end()) return;
  cb_ = it->second;
  *cmd = reinterpret_cast<Command *>(h);
  cb_->alive.fetch_add(1, std::memory_order_relaxed);
}

Hold::~Hold() {
  if (cb_) drop(cb_);
}

} // namespace ordo::command_buffer
