// SPDX-License-Identifier: Apache-2.0
// Device memory used up, for the tests of an allocation that fails for memory
// (freed_memory.cpp, quarantine_attack.cpp): 16 MiB plain allocations in `pieces` (each
// one, freed, fills the quarantine alone), the rest in `held`, down to less than 4 KiB
// left. Allocations are never written, so this is safe only where device memory runs out
// without being touched: the Level Zero test driver's budget, or a device of at most
// 64 GiB of its own; elsewhere the tests skip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace conf {

class DeviceMemoryUsedUp {
public:
  static constexpr size_t kPieceBytes = size_t(16) << 20; // the quarantine's byte bound

  static bool out_of_memory(ur_result_t r) {
    return r == UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || r == UR_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  }

  // Why this device's memory cannot be used up safely; empty when it can.
  static std::string why_not(ur_device_handle_t dev, ur_backend_t backend, ur_usm_type_t kind,
                             const std::string &label) {
    if (backend != UR_BACKEND_LEVEL_ZERO)
      return "filling device memory is safe only where the device has memory of its own (Level Zero)";
    if (kind != UR_USM_TYPE_DEVICE) return label + " has no device USM";
    uint64_t global = 0, max_alloc = 0;
    if (info(dev, UR_DEVICE_INFO_GLOBAL_MEM_SIZE, global) || info(dev, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, max_alloc))
      return label + " does not say how much memory it has";
    if (global > (uint64_t(64) << 30) || max_alloc < kPieceBytes)
      return label + ": " + std::to_string(global) + " bytes of device memory, allocations of at most " +
             std::to_string(max_alloc);
    return {};
  }

  // Uses up the memory (fatal failures are the caller's to check: HasFatalFailure()).
  void use_up(ur_context_handle_t ctx, ur_device_handle_t dev, size_t min_pieces) {
    context_ = ctx;
    device_ = dev;
    uint64_t max_alloc = 0;
    ASSERT_EQ(UR_RESULT_SUCCESS, info(dev, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, max_alloc));
    for (size_t bytes : {size_t(max_alloc), kPieceBytes}) {
      const ur_result_t r = fill_with(bytes, 8192, bytes == kPieceBytes ? pieces : held);
      ASSERT_TRUE(out_of_memory(r)) << bytes << ": " << urinfo::result_name(r);
    }
    fill_the_rest();
    ASSERT_GE(pieces.size(), min_pieces);
  }

  // What is left, down to less than 4 KiB (a failing plain allocation empties the
  // quarantine first, so it is empty after this).
  void fill_the_rest() {
    for (size_t bytes : {size_t(1) << 20, size_t(64) << 10, size_t(4) << 10}) {
      const ur_result_t r = fill_with(bytes, 64, held);
      EXPECT_TRUE(out_of_memory(r)) << bytes << ": " << urinfo::result_name(r);
    }
  }

  void give_back() {
    for (void *p : held) EXPECT_EQ(UR_RESULT_SUCCESS, urUSMFree(context_, p));
    for (void *p : pieces) EXPECT_EQ(UR_RESULT_SUCCESS, urUSMFree(context_, p));
    held.clear();
    pieces.clear();
  }

  std::vector<void *> held, pieces;

private:
  ur_result_t fill_with(size_t bytes, size_t most, std::vector<void *> &into) {
    for (size_t n = 0; n < most; ++n) {
      void *p = nullptr;
      const ur_result_t r = urUSMDeviceAlloc(context_, device_, nullptr, nullptr, bytes, &p);
      if (r != UR_RESULT_SUCCESS) return r;
      into.push_back(p);
    }
    return UR_RESULT_SUCCESS;
  }
  ur_context_handle_t context_ = nullptr;
  ur_device_handle_t device_ = nullptr;
};

} // namespace conf
