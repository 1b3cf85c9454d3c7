// SPDX-License-Identifier: Apache-2.0
// ordo::stream_ordered::order_graph: what a barrier of an out-of-order queue follows. Without a wait
// list it follows every earlier command of its queue; with one, only those events, even
// when none of them has a node (events the layer knows nothing of: another context's, or
// made from a foreign native handle). Treating the second as the first let an alloc
// reuse a block whose free it was not ordered after.
#include <gtest/gtest.h>

#include "ordo_so/layer.hpp"

namespace {

using ordo::stream_ordered::order_graph;

// A free on out-of-order queue A; command C on out-of-order queue B waits for it.
struct TwoQueues {
  order_graph g;
  int a = 0, b = 0; // queue identities
  uint64_t freed = 0;
  TwoQueues() {
    freed = g.record(&a, false, false, nullptr, 0, false);
    g.record(&b, false, false, &freed, 1, true);
  }
};

TEST(OrderGraph, BarrierWithoutWaitListFollowsEveryEarlierCommand) {
  TwoQueues t;
  t.g.record(&t.b, false, true, nullptr, 0, false);
  EXPECT_TRUE(t.g.ordered_after(t.freed, &t.b, false, nullptr, 0))
      << "after the barrier, queue B's next command follows C, which follows the free";
}

TEST(OrderGraph, BarrierWhoseWaitListHasNoNodesFollowsNoneOfTheQueue) {
  TwoQueues t;
  t.g.record(&t.b, false, true, nullptr, 0, /*has_wait_list=*/true);
  EXPECT_FALSE(t.g.ordered_after(t.freed, &t.b, false, nullptr, 0))
      << "the barrier waits only for its list: C, and so the free, may still be running";
}

TEST(OrderGraph, BarrierFollowsTheNodesOfItsWaitList) {
  TwoQueues t;
  t.g.record(&t.b, false, true, &t.freed, 1, true);
  EXPECT_TRUE(t.g.ordered_after(t.freed, &t.b, false, nullptr, 0));
}

} // namespace
