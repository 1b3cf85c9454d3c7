// SPDX-License-Identifier: Apache-2.0
// The storage of retired handles, kept FIFO per adapter library (retired_handles.hpp).
#include "ordo/retired_handles.hpp"

#include <atomic>
#include <mutex>
#include <vector>

namespace ordo {
namespace {

struct kept_storage {
  void *storage = nullptr;
  size_t size = 0;
  size_t align = 0;
};

void free_storage(const kept_storage &k) {
  if (!k.storage) return;
  if (k.align > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
    ::operator delete(k.storage, k.size, std::align_val_t(k.align));
  else
    ::operator delete(k.storage, k.size);
}

// A ring of the newest kRetiredHandlesKept retirements.
struct quarantine {
  std::mutex mutex;
  std::vector<kept_storage> ring = std::vector<kept_storage>(kRetiredHandlesKept);
  size_t next = 0; // the slot the next retirement takes (its old content is the oldest)
};

// Never destroyed: a handle may be retired from another static object's destructor,
// after any destructor of ours would have run.
std::atomic<quarantine *> g_made{nullptr}; // made by the first retirement
quarantine &the_quarantine() {
  static quarantine *q = [] {
    auto *made = new quarantine();
    g_made.store(made, std::memory_order_release);
    return made;
  }();
  return *q;
}

// Frees what is kept when the library is unloaded or the process exits.
struct free_at_unload {
  ~free_at_unload() { free_retired_handles(); }
} free_at_unload_instance;

} // namespace

void *keep_retired_storage(void *storage, size_t size, size_t align, bool reuse) {
  quarantine &q = the_quarantine();
  kept_storage oldest;
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    oldest = q.ring[q.next];
    q.ring[q.next] = kept_storage{storage, size, align};
    q.next = (q.next + 1) % q.ring.size();
  }
  if (reuse && oldest.storage && oldest.size == size && oldest.align == align) return oldest.storage;
  free_storage(oldest);
  return nullptr;
}

void free_retired_handles() {
  quarantine *made = g_made.load(std::memory_order_acquire);
  if (!made) return; // nothing was ever retired: no ring to make now (at unload, say)
  quarantine &q = *made;
  std::vector<kept_storage> all(q.ring.size());
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    all.swap(q.ring);
    q.next = 0;
  }
  for (const kept_storage &k : all) free_storage(k);
}

} // namespace ordo
