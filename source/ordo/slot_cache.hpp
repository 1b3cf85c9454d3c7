// SPDX-License-Identifier: Apache-2.0
// A few lock-free slots holding pointers to things kept for reuse (the storage of a
// queue's next events, a device's spare driver events): one atomic exchange to take or
// give back, where a mutex-guarded list costs two and a lock's bookkeeping. Full means
// the caller frees or lists the thing itself.
#pragma once
#include <atomic>
#include <cstddef>

namespace ordo {

template <class T, size_t N> class slot_cache {
public:
  // A kept pointer, or null when every slot is empty.
  T *take() {
    for (auto &s : slots_)
      if (s.load(std::memory_order_relaxed))
        if (T *p = s.exchange(nullptr, std::memory_order_acquire)) return p;
    return nullptr;
  }
  // False when every slot is taken: `p` stays the caller's.
  bool put(T *p) {
    for (auto &s : slots_) {
      T *empty = nullptr;
      if (!s.load(std::memory_order_relaxed) &&
          s.compare_exchange_strong(empty, p, std::memory_order_release, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  // For the owner's destructor: each kept pointer, once, slots emptied.
  template <class F> void drain(F &&each) {
    for (auto &s : slots_)
      if (T *p = s.exchange(nullptr, std::memory_order_acquire)) each(p);
  }

private:
  std::atomic<T *> slots_[N] = {};
};

} // namespace ordo
