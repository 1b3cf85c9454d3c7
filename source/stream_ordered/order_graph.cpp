// SPDX-License-Identifier: Apache-2.0
// Ordering knowledge shared by every adapter: which commands precede which, as far
// as queues, wait lists and barriers say. It decides reuse rule 1 beyond the cases
// the core sees itself (docs/async-alloc.md, "Reuse"). Bounded in memory and in
// search: a forgotten node or a cut-off search answers "not ordered", which only
// loses reuse.
#include "ordo_so/layer.hpp"

namespace ordo::stream_ordered {

namespace {
constexpr size_t kRing = 4096;      // nodes remembered per context
constexpr size_t kPreds = 6;        // predecessors kept per node
constexpr size_t kSinceBarrier = 8; // out-of-order commands a barrier records
constexpr size_t kVisits = 64;      // nodes one question may visit
} // namespace

struct order_graph::node {
  uint64_t id = 0;
  uint8_t count = 0;
  uint64_t preds[kPreds] = {};
  void add(uint64_t p) {
    if (!p || p >= id) return;
    for (uint8_t i = 0; i < count; ++i)
      if (preds[i] == p) return;
    if (count < kPreds) preds[count++] = p;
  }
};

order_graph::order_graph() : ring_(kRing) {}
order_graph::~order_graph() = default;

const order_graph::node *order_graph::find(uint64_t id) const {
  const node &n = ring_[id % kRing];
  return n.id == id ? &n : nullptr;
}

namespace {
// Node ids are unique in the process, not per context, so that a node of another
// context (an event from elsewhere in a wait list) can never be taken for one of ours.
std::atomic<uint64_t> g_next_node{1};
} // namespace

uint64_t order_graph::record(const void *queue, bool in_order, bool barrier, const uint64_t *waits, size_t n,
                             bool has_wait_list) {
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  const uint64_t id = g_next_node.fetch_add(1, std::memory_order_relaxed);
  node &nd = ring_[id % kRing];
  nd = node{};
  nd.id = id;
  queue_state *qs = nullptr;
  if (queue && queue == last_queue_) {
    qs = last_state_;
  } else if (queue) {
    try {
      qs = &queues_[queue];
      last_queue_ = queue;
      last_state_ = qs;
    } catch (...) {
      qs = nullptr; // no memory: this command's queue order is simply not known
    }
  }
  if (qs) {
    nd.add(in_order ? qs->last : qs->last_barrier);
    // A barrier with a wait list follows only that list (and the previous barrier);
    // without one it follows every earlier command of the queue.
    if (barrier && !in_order && !has_wait_list)
      for (uint64_t s : qs->since_barrier) nd.add(s);
  }
  for (size_t i = 0; i < n; ++i) nd.add(waits[i]);
  if (qs) {
    qs->last = id;
    if (barrier) {
      // A barrier that missed some earlier commands is no barrier for them.
      qs->last_barrier = qs->since_overflow || nd.count == kPreds ? 0 : id;
      qs->since_barrier.clear();
      qs->since_overflow = false;
    } else if (!in_order) {
      if (qs->since_barrier.size() < kSinceBarrier) {
        try {
          qs->since_barrier.push_back(id);
        } catch (...) {
          qs->since_overflow = true;
        }
      } else {
        qs->since_overflow = true;
      }
    }
  }
  return id;
}

bool order_graph::ordered_after(uint64_t target, const void *queue, bool in_order, const uint64_t *waits,
                                size_t n) const {
  if (!target) return false;
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  uint64_t stack[kVisits];
  size_t top = 0, visits = 0;
  auto push = [&](uint64_t id) {
    if (id == target) return true;
    if (id > target && top < kVisits) stack[top++] = id; // earlier nodes cannot lead to it
    return false;
  };
  if (queue) {
    auto it = queues_.find(queue);
    if (it != queues_.end() && push(in_order ? it->second.last : it->second.last_barrier)) return true;
  }
  for (size_t i = 0; i < n; ++i)
    if (push(waits[i])) return true;
  while (top && visits++ < kVisits) {
    const node *nd = find(stack[--top]);
    if (!nd) continue; // forgotten: cannot tell
    for (uint8_t i = 0; i < nd->count; ++i)
      if (push(nd->preds[i])) return true;
  }
  return false;
}

void order_graph::forget_queue(const void *queue) {
  std::lock_guard<ordo::pool::adaptive_mutex> lock(mu_);
  if (queue == last_queue_) last_queue_ = nullptr;
  queues_.erase(queue);
}

} // namespace ordo::stream_ordered
