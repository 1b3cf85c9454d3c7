// SPDX-License-Identifier: Apache-2.0
// A simulated backend for the ordered pool unit tests: chunks come from the
// C heap, events are plain objects with a completion flag, and a "command"
// is a list that collects the internal dependencies the pool adds.
#pragma once

#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "ordo_pool/ordered_pool.hpp"

namespace ordo::pool::test {

struct sim_event {
  bool complete = false;
  int pool_refs = 0; // references the pool holds
};

struct sim_command {
  std::vector<event_handle> deps; // internal dependencies added by the pool
};

class sim_backend : public backend {
public:
  ~sim_backend() override {
    EXPECT_TRUE(chunks_.empty()) << "chunks still out at backend destruction";
    for (auto &kv : chunks_) std::free(kv.first);
  }

  sim_event *make_event(bool complete = false) {
    events_.emplace_back();
    events_.back().complete = complete;
    return &events_.back();
  }

  void *get_chunk(std::size_t size) override {
    ++get_calls;
    if (fail_chunks || (refuse_above && size > refuse_above)) return nullptr;
    void *p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (p) {
      chunks_[p] = size;
      outstanding += size;
    }
    return p;
  }
  void put_chunk(void *base, std::size_t size) override {
    ++put_calls;
    auto it = chunks_.find(base);
    EXPECT_NE(it, chunks_.end()) << "put_chunk of an unknown chunk";
    if (it == chunks_.end()) return;
    EXPECT_EQ(it->second, size);
    outstanding -= size;
    chunks_.erase(it);
    std::free(base);
  }
  bool event_complete(event_handle ev) override {
    auto *e = static_cast<sim_event *>(ev);
    EXPECT_GT(e->pool_refs, 0) << "query on an event the pool does not hold";
    ++complete_queries;
    return e->complete;
  }
  bool add_dependency(command_context cmd, event_handle ev) override {
    if (fail_dependencies) return false;
    static_cast<sim_command *>(cmd)->deps.push_back(ev);
    return true;
  }
  void retain_event(event_handle ev) override { ++static_cast<sim_event *>(ev)->pool_refs; }
  void release_event(event_handle ev) override {
    auto *e = static_cast<sim_event *>(ev);
    EXPECT_GT(e->pool_refs, 0) << "release of an event the pool does not hold";
    --e->pool_refs;
  }
  bool is_ordered_before(command_context cmd, event_handle ev) override {
    return ordered_hook ? ordered_hook(cmd, ev) : false;
  }

  int total_pool_refs() const {
    int n = 0;
    for (auto &e : events_) n += e.pool_refs;
    return n;
  }
  std::size_t chunks_out() const { return chunks_.size(); }

  std::size_t alignment = 64;
  bool fail_chunks = false;
  std::size_t refuse_above = 0;
  bool fail_dependencies = false;
  std::function<bool(command_context, event_handle)> ordered_hook;
  std::size_t get_calls = 0, put_calls = 0, complete_queries = 0;
  std::size_t outstanding = 0;

private:
  std::deque<sim_event> events_;
  std::map<void *, std::size_t> chunks_;
};

} // namespace ordo::pool::test
