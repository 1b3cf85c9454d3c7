// SPDX-License-Identifier: Apache-2.0
// Pool lifetimes, fixed pools and limits through the public API (docs/async-alloc.md,
// "Lifetime" and "Fixed pools"): a pool destroyed while other threads allocate from it
// as the current pool, fixed pools whose ranges nest or overlap, the allocation under a
// live fixed pool, registered host memory under a fixed pool, a pool at its maximum
// with idle memory of several kinds, and a context whose last reused block is never
// freed. Each test here failed before the fix it names in docs/async-alloc.md.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "async_alloc_support.hpp"

namespace {

using namespace conf::async;

constexpr size_t KiB = 1024, MiB = 1024 * KiB;

class urPoolLifetimeTest : public conf::ContextTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::ContextTest);
    if (!async_supported(device()))
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP";
    kind = conf::usm_supported(device(), UR_USM_TYPE_DEVICE) ? UR_USM_TYPE_DEVICE : UR_USM_TYPE_HOST;
  }

  // A plain allocation of `kind` (device memory where the device has it).
  void *plain_alloc(size_t bytes) {
    void *p = nullptr;
    EXPECT_SUCCESS(kind == UR_USM_TYPE_DEVICE ? urUSMDeviceAlloc(context, device(), nullptr, nullptr, bytes, &p)
                                              : urUSMHostAlloc(context, nullptr, nullptr, bytes, &p));
    return p;
  }
  // A fixed pool over [mem, mem + bytes): a device pool, or a classic pool for host memory.
  ur_result_t fixed_pool(void *mem, size_t bytes, ur_usm_pool_handle_t *out, ur_usm_type_t type = UR_USM_TYPE_UNKNOWN) {
    if (type == UR_USM_TYPE_UNKNOWN) type = kind;
    ur_usm_pool_buffer_desc_t buf{UR_STRUCTURE_TYPE_USM_POOL_BUFFER_DESC,       nullptr, mem, bytes, type,
                                  type == UR_USM_TYPE_HOST ? nullptr : device()};
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &buf, 0};
    *out = nullptr;
    return type == UR_USM_TYPE_HOST ? urUSMPoolCreate(context, &desc, out)
                                    : urUSMPoolCreateExp(context, device(), &desc, out);
  }
  ur_result_t destroy(ur_usm_pool_handle_t p) {
    return kind == UR_USM_TYPE_HOST ? urUSMPoolRelease(p) : urUSMPoolDestroyExp(context, device(), p);
  }
  ur_result_t pool_alloc(ur_usm_pool_handle_t pool, size_t bytes, void **out) {
    return kind == UR_USM_TYPE_DEVICE ? urUSMDeviceAlloc(context, device(), nullptr, pool, bytes, out)
                                      : urUSMHostAlloc(context, nullptr, pool, bytes, out);
  }

  ur_usm_type_t kind = UR_USM_TYPE_DEVICE;
};

// Case 1 of the pool review: one thread makes a pool current and destroys it, over and
// over, while others allocate with pPool == NULL. An allocation that took the pool
// before the destroy must still be a valid block (of that pool or of the default
// pool), never memory the pool's last reference gives back.
TEST_P(urPoolLifetimeTest, CurrentPoolDestroyedWhileOthersAllocate) {
  if (kind != UR_USM_TYPE_DEVICE) GTEST_SKIP() << found().label() << " has no device USM (device pools)";
  constexpr int kThreads = 3;
  std::vector<ur_queue_handle_t> queues(kThreads);
  for (auto &q : queues) ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> allocs{0}, bad{0}, failed{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([&, t] {
      ur_queue_handle_t q = queues[t];
      while (!stop.load(std::memory_order_relaxed)) {
        void *p = nullptr;
        const size_t bytes = 64 * KiB * (1 + (allocs.load(std::memory_order_relaxed) % 3));
        ur_result_t r = urEnqueueUSMDeviceAllocExp(q, nullptr, bytes, nullptr, 0, nullptr, &p, nullptr);
        if (r != UR_RESULT_SUCCESS) {
          failed++;
          continue;
        }
        allocs++;
        ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
        if (urUSMGetMemAllocInfo(context, p, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr) !=
                UR_RESULT_SUCCESS ||
            type != UR_USM_TYPE_DEVICE)
          bad++;
        if (fill32(q, p, bytes, 0xfeedu, 0, nullptr, nullptr) != UR_RESULT_SUCCESS) bad++;
        if (urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr) != UR_RESULT_SUCCESS) bad++;
      }
    });
  // Another thread makes the newest pool current again and again, racing its destroy:
  // SUCCESS or INVALID_VALUE (destroyed meanwhile), and a destroyed pool never current.
  std::atomic<ur_usm_pool_handle_t> newest{nullptr};
  std::atomic<uint64_t> bad_set{0};
  workers.emplace_back([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      ur_usm_pool_handle_t p = newest.load();
      if (!p) continue;
      ur_result_t r = urUSMPoolSetDevicePoolExp(context, device(), p);
      if (r != UR_RESULT_SUCCESS && r != UR_RESULT_ERROR_INVALID_VALUE) bad_set++;
    }
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  uint64_t pools = 0;
  while (std::chrono::steady_clock::now() < until) {
    ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
    ur_usm_pool_handle_t pool = nullptr;
    ASSERT_SUCCESS(urUSMPoolCreateExp(context, device(), &desc, &pool));
    ASSERT_SUCCESS(urUSMPoolSetDevicePoolExp(context, device(), pool));
    newest.store(pool);
    std::this_thread::yield();
    ASSERT_SUCCESS(urUSMPoolDestroyExp(context, device(), pool));
    ur_usm_pool_handle_t now = nullptr;
    ASSERT_SUCCESS(urUSMPoolGetDevicePoolExp(context, device(), &now));
    ++pools;
  }
  stop = true;
  for (auto &w : workers) w.join();
  for (auto q : queues) {
    EXPECT_SUCCESS(urQueueFinish(q));
    EXPECT_SUCCESS(urQueueRelease(q));
  }
  EXPECT_EQ(0u, failed.load()) << "allocations refused while the current pool changed";
  EXPECT_EQ(0u, bad_set.load()) << "urUSMPoolSetDevicePoolExp racing a destroy gave another result";
  EXPECT_EQ(0u, bad.load()) << "allocations that were not valid device blocks, of " << allocs.load() << " over "
                            << pools << " pools";
  EXPECT_GT(allocs.load(), 0u);
}

// Case 2: a fixed pool over memory another fixed pool holds is refused, however the
// ranges meet (nested either way, overlapping, identical); adjacent ranges are fine.
TEST_P(urPoolLifetimeTest, FixedPoolsNeverShareBytes) {
  void *mem = plain_alloc(1 * MiB);
  ASSERT_NE(nullptr, mem);
  char *base = static_cast<char *>(mem);
  ur_usm_pool_handle_t inner = nullptr, other = nullptr;
  ASSERT_SUCCESS(fixed_pool(base + 256 * KiB, 256 * KiB, &inner));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, fixed_pool(base, 1 * MiB, &other)) << "a range around another pool's";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, fixed_pool(base + 256 * KiB, 256 * KiB, &other)) << "the same range";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, fixed_pool(base + 320 * KiB, 64 * KiB, &other)) << "inside it";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, fixed_pool(base + 128 * KiB, 256 * KiB, &other)) << "over its start";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, fixed_pool(base + 384 * KiB, 256 * KiB, &other)) << "over its end";
  ASSERT_SUCCESS(fixed_pool(base + 512 * KiB, 256 * KiB, &other)) << "an adjacent range";
  // Both pools give out blocks; none of them overlap.
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(pool_alloc(inner, 256 * KiB, &a));
  ASSERT_SUCCESS(pool_alloc(other, 256 * KiB, &b));
  EXPECT_FALSE(overlaps(a, 256 * KiB, b, 256 * KiB));
  EXPECT_SUCCESS(urUSMFree(context, a));
  EXPECT_SUCCESS(urUSMFree(context, b));
  EXPECT_SUCCESS(destroy(inner));
  EXPECT_SUCCESS(destroy(other));
  EXPECT_SUCCESS(urUSMFree(context, mem));
}

// Case 4: the allocation a live fixed pool is carved from cannot be freed, whether the
// pool starts at its first byte or inside it; a block at that first byte is the
// block (the allocation under a live pool has no other meaning a free could have).
TEST_P(urPoolLifetimeTest, AllocationUnderALiveFixedPoolIsNotFreed) {
  void *mem = plain_alloc(256 * KiB);
  ASSERT_NE(nullptr, mem);
  char *base = static_cast<char *>(mem);
  ur_usm_pool_handle_t inside = nullptr;
  ASSERT_SUCCESS(fixed_pool(base + 64 * KiB, 64 * KiB, &inside));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, mem)) << "a pool lies in it";
  void *blk = nullptr;
  ASSERT_SUCCESS(pool_alloc(inside, 64 * KiB, &blk)) << "the pool still has its memory";
  EXPECT_SUCCESS(urUSMFree(context, blk));
  EXPECT_SUCCESS(destroy(inside));

  ur_usm_pool_handle_t at_start = nullptr;
  ASSERT_SUCCESS(fixed_pool(base, 128 * KiB, &at_start));
  void *first = nullptr;
  ASSERT_SUCCESS(pool_alloc(at_start, 64 * KiB, &first));
  ASSERT_EQ(mem, first) << "the pool's first block starts at its first byte";
  EXPECT_SUCCESS(urUSMFree(context, first)) << "the block goes back to its pool";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, mem))
      << "a second free of that address is the allocation under the live pool";
  ASSERT_SUCCESS(pool_alloc(at_start, 128 * KiB, &first)) << "the pool keeps all of its memory";
  EXPECT_SUCCESS(urUSMFree(context, first));
  EXPECT_SUCCESS(destroy(at_start));
  EXPECT_SUCCESS(urUSMFree(context, mem)) << "the pools are gone: the allocation is the caller's again";
}

// Case 4 with the pool destroyed while a block is live: the allocation stays refused
// until that block is freed and the pool is gone.
TEST_P(urPoolLifetimeTest, AllocationUnderADestroyedPoolWaitsForItsBlocks) {
  void *mem = plain_alloc(128 * KiB);
  ASSERT_NE(nullptr, mem);
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(fixed_pool(mem, 128 * KiB, &pool));
  void *blk = nullptr;
  ASSERT_SUCCESS(pool_alloc(pool, 4 * KiB, &blk));
  ASSERT_SUCCESS(destroy(pool));
  void *second = static_cast<char *>(blk) == mem ? nullptr : mem;
  if (second) {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_MEM_OBJECT, urUSMFree(context, second));
  }
  EXPECT_SUCCESS(urUSMFree(context, blk)) << "the destroyed pool's last block";
  EXPECT_SUCCESS(urUSMFree(context, mem)) << "the pool went with its last block";
}

// Case 6: registered host memory is not USM of the context: no fixed pool over it, so
// the registration can never be removed under a pool's blocks.
TEST_P(urPoolLifetimeTest, NoFixedPoolOverRegisteredHostMemory) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes = 16 * page;
  void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, mem);
  ur_result_t r = urUSMHostAllocRegisterExp(context, mem, bytes, nullptr);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    munmap(mem, bytes);
    GTEST_SKIP() << found().label() << " does not register host memory";
  }
  ASSERT_SUCCESS(r);
  ur_usm_pool_handle_t pool = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, fixed_pool(mem, bytes, &pool, UR_USM_TYPE_HOST));
  if (pool) {
    EXPECT_SUCCESS(urUSMPoolRelease(pool));
  }
  EXPECT_SUCCESS(urUSMHostAllocUnregisterExp(context, mem));
  munmap(mem, bytes);
}

// Case 5: a classic pool at its maximum, all of it idle in chunks of two kinds: a
// request the maximum allows succeeds once idle chunks of every kind go back, the
// requesting kind's own included (synchronous and stream-ordered alike).
TEST_P(urPoolLifetimeTest, IdleMemoryOfEveryKindMakesRoom) {
  if (!conf::usm_supported(device(), UR_USM_TYPE_HOST) || !conf::usm_supported(device(), UR_USM_TYPE_DEVICE))
    GTEST_SKIP() << found().label() << " lacks host or device USM";
  const size_t max = 4 * MiB;
  ur_usm_pool_limits_desc_t limits{UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, nullptr, max, max};
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, &limits, 0};
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  for (bool ordered : {false, true}) {
    SCOPED_TRACE(ordered ? "urEnqueueUSMDeviceAllocExp" : "urUSMDeviceAlloc");
    ur_usm_pool_handle_t pool = nullptr;
    ASSERT_SUCCESS(urUSMPoolCreate(context, &desc, &pool));
    void *h = nullptr, *d = nullptr;
    ASSERT_SUCCESS(urUSMHostAlloc(context, nullptr, pool, 2 * MiB, &h));
    ASSERT_SUCCESS(urUSMFree(context, h));
    ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, pool, 2 * MiB, &d));
    ASSERT_SUCCESS(urUSMFree(context, d));
    void *big = nullptr;
    if (ordered) {
      ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(q, pool, 3 * MiB, nullptr, 0, nullptr, &big, nullptr));
      ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, pool, big, 0, nullptr, nullptr));
      ASSERT_SUCCESS(urQueueFinish(q));
    } else {
      ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, pool, 3 * MiB, &big));
      ASSERT_SUCCESS(urUSMFree(context, big));
    }
    EXPECT_LE(stats_of(pool).reserved, max);
    EXPECT_SUCCESS(urUSMPoolRelease(pool));
  }
  EXPECT_SUCCESS(urQueueRelease(q));
}

struct DeleterCount {
  std::atomic<int> calls{0};
};
void count_deleter(void *user) { static_cast<DeleterCount *>(user)->calls++; }

// Case 3: a block that took over an earlier free's memory (reuse rule 1) and is never
// freed must not keep its context alive: once every handle is released, the context
// goes (its extended deleter runs), and the block with it.
TEST_P(urPoolLifetimeTest, NeverFreedReusedBlockLetsTheContextGo) {
  ur_device_handle_t dev = device();
  ur_context_handle_t ctx = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &ctx));
  DeleterCount deleted;
  ur_result_t r = urContextSetExtendedDeleter(ctx, count_deleter, &deleted);
  if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) {
    urContextRelease(ctx);
    GTEST_SKIP() << "urContextSetExtendedDeleter unsupported";
  }
  ASSERT_SUCCESS(r);
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(ctx, dev, nullptr, &q));
  QueueHold hold; // keeps the free pending, so the next alloc takes it over by rule 1
  ur_event_handle_t held = nullptr, freed = nullptr;
  ASSERT_SUCCESS(hold.start(ctx, dev, q, &held));
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(enqueue_alloc(kind, q, nullptr, 64 * KiB, 0, nullptr, &a, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, nullptr, a, 0, nullptr, &freed));
  ASSERT_SUCCESS(enqueue_alloc(kind, q, nullptr, 64 * KiB, 0, nullptr, &b, nullptr));
  EXPECT_EQ(a, b) << "the second alloc reuses the first block (rule 1)";
  hold.open();
  ASSERT_SUCCESS(urQueueFinish(q));
  hold.release_scratch();
  ASSERT_SUCCESS(urEventRelease(held));
  ASSERT_SUCCESS(urEventRelease(freed));
  ASSERT_SUCCESS(urQueueRelease(q));
  ASSERT_SUCCESS(urContextRelease(ctx)); // `b` is never freed
  // A worker thread that ran the last command may hold the last internal reference for a
  // moment after urContextRelease returns: the context goes then, not never.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (deleted.calls.load() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(1, deleted.calls.load()) << "the context stayed alive for a block nobody freed";
}

// A pool rounds blocks up to 64 bytes; the bytes past the size asked for are not part
// of the allocation: urUSMGetMemAllocInfo does not report them as such.
TEST_P(urPoolLifetimeTest, RoundingIsNotPartOfTheAllocation) {
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  void *p = nullptr;
  ASSERT_SUCCESS(enqueue_alloc(kind, q, nullptr, 100, 0, nullptr, &p, nullptr));
  ASSERT_SUCCESS(urQueueFinish(q));
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  ASSERT_SUCCESS(
      urUSMGetMemAllocInfo(context, static_cast<char *>(p) + 99, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(kind, type) << "the last byte asked for";
  type = UR_USM_TYPE_HOST;
  ASSERT_SUCCESS(
      urUSMGetMemAllocInfo(context, static_cast<char *>(p) + 100, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr));
  EXPECT_EQ(UR_USM_TYPE_UNKNOWN, type) << "one past the size asked for, inside the block's rounding";
  EXPECT_SUCCESS(urEnqueueUSMFreeExp(q, nullptr, p, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urQueueRelease(q));
}

// Found by the checker's long run on PoCL: a pool's idle memory went back to the
// backend while the program made no synchronisation point, because the thread behind a
// host task waited through urEnqueue's own urEventWait. Only the program's own waits
// release memory above the threshold (docs/async-alloc.md, "Growth and release").
TEST_P(urPoolLifetimeTest, HostTaskIsNoSynchronisationPoint) {
  ur_bool_t host_tasks = 0;
  if (conf::info(device(), UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP, host_tasks) != UR_RESULT_SUCCESS ||
      !host_tasks)
    GTEST_SKIP() << found().label() << " has no host tasks";
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(context, &desc, &pool)); // release threshold 0
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  void *p = nullptr;
  ASSERT_SUCCESS(enqueue_alloc(kind, q, pool, 4 * KiB, 0, nullptr, &p, nullptr));
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(q, pool, p, 0, nullptr, nullptr));
  const size_t reserved = stats_of(pool).reserved;
  ASSERT_GT(reserved, 0u);
  // The task runs after the free on the in-order queue: its thread's wait sees it done.
  std::atomic<bool> ran{false};
  auto task = [](void *flag) { static_cast<std::atomic<bool> *>(flag)->store(true); };
  ASSERT_SUCCESS(urEnqueueHostTaskExp(q, task, &ran, nullptr, 0, nullptr, nullptr));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ran.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(ran.load()) << "the host task did not run in 10 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(reserved, stats_of(pool).reserved) << "memory went back with no synchronisation point of the program's";
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_EQ(0u, stats_of(pool).reserved) << "urQueueFinish gives back memory above the threshold";
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
}

// Found by the review through the public API: native CPU bounded USM commands by plain
// allocations only, so a fill or copy past a pool block wrote into the next block.
// Every adapter refuses it (docs/bad-input.md).
TEST_P(urPoolLifetimeTest, CommandPastAPoolBlockIsRefused) {
  ur_usm_pool_desc_t desc{UR_STRUCTURE_TYPE_USM_POOL_DESC, nullptr, 0};
  ur_usm_pool_handle_t pool = nullptr;
  ASSERT_SUCCESS(urUSMPoolCreate(context, &desc, &pool));
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urQueueCreate(context, device(), nullptr, &q));
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(pool_alloc(pool, 64, &a));
  ASSERT_SUCCESS(pool_alloc(pool, 64, &b));
  const uint8_t pattern = 0x7f;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE,
            urEnqueueUSMFill(q, static_cast<char *>(a) + 32, 1, &pattern, 64, 0, nullptr, nullptr));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueUSMMemcpy(q, true, a, b, 128, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urEnqueueUSMFill(q, static_cast<char *>(a) + 32, 1, &pattern, 32, 0, nullptr, nullptr));
  EXPECT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urUSMFree(context, a));
  EXPECT_SUCCESS(urUSMFree(context, b));
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urUSMPoolRelease(pool));
}

CONF_INSTANTIATE_DEVICE_SUITE(urPoolLifetimeTest);

} // namespace
