// SPDX-License-Identifier: Apache-2.0
// Internal to the ordered pool: free (or pending) blocks by size class. Not part of
// the API. docs/ordered-pool.md ("Finding a block by size") says why it is not a tree.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ordo_pool/detail.hpp"

namespace ordo::pool::detail {

// Two-level segregated size classes over the block size in 64-byte granules g:
// g < 2^sub_bits has a class of its own; above that, each power of two is cut into
// 2^sub_bits equal classes. A block of class c is never smaller than any block of a
// class below c. Each class is an intrusive doubly-linked list through the block
// (bin_prev / bin_next), newest first; one bitmap per level finds the first
// non-empty class at or above a given one in O(1). Nothing here allocates.
class size_bins {
public:
  static constexpr unsigned sub_bits = 4;
  static constexpr unsigned subs = 1u << sub_bits;
  // 2^58 granules is all of the address space: levels 1..55 above the linear one.
  static constexpr unsigned levels = 64 - 6 - sub_bits + 2;
  static constexpr unsigned classes = levels * subs;
  static constexpr unsigned none = ~0u;
  static_assert(levels <= 64, "one bit per level");

  static unsigned class_of(std::size_t size) {
    const std::size_t g = size >> 6;
    if (g < subs) return static_cast<unsigned>(g);
    const unsigned top = 63u - static_cast<unsigned>(__builtin_clzll(g));
    const unsigned level = top - sub_bits + 1;
    const unsigned sub = static_cast<unsigned>(g >> (top - sub_bits)) & (subs - 1);
    return level * subs + sub;
  }
  // The smallest size of class c.
  static std::size_t class_floor(unsigned c) {
    const unsigned level = c / subs, sub = c % subs;
    if (level == 0) return static_cast<std::size_t>(sub) << 6;
    return (static_cast<std::size_t>(subs + sub) << (level - 1)) << 6;
  }
  // The first class all of whose blocks are at least `size` bytes.
  static unsigned class_at_least(std::size_t size) {
    const unsigned c = class_of(size);
    return class_floor(c) == size ? c : c + 1;
  }

  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }

  void insert(block *b) {
    const unsigned c = class_of(b->size);
    b->bin = static_cast<std::uint16_t>(c);
    b->bin_prev = nullptr;
    b->bin_next = head_[c];
    if (head_[c]) head_[c]->bin_prev = b;
    head_[c] = b;
    sub_map_[c / subs] |= 1u << (c % subs);
    level_map_ |= std::uint64_t{1} << (c / subs);
    ++count_;
  }

  void erase(block *b) {
    const unsigned c = b->bin;
    if (b->bin_prev)
      b->bin_prev->bin_next = b->bin_next;
    else
      head_[c] = b->bin_next;
    if (b->bin_next) b->bin_next->bin_prev = b->bin_prev;
    b->bin_prev = b->bin_next = nullptr;
    if (!head_[c]) {
      sub_map_[c / subs] &= ~(1u << (c % subs));
      if (!sub_map_[c / subs]) level_map_ &= ~(std::uint64_t{1} << (c / subs));
    }
    --count_;
  }

  void clear() {
    for (block *&h : head_) h = nullptr;
    for (auto &m : sub_map_) m = 0;
    level_map_ = 0;
    count_ = 0;
  }

  // The first non-empty class at or above c, or `none`.
  unsigned first_from(unsigned c) const {
    if (c >= classes) return none;
    unsigned level = c / subs;
    unsigned m = sub_map_[level] & (~0u << (c % subs));
    if (!m) {
      const std::uint64_t above = level + 1 < 64 ? level_map_ & (~std::uint64_t{0} << (level + 1)) : 0;
      if (!above) return none;
      level = static_cast<unsigned>(__builtin_ctzll(above));
      m = sub_map_[level];
    }
    return level * subs + static_cast<unsigned>(__builtin_ctz(m));
  }

  block *head(unsigned c) const { return head_[c]; }

  // Visits blocks of at least `need` bytes, class by class upwards (each class newest
  // first), looking at no more than `max_looks` blocks (smaller ones in need's own
  // class included). `f(block *)` returns true to stop; it may change the bins then,
  // and only then.
  template <class F> void visit(std::size_t need, std::size_t max_looks, F &&f) const {
    std::size_t looks = 0;
    for (unsigned c = first_from(class_of(need)); c != none; c = first_from(c + 1))
      for (block *b = head_[c]; b; b = b->bin_next) {
        if (looks++ == max_looks) return;
        if (b->size >= need && f(b)) return;
      }
  }

private:
  block *head_[classes] = {};
  std::uint32_t sub_map_[levels] = {};
  std::uint64_t level_map_ = 0;
  std::size_t count_ = 0;
};

} // namespace ordo::pool::detail
