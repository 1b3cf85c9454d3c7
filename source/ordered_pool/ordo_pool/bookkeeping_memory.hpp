// SPDX-License-Identifier: Apache-2.0
// Internal to the ordered pool: memory for its own bookkeeping (block objects, the
// live table), laid out so that a pool of ~10^5 blocks stays cheap to walk.
// Not part of the API.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace ordo::pool::detail {

// Regions of at least this size come from mmap on 2 MiB boundaries with transparent
// huge pages asked for: a pool of ~10^5 blocks touches its bookkeeping at random,
// and with 4 KiB pages nearly every such touch also missed the TLB (a nested page
// walk under a hypervisor). Smaller regions come from the heap, so a small pool
// costs no more than before.
inline constexpr std::size_t huge_region = std::size_t(2) << 20;

// Zero-filled memory of `bytes`, 64-byte aligned; throws std::bad_alloc.
inline void *bookkeeping_alloc(std::size_t bytes) {
  if (bytes < huge_region) {
    void *p = ::operator new (bytes, std::align_val_t{64});
    std::memset(p, 0, bytes);
    return p;
  }
  const std::size_t size = (bytes + huge_region - 1) & ~(huge_region - 1);
  void *raw = mmap(nullptr, size + huge_region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // Keep the 2 MiB-aligned part only, so that every page of it can be a huge page.
  const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (lo + huge_region - 1) & ~static_cast<std::uintptr_t>(huge_region - 1);
  if (start > lo) munmap(raw, start - lo);
  if (const std::size_t tail = lo + size + huge_region - (start + size))
    munmap(reinterpret_cast<void *>(start + size), tail);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void *>(start), size, MADV_HUGEPAGE); // a hint: 4 KiB pages work too
#endif
  return reinterpret_cast<void *>(start);
}

inline void bookkeeping_free(void *p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes < huge_region) {
    ::operator delete (p, std::align_val_t{64});
    return;
  }
  munmap(p, (bytes + huge_region - 1) & ~(huge_region - 1));
}

// Storage for objects of type T that are never given back one by one: slabs that
// double in size up to 2 MiB, so that objects made one after the other lie side by
// side (a block's neighbours are often its neighbours here too) and a large pool's
// objects sit in a few huge pages. Everything goes back when the slabs do.
template <class T> class object_slabs {
public:
  object_slabs() = default;
  object_slabs(const object_slabs &) = delete;
  object_slabs &operator=(const object_slabs &) = delete;
  ~object_slabs() {
    while (slabs_) {
      slab_header *next = slabs_->next;
      bookkeeping_free(slabs_, slabs_->bytes);
      slabs_ = next;
    }
  }

  // Raw storage for one T; throws std::bad_alloc.
  void *get() {
    if (used_ == capacity_) add_slab();
    return first_ + used_++;
  }

private:
  struct slab_header {
    slab_header *next;
    std::size_t bytes;
  };
  static constexpr std::size_t header_bytes = (sizeof(slab_header) + alignof(T) - 1) / alignof(T) * alignof(T);

  void add_slab() {
    const std::size_t bytes = next_bytes_;
    void *mem = bookkeeping_alloc(bytes);
    auto *h = new (mem) slab_header{slabs_, bytes};
    slabs_ = h;
    first_ = reinterpret_cast<T *>(static_cast<char *>(mem) + header_bytes);
    capacity_ = (bytes - header_bytes) / sizeof(T);
    used_ = 0;
    if (next_bytes_ < huge_region) next_bytes_ *= 2;
  }

  slab_header *slabs_ = nullptr;
  T *first_ = nullptr;
  std::size_t used_ = 0, capacity_ = 0;
  std::size_t next_bytes_ = 4096;
};

} // namespace ordo::pool::detail
