// SPDX-License-Identifier: Apache-2.0
// Inter-process USM (urIPC*MemHandleExp): device memory of this process, a plain
// allocation and a stream-ordered pool block, is opened by a second process (this
// binary again, running only IpcChild.WritesThroughTheHandle), which writes a value
// through it; this process then reads the value. The handle data cross the process
// boundary as hex in the environment. Refusals: memory that is not device USM, data
// that is no handle, a second put, a close of something never opened. A device that
// reports no UR_DEVICE_INFO_IPC_MEMORY_SUPPORT_EXP skips, saying so.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "conformance.hpp"

extern char **environ;

namespace {

constexpr size_t kWords = 4096;

std::string to_hex(const void *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    unsigned char b = static_cast<const unsigned char *>(p)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::vector<unsigned char> from_hex(const std::string &s) {
  std::vector<unsigned char> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    out.push_back(static_cast<unsigned char>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return out;
}

// Runs this binary's IpcChild test with the given environment additions; its exit status.
int run_child(const std::vector<std::string> &extra) {
  std::vector<std::string> env_strings(extra);
  for (char **e = environ; *e; ++e) env_strings.emplace_back(*e);
  std::vector<char *> envp;
  for (auto &s : env_strings) envp.push_back(const_cast<char *>(s.c_str()));
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", filter = "--gtest_filter=IpcChild.WritesThroughTheHandle";
  char *argv[] = {const_cast<char *>(self.c_str()), const_cast<char *>(filter.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

class urIpcMemTest : public conf::QueueTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    ur_bool_t yes = false;
    if (conf::info(device(), UR_DEVICE_INFO_IPC_MEMORY_SUPPORT_EXP, yes) != UR_RESULT_SUCCESS || !yes)
      GTEST_SKIP() << found().label() << " reports no UR_DEVICE_INFO_IPC_MEMORY_SUPPORT_EXP";
    for (size_t i = 0; i < conf::devices().size(); ++i)
      if (conf::devices()[i].device == device()) index = i;
  }
  // Another process writes `value` into every word of `p` through an IPC handle.
  void shared_with_child(void *p, uint32_t value) {
    const uint32_t zero = 0;
    ASSERT_SUCCESS(urEnqueueUSMFill(queue, p, 4, &zero, kWords * 4, 0, nullptr, nullptr));
    ASSERT_SUCCESS(urQueueFinish(queue));
    void *data = nullptr;
    size_t size = 0;
    ASSERT_SUCCESS(urIPCGetMemHandleExp(context, p, &data, &size));
    ASSERT_NE(nullptr, data);
    int status =
        run_child({"ORDO_IPC_CHILD_HANDLE=" + to_hex(data, size), "ORDO_IPC_CHILD_DEVICE=" + std::to_string(index),
                   "ORDO_IPC_CHILD_VALUE=" + std::to_string(value)});
    EXPECT_EQ(0, status) << "the child process failed (its output is above)";
    std::vector<uint32_t> back(kWords, 0);
    ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, back.data(), p, kWords * 4, 0, nullptr, nullptr));
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [&](uint32_t x) { return x == value; }))
        << "the other process's writes did not arrive";
    EXPECT_SUCCESS(urIPCPutMemHandleExp(context, data));
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCPutMemHandleExp(context, data)) << "put back already";
  }
  size_t index = 0;
};

TEST_P(urIpcMemTest, AnotherProcessWritesAPlainAllocation) {
  void *p = nullptr;
  ASSERT_SUCCESS(conf::usm_alloc(context, device(), UR_USM_TYPE_DEVICE, kWords * 4, &p));
  shared_with_child(p, 0x1badcafe);
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urIpcMemTest, AnotherProcessWritesAStreamOrderedBlock) {
  void *p = nullptr;
  ASSERT_SUCCESS(urEnqueueUSMDeviceAllocExp(queue, nullptr, kWords * 4, nullptr, 0, nullptr, &p, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  shared_with_child(p, 0x5eed);
  ASSERT_SUCCESS(urEnqueueUSMFreeExp(queue, nullptr, p, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

TEST_P(urIpcMemTest, Refusals) {
  void *data = nullptr, *h = nullptr;
  size_t size = 0;
  std::vector<uint32_t> host(16);
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCGetMemHandleExp(context, host.data(), &data, &size))
      << "not USM of the context";
  ASSERT_SUCCESS(urUSMHostAlloc(context, nullptr, nullptr, 4096, &h));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCGetMemHandleExp(context, h, &data, &size)) << "host USM";
  EXPECT_SUCCESS(urUSMFree(context, h));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_NULL_POINTER, urIPCGetMemHandleExp(context, nullptr, &data, &size));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCPutMemHandleExp(context, host.data())) << "no handle of ours";
  void *p = nullptr;
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCOpenMemHandleExp(context, device(), host.data(), 8, &p))
      << "no handle data";
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCCloseMemHandleExp(context, host.data())) << "never opened";
}

// The child's half: opens the handle, writes the value through it, closes it. Skipped
// unless run by urIpcMemTest.
TEST(IpcChild, WritesThroughTheHandle) {
  const char *hex = std::getenv("ORDO_IPC_CHILD_HANDLE");
  if (!hex) GTEST_SKIP() << "runs only as the child process of urIpcMemTest";
  const size_t index = std::strtoul(std::getenv("ORDO_IPC_CHILD_DEVICE"), nullptr, 10);
  const uint32_t value = static_cast<uint32_t>(std::strtoul(std::getenv("ORDO_IPC_CHILD_VALUE"), nullptr, 10));
  ASSERT_LT(index, conf::devices().size());
  ur_device_handle_t dev = conf::devices()[index].device;
  ur_context_handle_t ctx = nullptr;
  ur_queue_handle_t q = nullptr;
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &ctx));
  ASSERT_SUCCESS(urQueueCreate(ctx, dev, nullptr, &q));
  std::vector<unsigned char> data = from_hex(hex);
  void *p = nullptr;
  ASSERT_SUCCESS(urIPCOpenMemHandleExp(ctx, dev, data.data(), data.size(), &p));
  ASSERT_NE(nullptr, p);
  ASSERT_SUCCESS(urEnqueueUSMFill(q, p, 4, &value, kWords * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(q));
  EXPECT_SUCCESS(urIPCCloseMemHandleExp(ctx, p));
  EXPECT_EQ(UR_RESULT_ERROR_INVALID_VALUE, urIPCCloseMemHandleExp(ctx, p)) << "closed already";
  EXPECT_SUCCESS(urQueueRelease(q));
  EXPECT_SUCCESS(urContextRelease(ctx));
}

} // namespace

CONF_INSTANTIATE_DEVICE_SUITE(urIpcMemTest);
