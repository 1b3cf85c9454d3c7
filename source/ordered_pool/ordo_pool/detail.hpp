// SPDX-License-Identifier: Apache-2.0
// Internal bookkeeping types of the ordered pool core. Not part of the API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "ordo_pool/backend.hpp"
#include "ordo_pool/bookkeeping_memory.hpp"

namespace ordo::pool::detail {

// `quick`: freed with no pending use and kept whole, outside every index but the
// address one, for the next alloc of exactly its size (see ordered_pool::impl).
enum class block_state : std::uint8_t { free, pending, live, quick };

struct chunk;

// One earlier owner's release that a live block took over (reuse rules 1 and 3):
// the bytes [addr, addr + size) of the block were pending on `event`.
struct inherited_release {
  std::uintptr_t addr = 0;
  std::size_t size = 0;
  event_handle event = nullptr;
  queue_id queue = nullptr;
  bool in_order = false;
};

// The largest block (and chunk) the pool keeps: a block's size has 44 bits (below).
// No device or host has 16 TiB in one allocation; a larger request is out of memory.
inline constexpr std::size_t max_block_bytes = (std::size_t{1} << 44) - 64;

// A run of bytes inside one chunk. The blocks of a chunk tile it exactly and
// are linked in address order, so neighbours are found in O(1).
// A pool of ~10^5 blocks misses the cache on nearly every block it touches, so a
// block is one cache line, aligned, with every field that a free, a merge, a split and
// a size class walk read; at two lines its objects alone outgrew the cache a large pool
// can keep (docs/ordered-pool.md, "Bookkeeping memory"). The size shares its word with
// the small fields; a live block's requested size is its size less `slack`.
struct alignas(64) block {
  block() : size(0), bin(0), slack(0), state(block_state::free), in_order(false), has_runs(false) {}

  std::uintptr_t addr = 0;
  std::uint64_t size : 44;
  std::uint64_t bin : 10;  // free / pending: the size class it is listed in (size_bins)
  std::uint64_t slack : 6; // live: size - the size the caller asked for (< 64)
  block_state state : 2;
  bool in_order : 1;
  bool has_runs : 1; // the block holds runs_ in place of queue (read it only then)
  block *prev = nullptr;
  block *next = nullptr;     // also links spare block objects
  block *bin_prev = nullptr; // free / pending: the neighbours in its class's list
  block *bin_next = nullptr;
  // Release information. Pending: the block's own release. Live: the release it
  // took over from the previous owner (one event for the whole block), kept so
  // that a synchronous free or an undone alloc leaves the block pending on it.
  event_handle event = nullptr;
  union {
    queue_id queue = nullptr; // pending (or taken over): the queue of the release
    // Live blocks carved from several pending blocks at once (rule 3 runs): one entry
    // per piece, in address order; `event` is then null. Rare: heap-held.
    std::vector<inherited_release> *runs_;
  };

  std::uintptr_t end() const { return addr + size; }
  void set_runs(std::vector<inherited_release> *r) {
    has_runs = r != nullptr;
    if (r)
      runs_ = r;
    else
      queue = nullptr;
  }
  std::size_t requested() const { return size - slack; }
  void set_requested(std::size_t r) { slack = size - r; } // r in (size - 64, size]
};
static_assert(sizeof(block) == 64, "a block is one cache line");

struct chunk {
  void *raw = nullptr; // as the backend (or the user) gave it
  std::size_t raw_size = 0;
  bool user_memory = false;
  block *first = nullptr; // the lowest block; never recycled while the chunk lives

  bool wholly_free() const { return first && !first->next && first->state == block_state::free; }
};

// A free list of equally sized raw nodes for the pool's std::sets, so that
// inserting after an erase does not touch the heap. It adopts the size of the
// first request; other sizes go straight to the heap.
class node_recycler {
public:
  node_recycler() = default;
  node_recycler(const node_recycler &) = delete;
  node_recycler &operator=(const node_recycler &) = delete;
  ~node_recycler() {
    while (head_) {
      link *n = head_->next;
      ::operator delete(static_cast<void *>(head_));
      head_ = n;
    }
  }

  void *get(std::size_t bytes) {
    if (node_bytes_ == 0 && bytes >= sizeof(link)) node_bytes_ = bytes;
    if (bytes == node_bytes_ && head_) {
      link *l = head_;
      head_ = l->next;
      --stock_;
      l->~link();
      return l;
    }
    return ::operator new(bytes);
  }

  void put(void *p, std::size_t bytes) noexcept {
    if (bytes != node_bytes_) {
      ::operator delete(p);
      return;
    }
    head_ = new (p) link{head_};
    ++stock_;
  }

  // Make sure `n` nodes are on hand (after the node size is known), so the
  // next operations cannot fail half-way. May throw std::bad_alloc.
  void reserve(std::size_t n) {
    while (node_bytes_ != 0 && stock_ < n) put(::operator new(node_bytes_), node_bytes_);
  }

private:
  struct link {
    link *next;
  };
  link *head_ = nullptr;
  std::size_t node_bytes_ = 0;
  std::size_t stock_ = 0;
};

template <class T> struct recycling_allocator {
  using value_type = T;
  node_recycler *rec;

  explicit recycling_allocator(node_recycler *r) noexcept : rec(r) {}
  template <class U> recycling_allocator(const recycling_allocator<U> &o) noexcept : rec(o.rec) {}

  T *allocate(std::size_t n) {
    if (n == 1) return static_cast<T *>(rec->get(sizeof(T)));
    return static_cast<T *>(::operator new(n * sizeof(T)));
  }
  void deallocate(T *p, std::size_t n) noexcept {
    if (n == 1)
      rec->put(p, sizeof(T));
    else
      ::operator delete(p);
  }
  template <class U> bool operator==(const recycling_allocator<U> &o) const noexcept { return rec == o.rec; }
  template <class U> bool operator!=(const recycling_allocator<U> &o) const noexcept { return rec != o.rec; }
};

inline std::uintptr_t as_uint(const void *p) { return reinterpret_cast<std::uintptr_t>(p); }

// Live blocks by their start address: open addressing with linear probing, so a free
// finds its block in O(1) whatever the number of blocks (a tree walk there costs a
// cache miss per level once the pool holds many blocks). Only grow() allocates; the
// pool calls it before an alloc that could need the room.
class live_table {
public:
  live_table() = default;
  live_table(const live_table &) = delete;
  live_table &operator=(const live_table &) = delete;
  ~live_table() { bookkeeping_free(slots_, size_ * sizeof(slot)); }

  bool has_room() const { return (count_ + 1) * 2 <= size_; }
  void grow() { // may throw std::bad_alloc; nothing changes then
    const std::size_t n = size_ == 0 ? 64 : size_ * 2;
    const unsigned shift = 64u - static_cast<unsigned>(__builtin_ctzll(n));
    // Large tables go on huge pages (bookkeeping_memory.hpp): every probe is a random
    // touch of the table.
    auto *bigger = static_cast<slot *>(bookkeeping_alloc(n * sizeof(slot)));
    for (std::size_t i = 0; i < size_; ++i)
      if (slots_[i].b) bigger[probe_free(bigger, n - 1, shift, slots_[i].addr)] = slots_[i];
    bookkeeping_free(slots_, size_ * sizeof(slot));
    slots_ = bigger;
    size_ = n;
    shift_ = shift;
  }
  // A new entry reaches its slot one insert later: the slot is a random touch of a
  // large table (a cache miss at the end of every alloc), so it is only prefetched now,
  // and written when the next entry comes in, by when the line has arrived.
  void insert(block *b) { // has_room() must hold
    settle();
    __builtin_prefetch(&slots_[home(b->addr, shift_)], 1);
    staged_ = slot{b->addr, b};
    ++count_;
  }
  template <class F> void for_each(F &&f) const {
    if (staged_.b) f(staged_.b);
    for (std::size_t i = 0; i < size_; ++i)
      if (slots_[i].b) f(slots_[i].b);
  }
  block *find(std::uintptr_t addr) const {
    if (staged_.b && staged_.addr == addr) return staged_.b;
    if (size_ == 0) return nullptr;
    const std::size_t mask = size_ - 1;
    for (std::size_t i = home(addr, shift_);; i = (i + 1) & mask)
      if (!slots_[i].b || slots_[i].addr == addr) return slots_[i].b;
  }
  void erase(std::uintptr_t addr) {
    if (staged_.b && staged_.addr == addr) {
      staged_ = slot{};
      --count_;
      return;
    }
    if (size_ == 0) return;
    const std::size_t mask = size_ - 1;
    std::size_t i = home(addr, shift_);
    while (slots_[i].b && slots_[i].addr != addr) i = (i + 1) & mask;
    if (!slots_[i].b) return;
    --count_;
    // Backward shift: later entries of the run move into the hole unless their home
    // lies cyclically in (hole, their slot].
    for (std::size_t j = i;;) {
      j = (j + 1) & mask;
      if (!slots_[j].b) break;
      const std::size_t h = home(slots_[j].addr, shift_);
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = slot{};
  }

private:
  struct slot {
    std::uintptr_t addr = 0; // the key beside the block: a probe reads no block
    block *b = nullptr;      // null: empty
  };
  void settle() {
    if (!staged_.b) return;
    slots_[probe_free(slots_, size_ - 1, shift_, staged_.addr)] = staged_;
    staged_ = slot{};
  }
  static std::size_t home(std::uintptr_t addr, unsigned shift) {
    return static_cast<std::size_t>(((addr >> 6) * 0x9E3779B97F4A7C15ull) >> shift);
  }
  static std::size_t probe_free(const slot *t, std::size_t mask, unsigned shift, std::uintptr_t addr) {
    std::size_t i = home(addr, shift);
    while (t[i].b) i = (i + 1) & mask;
    return i;
  }
  slot *slots_ = nullptr; // zero-filled: every slot empty
  std::size_t size_ = 0;  // a power of two, or 0
  std::size_t count_ = 0;
  unsigned shift_ = 58; // 64 - log2(size_)
  slot staged_;         // the newest entry, not yet in its slot (insert()); counted
};

// Orderings of the indexes. Each is total (the address breaks ties), so a
// block is found again by its current key.
struct by_addr {
  using type = std::uintptr_t;
  static type of(const block *b) { return b->addr; }
};
struct by_queue {
  using type = std::tuple<std::uintptr_t, std::size_t, std::uintptr_t>;
  static type of(const block *b) { return type{as_uint(b->queue), b->size, b->addr}; }
};
struct by_event {
  using type = std::pair<std::uintptr_t, std::uintptr_t>;
  static type of(const block *b) { return {as_uint(b->event), b->addr}; }
};

template <class K> struct key_less {
  using is_transparent = void;
  using key = typename K::type;
  bool operator()(const block *a, const block *b) const { return K::of(a) < K::of(b); }
  bool operator()(const block *a, const key &b) const { return K::of(a) < b; }
  bool operator()(const key &a, const block *b) const { return a < K::of(b); }
};

template <class K> using block_set = std::set<block *, key_less<K>, recycling_allocator<block *>>;

} // namespace ordo::pool::detail
