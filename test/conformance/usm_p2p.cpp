// SPDX-License-Identifier: Apache-2.0
// Peer access (urUsmP2P*Exp) as far as one device shows it: a device and itself. A
// device always reaches its own memory, so support is reported, enable and disable
// succeed and change nothing, and memory stays usable. What needs two devices (access
// to another device's memory, atomics over the link) is in multi_gpu.cpp.
#include <algorithm>

#include "conformance.hpp"

namespace {

class urUsmP2PTest : public conf::QueueTest {
protected:
  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    bool supported = false;
    ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP, supported));
    if (!supported) GTEST_SKIP() << "UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP is false on " << found().label();
  }
  int peer_info(ur_exp_peer_info_t what) {
    int v = -1;
    EXPECT_SUCCESS(urUsmP2PPeerAccessGetInfoExp(device(), device(), what, sizeof v, &v, nullptr));
    return v;
  }
};

TEST_P(urUsmP2PTest, DeviceReachesItsOwnMemory) {
  EXPECT_EQ(1, peer_info(UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT));
  EXPECT_EQ(1, peer_info(UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT));
  size_t size = 0;
  ASSERT_SUCCESS(
      urUsmP2PPeerAccessGetInfoExp(device(), device(), UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT, 0, nullptr, &size));
  EXPECT_EQ(sizeof(int), size);
}

TEST_P(urUsmP2PTest, EnableAndDisableWithItselfChangeNothing) {
  const size_t n = 1 << 16;
  void *p = nullptr;
  ASSERT_SUCCESS(urUSMDeviceAlloc(context, device(), nullptr, nullptr, n, &p));
  ASSERT_SUCCESS(urUsmP2PEnablePeerAccessExp(device(), device()));
  ASSERT_SUCCESS(urUsmP2PEnablePeerAccessExp(device(), device())) << "a second enable is no error";
  const uint8_t v = 0x5D;
  ASSERT_SUCCESS(urEnqueueUSMFill(queue, p, 1, &v, n, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urUsmP2PDisablePeerAccessExp(device(), device()));
  std::vector<uint8_t> out(n);
  ASSERT_SUCCESS(urEnqueueUSMMemcpy(queue, true, out.data(), p, n, 0, nullptr, nullptr));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](uint8_t x) { return x == v; }))
      << "the device's own memory stays usable after a disable with itself";
  EXPECT_EQ(1, peer_info(UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT));
  EXPECT_SUCCESS(urUSMFree(context, p));
}

TEST_P(urUsmP2PTest, InfoRefusals) {
  int v = 0;
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_ENUMERATION,
      urUsmP2PPeerAccessGetInfoExp(device(), device(), UR_EXP_PEER_INFO_FORCE_UINT32, sizeof v, &v, nullptr));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_SIZE,
      urUsmP2PPeerAccessGetInfoExp(device(), device(), UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT, 0, &v, nullptr));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_NULL_POINTER,
      urUsmP2PPeerAccessGetInfoExp(device(), device(), UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT, 0, nullptr, nullptr));
}

CONF_INSTANTIATE_DEVICE_SUITE(urUsmP2PTest);

} // namespace
