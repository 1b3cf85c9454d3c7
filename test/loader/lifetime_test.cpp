// SPDX-License-Identifier: Apache-2.0
// urLoaderInit / urLoaderTearDown reference counting, from one thread and many, and the
// implicit init of a first urAdapterGet.
#include <thread>

#include "helpers.hpp"

using namespace loader_test;

namespace {

class Lifetime : public testing::Test {
protected:
  void SetUp() override {
    mock = copy_to(mock_library(), temp_dir("life"), "libur_adapter_mock_life.so.0");
    force = std::make_unique<EnvVar>("UR_ADAPTERS_FORCE_LOAD", mock.c_str());
    ASSERT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED) << "a previous test left the loader up";
  }
  void TearDown() override { force.reset(); }

  uint32_t adapter_count() {
    uint32_t n = 0;
    EXPECT_EQ(urAdapterGet(0, nullptr, &n), UR_RESULT_SUCCESS);
    return n;
  }

  std::string mock;
  std::unique_ptr<EnvVar> force;
};

} // namespace

TEST_F(Lifetime, TearDownWithoutInitIsUninitialized) { EXPECT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED); }

TEST_F(Lifetime, EveryInitNeedsItsTearDown) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(adapter_count(), 1u);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(adapter_count(), 1u); // still up: one reference left
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED);
}

TEST_F(Lifetime, InitRefusesUnknownFlagsAndDeadConfigs) {
  EXPECT_EQ(urLoaderInit(UR_DEVICE_INIT_FLAGS_MASK, nullptr), UR_RESULT_ERROR_INVALID_ENUMERATION);
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderInit(0, config), UR_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED); // nothing was taken
}

TEST_F(Lifetime, FirstAdapterGetInitialisesImplicitly) {
  EXPECT_EQ(adapter_count(), 1u);
  // The implicit init holds one reference, which a tear-down releases.
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED);
}

TEST_F(Lifetime, ReinitialisesAfterAFullTearDown) {
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
    ur_adapter_handle_t a = nullptr;
    ASSERT_EQ(urAdapterGet(1, &a, nullptr), UR_RESULT_SUCCESS);
    MockObjects objects;
    objects.create(a);
    EXPECT_EQ(urQueueFlush(objects.queue), UR_RESULT_SUCCESS);
    objects.release();
    EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
    ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  }
}

TEST_F(Lifetime, LaterInitsOnlyCountTheirConfigIsNotApplied) {
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  ur_loader_config_handle_t config = nullptr;
  ASSERT_EQ(urLoaderConfigCreate(&config), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderConfigEnableLayer(config, "UR_LAYER_TRACING"), UR_RESULT_SUCCESS);
  testing::internal::CaptureStdout();
  ASSERT_EQ(urLoaderInit(0, config), UR_RESULT_SUCCESS);
  adapter_count();
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.find("urAdapterGet("), std::string::npos) << out;
  EXPECT_EQ(urLoaderConfigRelease(config), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
}

TEST_F(Lifetime, ConcurrentInitUseAndTearDown) {
  // One reference held throughout, so the adapters stay loaded while the threads count
  // their own references up and down and call through the loader.
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  ur_adapter_handle_t a = nullptr;
  ASSERT_EQ(urAdapterGet(1, &a, nullptr), UR_RESULT_SUCCESS);
  MockObjects objects;
  objects.create(a);

  constexpr int kThreads = 8, kRounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        if (urLoaderInit(0, nullptr) != UR_RESULT_SUCCESS) ++failures;
        uint32_t n = 0;
        if (urAdapterGet(0, nullptr, &n) != UR_RESULT_SUCCESS || n != 1) ++failures;
        if (urContextRetain(objects.context) != UR_RESULT_SUCCESS) ++failures;
        if (urQueueFlush(objects.queue) != UR_RESULT_SUCCESS) ++failures;
        if (urContextRelease(objects.context) != UR_RESULT_SUCCESS) ++failures;
        if (urLoaderTearDown() != UR_RESULT_SUCCESS) ++failures;
      }
    });
  }
  for (auto &t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  uint32_t refs = 0;
  ASSERT_EQ(urContextGetInfo(objects.context, UR_CONTEXT_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, 2u); // ours and the queue's
  objects.release();
  EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED);
}

TEST_F(Lifetime, ConcurrentFirstInitsLoadOnce) {
  constexpr int kThreads = 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      if (urLoaderInit(0, nullptr) != UR_RESULT_SUCCESS) ++failures;
      uint32_t n = 0;
      if (urAdapterGet(0, nullptr, &n) != UR_RESULT_SUCCESS || n != 1) ++failures;
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(urLoaderTearDown(), UR_RESULT_ERROR_UNINITIALIZED);
}

namespace {

// The mock's count of its adapter's cycles: 0 -> 1 reference ("init") and 1 -> 0
// ("teardown"). The test holds its own dlopen of the library the loader is forced to
// load (the same file, so the same copy), so the counts outlive urLoaderTearDown.
class AdapterCycles : public Lifetime {
protected:
  void SetUp() override {
    Lifetime::SetUp();
    library = dlopen(mock.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    read = reinterpret_cast<ordo_mock_adapter_cycles_t>(dlsym(library, "ordoMockAdapterCycles"));
    ASSERT_NE(read, nullptr);
    read(&inits0, &teardowns0);
  }
  void TearDown() override {
    if (library) dlclose(library);
    Lifetime::TearDown();
  }
  // {inits, teardowns} since SetUp.
  std::pair<uint32_t, uint32_t> cycles() {
    uint32_t inits = 0, teardowns = 0;
    read(&inits, &teardowns);
    return {inits - inits0, teardowns - teardowns0};
  }
  using Cycles = std::pair<uint32_t, uint32_t>;

  void *library = nullptr;
  ordo_mock_adapter_cycles_t read = nullptr;
  uint32_t inits0 = 0, teardowns0 = 0;
};

} // namespace

TEST_F(AdapterCycles, OneInitAndOneTearDownPerLoaderLife) {
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(1, 0)) << "probing must not release the adapter again";
  ur_adapter_handle_t a = nullptr;
  ASSERT_EQ(urAdapterGet(1, &a, nullptr), UR_RESULT_SUCCESS);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(library_of(a), mock);
  EXPECT_EQ(cycles(), Cycles(1, 0));
  EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(1, 0)) << "the loader's own reference keeps the adapter up";
  ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(1, 1)) << "urLoaderTearDown releases what the loader holds";
}

TEST_F(AdapterCycles, ApplicationRetainsAndGetsStayBalanced) {
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  ur_adapter_handle_t a = nullptr, b = nullptr;
  ASSERT_EQ(urAdapterGet(1, &a, nullptr), UR_RESULT_SUCCESS);
  uint32_t before = 0;
  ASSERT_EQ(urAdapterGetInfo(a, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof before, &before, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urAdapterGet(1, &b, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(a, b);
  ASSERT_EQ(urAdapterRetain(a), UR_RESULT_SUCCESS);
  uint32_t refs = 0;
  ASSERT_EQ(urAdapterGetInfo(a, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, before + 2);
  EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(urAdapterRelease(b), UR_RESULT_SUCCESS);
  ASSERT_EQ(urAdapterGetInfo(a, UR_ADAPTER_INFO_REFERENCE_COUNT, sizeof refs, &refs, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(refs, before);
  EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(1, 0));
  ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(1, 1));
}

TEST_F(AdapterCycles, EachLoaderLifeIsOneCycleImplicitInitAndNoGetToo) {
  // Implicit init by a first urAdapterGet.
  ur_adapter_handle_t a = nullptr;
  ASSERT_EQ(urAdapterGet(1, &a, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(1, 1));
  // A life in which the program never asks for the adapter.
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(2, 2));
  // Nested inits: still one cycle, ended by the last tear-down.
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderInit(0, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(urAdapterGet(1, &a, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(urAdapterRelease(a), UR_RESULT_SUCCESS);
  ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(3, 2));
  ASSERT_EQ(urLoaderTearDown(), UR_RESULT_SUCCESS);
  EXPECT_EQ(cycles(), Cycles(3, 3));
}
