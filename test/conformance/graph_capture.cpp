// SPDX-License-Identifier: Apache-2.0
// Graph record and replay (urQueueBeginGraphCaptureExp ... urEnqueueGraphExp,
// docs/command-buffers.md "Graph capture"): commands enqueued while a queue captures
// do not run, run on every replay in their recorded order, follow the capture events
// and real events of their wait lists, and whatever a graph cannot hold is refused with
// nothing recorded. A device that answers false to GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP
// skips, saying so.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "conformance.hpp"

namespace {

using conf::arg_pointer;
using conf::arg_value;

bool graphs_supported(ur_device_handle_t d) {
  ur_bool_t supported = false;
  return urDeviceGetInfo(d, UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP, sizeof supported, &supported,
                         nullptr) == UR_RESULT_SUCCESS &&
         supported;
}

template <class Base> class GraphFixture : public Base {
protected:
  static constexpr size_t kWords = 1024;
  void SetUp() override {
    CONF_BASE_SETUP(Base);
    if (!graphs_supported(this->device()))
      GTEST_SKIP() << this->found().label() << " has no graph record and replay (GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP)";
    ur_device_handle_t dev = this->device();
    ASSERT_SUCCESS(urQueueCreate(this->context, dev, nullptr, &reader));
    for (void *&p : mem) ASSERT_SUCCESS(conf::usm_alloc(this->context, dev, UR_USM_TYPE_DEVICE, kWords * 4, &p));
  }
  void TearDown() override {
    if (reader) {
      EXPECT_SUCCESS(urQueueFinish(reader));
      EXPECT_SUCCESS(urQueueRelease(reader));
    }
    for (void *p : mem) {
      if (p) {
        EXPECT_SUCCESS(urUSMFree(this->context, p));
      }
    }
    Base::TearDown();
  }
  // Sets every word of mem[i] to v on the reader queue, waited for.
  void set(int i, uint32_t v) {
    ASSERT_SUCCESS(urEnqueueUSMFill(reader, mem[i], 4, &v, kWords * 4, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(reader));
  }
  // Whether every word of mem[i] is v (read on the reader queue).
  bool all(int i, uint32_t v) {
    std::vector<uint32_t> back(kWords, 0);
    EXPECT_SUCCESS(urEnqueueUSMMemcpy(reader, true, back.data(), mem[i], kWords * 4, 0, nullptr, nullptr));
    return std::all_of(back.begin(), back.end(), [&](uint32_t x) { return x == v; });
  }
  ur_queue_handle_t reader = nullptr;
  void *mem[3] = {nullptr, nullptr, nullptr};
};

class urGraphCaptureTest : public GraphFixture<conf::QueueTest> {};
class urGraphCaptureOutOfOrderTest : public GraphFixture<conf::OutOfOrderQueueTest> {};
class urGraphCaptureKernelTest : public GraphFixture<conf::ProgramTest> {};

TEST_P(urGraphCaptureTest, CapturedCommandsRunOnlyOnReplayInOrder) {
  set(0, 0);
  set(1, 0);
  const uint32_t a = 0xA5A5A5A5;
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  bool capturing = false;
  ASSERT_SUCCESS(urQueueIsGraphCaptureEnabledExp(queue, &capturing));
  EXPECT_TRUE(capturing);
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &a, kWords * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 0, nullptr, nullptr));
  ur_exp_graph_handle_t graph = nullptr, current = nullptr;
  ASSERT_SUCCESS(urQueueGetGraphExp(queue, &current));
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
  EXPECT_EQ(graph, current);
  ASSERT_SUCCESS(urQueueIsGraphCaptureEnabledExp(queue, &capturing));
  EXPECT_FALSE(capturing);
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(0, 0)) << "a captured fill ran during capture";
  EXPECT_TRUE(all(1, 0)) << "a captured copy ran during capture";

  bool empty = true;
  ASSERT_SUCCESS(urGraphIsEmptyExp(graph, &empty));
  EXPECT_FALSE(empty);
  ur_exp_executable_graph_handle_t exec = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));
  for (int run = 0; run < 3; ++run) {
    set(0, 0);
    set(1, 0);
    ur_event_handle_t done = nullptr;
    ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, &done));
    ASSERT_SUCCESS(urEventWait(1, &done));
    EXPECT_SUCCESS(urEventRelease(done));
    EXPECT_TRUE(all(0, a)) << "run " << run;
    EXPECT_TRUE(all(1, a)) << "run " << run << ": the copy did not follow the fill";
  }
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
}

TEST_P(urGraphCaptureKernelTest, CapturedKernelRunsOnEveryReplay) {
  ur_kernel_handle_t fill = make_kernel("fill");
  ASSERT_NE(nullptr, fill);
  ur_exp_graph_handle_t graph = nullptr;
  ASSERT_SUCCESS(urGraphCreateExp(context, &graph));
  ASSERT_SUCCESS(urQueueBeginCaptureIntoGraphExp(queue, graph));
  uint32_t v = 0x600D;
  std::vector<ur_exp_kernel_arg_properties_t> args{arg_pointer(0, mem[2]), arg_value(1, sizeof v, &v)};
  const size_t n = kWords;
  ASSERT_SUCCESS(urEnqueueKernelLaunchWithArgsExp(queue, fill, 1, nullptr, &n, nullptr, 2, args.data(), nullptr, 0,
                                                  nullptr, nullptr));
  v = 0xBAD; // the value was copied when the launch was captured
  ur_exp_graph_handle_t same = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &same));
  EXPECT_EQ(graph, same);
  EXPECT_SUCCESS(urKernelRelease(fill)); // the graph holds it
  ur_exp_executable_graph_handle_t exec = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));
  for (int run = 0; run < 2; ++run) {
    set(2, 0);
    ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(queue));
    EXPECT_TRUE(all(2, 0x600D)) << "run " << run;
  }
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
}

// On an out-of-order queue only wait lists and barriers order captured commands; the
// events a capture gives are graph nodes, usable in that capture's wait lists only.
TEST_P(urGraphCaptureOutOfOrderTest, CaptureEventsOrderTheGraph) {
  set(0, 0);
  set(1, 0);
  set(2, 0);
  const uint32_t a = 11, b = 22;
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  ur_event_handle_t filled = nullptr, copied = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &a, kWords * 4, 0, nullptr, &filled));
  ASSERT_NE(nullptr, filled);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 1, &filled, &copied));
  ASSERT_SUCCESS(urEnqueueEventsWaitWithBarrier(queue, 0, nullptr, nullptr));
  // After the barrier: overwrite mem[0]; the copy above must have read it before.
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &b, kWords * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[2], mem[1], kWords * 4, 1, &copied, nullptr));

  // What a capture event answers, and where it is refused.
  ur_command_t type = UR_COMMAND_FORCE_UINT32;
  ASSERT_SUCCESS(urEventGetInfo(filled, UR_EVENT_INFO_COMMAND_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_COMMAND_USM_FILL, type);
  ur_context_handle_t ctx = nullptr;
  ASSERT_SUCCESS(urEventGetInfo(filled, UR_EVENT_INFO_CONTEXT, sizeof ctx, &ctx, nullptr));
  EXPECT_EQ(context, ctx);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT, urEventWait(1, &filled)) << "a graph node never completes";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, urEnqueueEventsWait(reader, 1, &filled, nullptr))
      << "a queue that does not capture waited for a graph node";

  ur_exp_graph_handle_t graph = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
  EXPECT_SUCCESS(urEventRelease(filled));
  EXPECT_SUCCESS(urEventRelease(copied));
  ur_exp_executable_graph_handle_t exec = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));
  ur_event_handle_t done = nullptr;
  ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, &done));
  ASSERT_SUCCESS(urEventWait(1, &done));
  EXPECT_SUCCESS(urEventRelease(done));
  EXPECT_TRUE(all(0, b));
  EXPECT_TRUE(all(1, a)) << "the copy did not follow its fill, or the barrier let the second fill pass";
  EXPECT_TRUE(all(2, a));
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
}

// A real event in a captured wait list is held by the graph and waited for on replay.
TEST_P(urGraphCaptureTest, ReplayWaitsForARealEvent) {
  set(0, 0);
  set(1, 0);
  ur_queue_handle_t gate_queue = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &gate_queue));
  const uint32_t a = 77;
  ur_event_handle_t gate = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMFill(gate_queue, mem[0], 4, &a, kWords * 4, 0, nullptr, &gate));
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 1, &gate, nullptr));
  ur_exp_graph_handle_t graph = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
  EXPECT_SUCCESS(urEventRelease(gate)); // the graph keeps its own reference
  ur_exp_executable_graph_handle_t exec = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(graph, &exec));
  ASSERT_SUCCESS(urEnqueueGraphExp(queue, exec, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(1, a));
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
  EXPECT_SUCCESS(urQueueFinish(gate_queue));
  EXPECT_SUCCESS(urQueueRelease(gate_queue));
}

// Enqueued while another capture runs, an executable graph becomes one node of it.
TEST_P(urGraphCaptureTest, AGraphReplaysInsideAnother) {
  set(0, 0);
  set(1, 0);
  const uint32_t a = 5;
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &a, kWords * 4, 0, nullptr, nullptr));
  ur_exp_graph_handle_t inner = nullptr, outer = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &inner));
  ur_exp_executable_graph_handle_t inner_exec = nullptr, outer_exec = nullptr, second = nullptr;
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(inner, &inner_exec));
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(inner, &second));
  EXPECT_NE(inner_exec, second) << "each instantiation is its own executable graph";
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(second));

  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  ASSERT_SUCCESS(urEnqueueGraphExp(queue, inner_exec, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &outer));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(0, 0)) << "the inner graph ran while the outer one was captured";
  ASSERT_SUCCESS(urGraphInstantiateGraphExp(outer, &outer_exec));
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(inner_exec)); // the outer graph holds its recording
  EXPECT_SUCCESS(urGraphDestroyExp(inner));
  ASSERT_SUCCESS(urEnqueueGraphExp(queue, outer_exec, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(0, a));
  EXPECT_TRUE(all(1, a));
  EXPECT_SUCCESS(urGraphExecutableGraphDestroyExp(outer_exec));
  EXPECT_SUCCESS(urGraphDestroyExp(outer));
}

TEST_P(urGraphCaptureTest, RefusesWhatAGraphCannotHoldAndRecordsNothing) {
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(queue));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urQueueBeginGraphCaptureExp(queue)) << "capturing already";
  std::vector<uint32_t> host(kWords);
  EXPECT_EQ(UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED,
            urEnqueueUSMMemcpy(queue, true, host.data(), mem[0], kWords * 4, 0, nullptr, nullptr))
      << "a blocking copy cannot wait for a replay";
  void *p = nullptr;
  ur_result_t r = urEnqueueUSMDeviceAllocExp(queue, nullptr, 256, nullptr, 0, nullptr, &p, nullptr);
  EXPECT_TRUE(r == UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED || r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
      << "stream-ordered allocation inside a graph: " << urinfo::result_name(r);
  EXPECT_EQ(nullptr, p);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER,
            urEnqueueUSMMemcpy(queue, false, nullptr, mem[0], 4, 0, nullptr, nullptr))
      << "captured commands are checked when captured";
  // A refused command that waits for a real event leaves no recorded wait behind.
  ur_event_handle_t real = nullptr;
  ASSERT_SUCCESS(urEnqueueEventsWait(reader, 0, nullptr, &real));
  EXPECT_EQ(UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED,
            urEnqueueUSMMemcpy(queue, true, host.data(), mem[0], kWords * 4, 1, &real, nullptr));
  EXPECT_SUCCESS(urEventRelease(real));
  ur_exp_graph_handle_t graph = nullptr;
  ASSERT_SUCCESS(urQueueGetGraphExp(queue, &graph));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urGraphDestroyExp(graph)) << "a queue still captures into it";
  ur_exp_executable_graph_handle_t early = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urGraphInstantiateGraphExp(graph, &early)) << "still being captured";
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &graph));
  bool empty = false;
  ASSERT_SUCCESS(urGraphIsEmptyExp(graph, &empty));
  EXPECT_TRUE(empty) << "a refused command was recorded";
  const std::string path = ::testing::TempDir() + "ordo_graph_refused.dot";
  ASSERT_SUCCESS(urGraphDumpContentsExp(graph, path.c_str()));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(std::string::npos, text.str().find("n0")) << "the recording holds a command:\n" << text.str();
  std::remove(path.c_str());
  ur_exp_executable_graph_handle_t exec = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ARGUMENT, urGraphInstantiateGraphExp(graph, &exec)) << "an empty graph";

  // The queue runs commands again, and the graph takes a capture into it (it is empty).
  const uint32_t a = 3;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &a, kWords * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_TRUE(all(0, a));
  ASSERT_SUCCESS(urQueueBeginCaptureIntoGraphExp(queue, graph));
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &a, kWords * 4, 0, nullptr, nullptr));
  ur_exp_graph_handle_t same = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &same));
  EXPECT_EQ(graph, same);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ARGUMENT, urQueueBeginCaptureIntoGraphExp(queue, graph)) << "not empty";
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
}

TEST_P(urGraphCaptureTest, RefusesBadHandlesAndStates) {
  ur_exp_graph_handle_t graph = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueBeginGraphCaptureExp(nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueEndGraphCaptureExp(nullptr, &graph));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urQueueEndGraphCaptureExp(queue, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urQueueEndGraphCaptureExp(queue, &graph)) << "not capturing";
  graph = reinterpret_cast<ur_exp_graph_handle_t>(0x1);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_OPERATION, urQueueGetGraphExp(queue, &graph));
  EXPECT_EQ(nullptr, graph);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urGraphCreateExp(nullptr, &graph));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urGraphCreateExp(context, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueBeginCaptureIntoGraphExp(queue, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urGraphDestroyExp(nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urGraphExecutableGraphDestroyExp(nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEnqueueGraphExp(queue, nullptr, 0, nullptr, nullptr));
  bool b = false;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urQueueIsGraphCaptureEnabledExp(nullptr, &b));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urQueueIsGraphCaptureEnabledExp(queue, nullptr));

  ASSERT_SUCCESS(urGraphCreateExp(context, &graph));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urGraphIsEmptyExp(graph, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urGraphGetIdExp(graph, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urGraphSetDestructionCallbackExp(graph, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urGraphDumpContentsExp(graph, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_UNKNOWN, urGraphDumpContentsExp(graph, "/nonexistent-dir/ordo/graph.dot"));
  ur_exp_executable_graph_handle_t exec = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urGraphInstantiateGraphExp(graph, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_ARGUMENT, urGraphInstantiateGraphExp(graph, &exec));
  EXPECT_SUCCESS(urGraphDestroyExp(graph));
}

void count_destruction(void *data) { static_cast<std::atomic<int> *>(data)->fetch_add(1); }

TEST_P(urGraphCaptureTest, IdsCallbacksAndDump) {
  ur_exp_graph_handle_t g1 = nullptr, g2 = nullptr;
  ASSERT_SUCCESS(urGraphCreateExp(context, &g1));
  ASSERT_SUCCESS(urGraphCreateExp(context, &g2));
  uint64_t id1 = 0, id2 = 0;
  ASSERT_SUCCESS(urGraphGetIdExp(g1, &id1));
  ASSERT_SUCCESS(urGraphGetIdExp(g2, &id2));
  EXPECT_LT(id1, id2) << "ids increase";

  ASSERT_SUCCESS(urQueueBeginCaptureIntoGraphExp(queue, g1));
  const uint32_t a = 1;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, mem[0], 4, &a, kWords * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, false, mem[1], mem[0], kWords * 4, 0, nullptr, nullptr));
  ur_exp_graph_handle_t same = nullptr;
  ASSERT_SUCCESS(urQueueEndGraphCaptureExp(queue, &same));
  const std::string path = ::testing::TempDir() + "ordo_graph_dump.dot";
  ASSERT_SUCCESS(urGraphDumpContentsExp(g1, path.c_str()));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(std::string::npos, text.str().find("digraph")) << text.str();
  EXPECT_NE(std::string::npos, text.str().find("USM fill")) << text.str();
  EXPECT_NE(std::string::npos, text.str().find("n0 -> n1")) << "the copy follows the fill\n" << text.str();
  std::remove(path.c_str());

  std::atomic<int> destroyed{0};
  ASSERT_SUCCESS(urGraphSetDestructionCallbackExp(g1, count_destruction, &destroyed));
  ASSERT_SUCCESS(urGraphSetDestructionCallbackExp(g1, count_destruction, &destroyed));
  EXPECT_EQ(0, destroyed.load());
  EXPECT_SUCCESS(urGraphDestroyExp(g1));
  EXPECT_EQ(2, destroyed.load());
  EXPECT_SUCCESS(urGraphDestroyExp(g2));
}

// Releasing a queue that captures ends the capture; the graph it made goes with it.
TEST_P(urGraphCaptureTest, ReleasingACapturingQueueEndsItsCapture) {
  ur_queue_handle_t q = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urQueueCreate(context, dev, nullptr, &q));
  ASSERT_SUCCESS(urQueueBeginGraphCaptureExp(q));
  const uint32_t a = 9;
  ASSERT_SUCCESS(urEnqueueUSMFill(q, mem[0], 4, &a, kWords * 4, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urQueueRelease(q));
  // The fixture's queue is unaffected and the context is released cleanly at TearDown.
  set(0, 0);
  EXPECT_TRUE(all(0, 0));
}

// Threads capture and replay their own graphs on their own queues at the same time.
TEST_P(urGraphCaptureTest, ThreadsCaptureAndReplayTheirOwnGraphs) {
  const int threads = 3, rounds = 10;
  std::vector<void *> bufs(threads, nullptr);
  for (void *&p : bufs) ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kWords * 4, &p));
  std::vector<int> bad(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ur_queue_handle_t q = nullptr;
      ur_device_handle_t dev = device();
      if (urQueueCreate(context, dev, nullptr, &q) != UR_RESULT_SUCCESS) {
        ++bad[t];
        return;
      }
      for (int r = 0; r < rounds; ++r) {
        const uint32_t v = uint32_t(t * 1000 + r);
        ur_exp_graph_handle_t g = nullptr;
        ur_exp_executable_graph_handle_t e = nullptr;
        std::vector<uint32_t> back(kWords, 0);
        bool ok =
            urQueueBeginGraphCaptureExp(q) == UR_RESULT_SUCCESS &&
            urEnqueueUSMFill(q, bufs[t], 4, &v, kWords * 4, 0, nullptr, nullptr) == UR_RESULT_SUCCESS &&
            urQueueEndGraphCaptureExp(q, &g) == UR_RESULT_SUCCESS &&
            urGraphInstantiateGraphExp(g, &e) == UR_RESULT_SUCCESS &&
            urEnqueueGraphExp(q, e, 0, nullptr, nullptr) == UR_RESULT_SUCCESS &&
            urEnqueueUSMMemcpy(q, true, back.data(), bufs[t], kWords * 4, 0, nullptr, nullptr) == UR_RESULT_SUCCESS &&
            std::all_of(back.begin(), back.end(), [&](uint32_t x) { return x == v; });
        if (e) urGraphExecutableGraphDestroyExp(e);
        if (g) urGraphDestroyExp(g);
        if (!ok) ++bad[t];
      }
      urQueueRelease(q);
    });
  for (auto &th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(0, bad[t]) << "thread " << t;
  for (void *p : bufs) EXPECT_SUCCESS(urUSMFree(context, p));
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urGraphCaptureTest);
CONF_INSTANTIATE_DEVICE_SUITE(urGraphCaptureOutOfOrderTest);
CONF_INSTANTIATE_DEVICE_SUITE(urGraphCaptureKernelTest);
