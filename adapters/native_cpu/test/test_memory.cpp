// SPDX-License-Identifier: Apache-2.0
// Memory objects on the native CPU adapter, through its own tables (no validation layer
// in front, so every parameter rule is the adapter's): buffers as host memory, native
// handles, lifetimes of buffers held by pending commands, overlapping copies, maps
// behind unfinished commands and failed dependencies, and buffers as kernel arguments.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <tuple>
#include <vector>

#include "ur_test_env.hpp"

using namespace ncpu_test;

namespace {

class NativeCpuMemory : public NativeCpu {
protected:
  void TearDown() override {
    for (auto q : queues) EXPECT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
    for (auto m : buffers) EXPECT_EQ(T(m).Mem.pfnRelease(m), UR_RESULT_SUCCESS);
    NativeCpu::TearDown();
  }
  ur_mem_handle_t buffer(size_t size, ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE, void *host = nullptr) {
    ur_buffer_properties_t props{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host};
    ur_mem_handle_t m = nullptr;
    EXPECT_EQ(T(context).Mem.pfnBufferCreate(context, flags, size, host ? &props : nullptr, &m), UR_RESULT_SUCCESS);
    if (m) buffers.push_back(m);
    return m;
  }
  char *native(ur_mem_handle_t m) {
    ur_native_handle_t h = 0;
    EXPECT_EQ(T(m).Mem.pfnGetNativeHandle(m, device, &h), UR_RESULT_SUCCESS);
    return reinterpret_cast<char *>(h);
  }
  size_t size_of(ur_mem_handle_t m) {
    size_t n = 0;
    EXPECT_EQ(T(m).Mem.pfnGetInfo(m, UR_MEM_INFO_SIZE, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
    return n;
  }
  uint32_t refs(ur_mem_handle_t m) {
    uint32_t n = 0;
    EXPECT_EQ(T(m).Mem.pfnGetInfo(m, UR_MEM_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr), UR_RESULT_SUCCESS);
    return n;
  }
  size_t base_align() {
    uint32_t bits = 0;
    EXPECT_EQ(T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, nullptr),
              UR_RESULT_SUCCESS);
    return bits / 8;
  }
  ur_event_handle_t gated(ur_queue_handle_t q, Gate &gate) {
    ur_event_handle_t e = nullptr;
    EXPECT_EQ(T(q).EnqueueExp.pfnHostTaskExp(q, Gate::host_task, &gate, nullptr, 0, nullptr, &e), UR_RESULT_SUCCESS);
    return e;
  }
  ur_event_status_t status(ur_event_handle_t e) {
    ur_event_status_t s = UR_EVENT_STATUS_FORCE_UINT32;
    EXPECT_EQ(T(e).Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr),
              UR_RESULT_SUCCESS);
    return s;
  }
  void release(std::initializer_list<ur_event_handle_t> events) {
    for (ur_event_handle_t e : events) EXPECT_EQ(T(e).Event.pfnRelease(e), UR_RESULT_SUCCESS);
  }
  static ur_exp_kernel_arg_properties_t mem_arg(uint32_t index, ur_mem_handle_t m,
                                                ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE) {
    ur_exp_kernel_arg_properties_t a{};
    a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
    a.type = UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ;
    a.index = index;
    a.size = sizeof(ur_mem_handle_t);
    a.value.memObjTuple = {m, flags};
    return a;
  }
  std::vector<ur_mem_handle_t> buffers;
};

// ---- the adapter's own parameter checks ----------------------------------------------------------

TEST_F(NativeCpuMemory, CreateChecksEveryRule) {
  auto &t = T(context);
  ur_mem_handle_t m = nullptr;
  std::vector<char> host(64);
  ur_buffer_properties_t with_host{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data()};
  int bogus = 0;
  EXPECT_EQ(t.Mem.pfnBufferCreate(nullptr, 0, 64, nullptr, &m), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(t.Mem.pfnBufferCreate(reinterpret_cast<ur_context_handle_t>(&bogus), 0, 64, nullptr, &m),
            UR_RESULT_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, 0, 64, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, 1u << 6, 64, nullptr, &m), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, 0, 0, nullptr, &m), UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER, 64, nullptr, &m),
            UR_RESULT_ERROR_INVALID_HOST_PTR);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER, 64, nullptr, &m),
            UR_RESULT_ERROR_INVALID_HOST_PTR);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, 0, 64, &with_host, &m), UR_RESULT_ERROR_INVALID_HOST_PTR);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, UR_MEM_FLAG_READ_ONLY | UR_MEM_FLAG_WRITE_ONLY, 64, nullptr, &m),
            UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(
      t.Mem.pfnBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER | UR_MEM_FLAG_ALLOC_HOST_POINTER, 64, &with_host, &m),
      UR_RESULT_ERROR_INVALID_VALUE);
  uint64_t max_alloc = 0;
  T(device).Device.pfnGetInfo(device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr);
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, 0, max_alloc + 1, nullptr, &m), UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
  // An unknown structure in the chain is refused; the placement hints are accepted.
  ur_base_properties_t unknown{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr};
  ur_buffer_properties_t chained{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, &unknown, nullptr};
  EXPECT_EQ(t.Mem.pfnBufferCreate(context, 0, 64, &chained, &m), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(m, nullptr);
  ur_buffer_alloc_location_properties_t location{UR_STRUCTURE_TYPE_BUFFER_ALLOC_LOCATION_PROPERTIES, nullptr, 0};
  ur_buffer_channel_properties_t channel{UR_STRUCTURE_TYPE_BUFFER_CHANNEL_PROPERTIES, &location, 1};
  ur_buffer_properties_t hints{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, &channel, nullptr};
  ASSERT_EQ(t.Mem.pfnBufferCreate(context, 0, 64, &hints, &m), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(m).Mem.pfnRelease(m), UR_RESULT_SUCCESS);
}

TEST_F(NativeCpuMemory, HandleChecksOfEveryEntryPoint) {
  ur_queue_handle_t q = make_queue();
  ur_mem_handle_t m = buffer(256);
  auto &t = T(context);
  int bogus_storage[4] = {};
  auto bogus = reinterpret_cast<ur_mem_handle_t>(&bogus_storage);
  std::vector<char> host(256);
  size_t v = 0;
  void *p = nullptr;
  ur_native_handle_t nh = 0;
  const uint32_t pattern = 0;
  const ur_rect_offset_t o{0, 0, 0};
  const ur_rect_region_t r{8, 1, 1};
  for (ur_mem_handle_t h : {static_cast<ur_mem_handle_t>(nullptr), bogus}) {
    ur_result_t want = h ? UR_RESULT_ERROR_INVALID_MEM_OBJECT : UR_RESULT_ERROR_INVALID_NULL_HANDLE;
    EXPECT_EQ(t.Mem.pfnRetain(h), want);
    EXPECT_EQ(t.Mem.pfnRelease(h), want);
    EXPECT_EQ(t.Mem.pfnGetInfo(h, UR_MEM_INFO_SIZE, sizeof v, &v, nullptr), want);
    EXPECT_EQ(t.Mem.pfnGetNativeHandle(h, nullptr, &nh), want);
    ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, 64};
    EXPECT_EQ(t.Mem.pfnBufferPartition(h, 0, UR_BUFFER_CREATE_TYPE_REGION, &region, &m), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferRead(q, h, true, 0, 8, host.data(), 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferWrite(q, h, true, 0, 8, host.data(), 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferCopy(q, m, h, 0, 0, 8, 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferCopy(q, h, m, 0, 0, 8, 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferFill(q, h, &pattern, 4, 0, 8, 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferReadRect(q, h, true, o, o, r, 0, 0, 0, 0, host.data(), 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferWriteRect(q, h, true, o, o, r, 0, 0, 0, 0, host.data(), 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferCopyRect(q, m, h, o, o, r, 0, 0, 0, 0, 0, nullptr, nullptr), want);
    EXPECT_EQ(t.Enqueue.pfnMemBufferMap(q, h, true, UR_MAP_FLAG_READ, 0, 8, 0, nullptr, nullptr, &p), want);
    EXPECT_EQ(t.Enqueue.pfnMemUnmap(q, h, host.data(), 0, nullptr, nullptr), want);
  }
  EXPECT_EQ(t.Enqueue.pfnMemBufferRead(nullptr, m, true, 0, 8, host.data(), 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferRead(q, m, true, 0, 8, nullptr, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(t.Enqueue.pfnMemBufferRead(q, m, true, 0, 8, host.data(), 1, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
  // Empty ranges are refused like ranges past the end (clEnqueue*Buffer's rule).
  EXPECT_EQ(t.Enqueue.pfnMemBufferRead(q, m, true, 0, 0, host.data(), 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferWrite(q, m, true, 256, 0, host.data(), 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferCopy(q, m, m, 0, 128, 0, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferMap(q, m, true, UR_MAP_FLAG_READ, 0, 0, 0, nullptr, nullptr, &p),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferMap(q, m, true, UR_MAP_FLAG_READ | UR_MAP_FLAG_WRITE_INVALIDATE_REGION, 0, 8, 0,
                                      nullptr, nullptr, &p),
            UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(t.Mem.pfnGetInfo(m, UR_MEM_INFO_FORCE_UINT32, sizeof v, &v, nullptr), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(t.Mem.pfnGetInfo(m, UR_MEM_INFO_SIZE, 0, &v, nullptr), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(t.Mem.pfnGetInfo(m, UR_MEM_INFO_SIZE, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(t.Mem.pfnGetNativeHandle(m, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(t.Mem.pfnGetNativeHandle(m, reinterpret_cast<ur_device_handle_t>(&bogus_storage), &nh),
            UR_RESULT_ERROR_INVALID_DEVICE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferMap(q, m, true, 1u << 3, 0, 8, 0, nullptr, nullptr, &p),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(t.Enqueue.pfnMemBufferMap(q, m, true, UR_MAP_FLAG_READ, 0, 8, 0, nullptr, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(t.Enqueue.pfnMemUnmap(q, m, nullptr, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(refs(m), 1u) << "nothing retained or released";
}

TEST_F(NativeCpuMemory, RectAndFillRulesAreChecked) {
  ur_queue_handle_t q = make_queue();
  ur_mem_handle_t m = buffer(4096), other = buffer(4096);
  auto &t = T(q);
  std::vector<char> host(4096);
  const ur_rect_offset_t o{0, 0, 0};
  auto rd = [&](ur_rect_region_t r, size_t brow, size_t bslice, size_t hrow, size_t hslice) {
    return t.Enqueue.pfnMemBufferReadRect(q, m, true, o, o, r, brow, bslice, hrow, hslice, host.data(), 0, nullptr,
                                          nullptr);
  };
  for (ur_rect_region_t r : {ur_rect_region_t{0, 1, 1}, ur_rect_region_t{1, 0, 1}, ur_rect_region_t{1, 1, 0}})
    EXPECT_EQ(rd(r, 0, 0, 0, 0), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 7, 0, 0, 0), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 0, 0, 7, 0), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 8, 15, 0, 0), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 8, 20, 0, 0), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 0, 0, 0, 12), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 0, 0, 0, 20), UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(rd({8, 2, 2}, 8, 16, 8, 32), UR_RESULT_SUCCESS);
  // Offsets that overflow are out of range, not a wrap-around.
  EXPECT_EQ(t.Enqueue.pfnMemBufferReadRect(q, m, true, {0, SIZE_MAX / 2, 0}, o, {8, 1, 1}, 8, 0, 0, 0, host.data(), 0,
                                           nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  EXPECT_EQ(t.Enqueue.pfnMemBufferCopyRect(q, m, other, o, o, {SIZE_MAX / 4, 5, 1}, 0, 0, 0, 0, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_SIZE);
  const uint64_t pattern = 0;
  EXPECT_EQ(t.Enqueue.pfnMemBufferFill(q, m, nullptr, 4, 0, 64, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  const std::vector<std::tuple<size_t, size_t, size_t>> bad_fills = {
      {0, 0, 64}, {4, 0, 0}, {8, 0, 4}, {3, 0, 63}, {4, 0, 62}, {4, 2, 64}, {4, 4096, 4}, {4, 4092, 8}};
  for (auto [ps, off, size] : bad_fills)
    EXPECT_EQ(t.Enqueue.pfnMemBufferFill(q, m, &pattern, ps, off, size, 0, nullptr, nullptr),
              UR_RESULT_ERROR_INVALID_SIZE)
        << ps << " " << off << " " << size;
}

TEST_F(NativeCpuMemory, PartitionChecksEveryRule) {
  ur_mem_handle_t m = buffer(4096);
  auto &t = T(m);
  const size_t align = base_align();
  ur_mem_handle_t sub = nullptr;
  auto part = [&](ur_mem_flags_t flags, ur_buffer_create_type_t type, size_t origin, size_t size,
                  ur_mem_handle_t of = nullptr) {
    ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, origin, size};
    return t.Mem.pfnBufferPartition(of ? of : m, flags, type, &region, &sub);
  };
  const auto region_type = UR_BUFFER_CREATE_TYPE_REGION;
  EXPECT_EQ(t.Mem.pfnBufferPartition(m, 0, region_type, nullptr, &sub), UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(part(1u << 7, region_type, 0, 64), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(part(0, UR_BUFFER_CREATE_TYPE_FORCE_UINT32, 0, 64), UR_RESULT_ERROR_INVALID_ENUMERATION);
  EXPECT_EQ(part(0, region_type, 0, 0), UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
  EXPECT_EQ(part(0, region_type, 0, 4097), UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
  EXPECT_EQ(part(0, region_type, align, SIZE_MAX), UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
  EXPECT_EQ(part(0, region_type, align / 2, 64), UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET);
  EXPECT_EQ(part(UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER, region_type, 0, 64), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(part(UR_MEM_FLAG_READ_ONLY | UR_MEM_FLAG_WRITE_ONLY, region_type, 0, 64), UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(sub, nullptr);
  ASSERT_EQ(part(UR_MEM_FLAG_READ_ONLY, region_type, align, 64), UR_RESULT_SUCCESS);
  EXPECT_EQ(native(sub), native(m) + align);
  ur_mem_handle_t first = sub;
  sub = nullptr;
  EXPECT_EQ(part(0, region_type, 0, 32, first), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(sub, nullptr);
  EXPECT_EQ(refs(m), 1u) << "a sub-buffer's hold on its parent is not the user's count";
  EXPECT_EQ(T(first).Mem.pfnRelease(first), UR_RESULT_SUCCESS);
}

// ---- buffers are host memory -------------------------------------------------------------------

TEST_F(NativeCpuMemory, UseHostPointerIsTheMemoryEveryoneSees) {
  ur_queue_handle_t q = make_queue();
  std::vector<uint32_t> host(1024, 5);
  ur_mem_handle_t m = buffer(host.size() * 4, UR_MEM_FLAG_USE_HOST_POINTER, host.data());
  EXPECT_EQ(native(m), reinterpret_cast<char *>(host.data()));
  // A command writes the host memory itself; a kernel gets the host pointer.
  const uint32_t seven = 7;
  ur_event_handle_t filled = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferFill(q, m, &seven, 4, 0, 512 * 4, 0, nullptr, &filled), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Event.pfnWait(1, &filled), UR_RESULT_SUCCESS);
  EXPECT_TRUE(std::all_of(host.begin(), host.begin() + 512, [](uint32_t v) { return v == 7; }));
  EXPECT_TRUE(std::all_of(host.begin() + 512, host.end(), [](uint32_t v) { return v == 5; }));
  ur_kernel_handle_t inc = kernel(build_program(test_kernels_path()), "increment");
  size_t global = host.size();
  ASSERT_EQ(launch(q, inc, 1, &global, nullptr, {mem_arg(0, m)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  EXPECT_TRUE(std::all_of(host.begin(), host.begin() + 512, [](uint32_t v) { return v == 8; }));
  EXPECT_TRUE(std::all_of(host.begin() + 512, host.end(), [](uint32_t v) { return v == 6; }));
  release({filled});
}

TEST_F(NativeCpuMemory, AllocatedBuffersAreAlignedAndDistinct) {
  const size_t align = base_align();
  EXPECT_GE(align, 128u) << "at least OpenCL's long16";
  EXPECT_EQ(align & (align - 1), 0u);
  std::vector<char *> starts;
  for (size_t size : {size_t(1), size_t(3), size_t(64), size_t(1000), size_t(1) << 20}) {
    for (ur_mem_flags_t flags : {ur_mem_flags_t{0}, ur_mem_flags_t{UR_MEM_FLAG_ALLOC_HOST_POINTER}}) {
      ur_mem_handle_t m = buffer(size, flags);
      char *p = native(m);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << size;
      std::memset(p, 0x11, size); // all of it is ours
      starts.push_back(p);
    }
  }
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(std::adjacent_find(starts.begin(), starts.end()), starts.end());
}

// ---- native handles ----------------------------------------------------------------------------------

TEST_F(NativeCpuMemory, NativeHandleIntoABuffer) {
  ur_queue_handle_t q = make_queue();
  ur_mem_handle_t source = nullptr;
  ASSERT_EQ(T(context).Mem.pfnBufferCreate(context, 0, 1000, nullptr, &source), UR_RESULT_SUCCESS);
  char *bytes = native(source);
  std::iota(bytes, bytes + 1000, char(0));
  for (bool owned : {false, true}) {
    ur_mem_native_properties_t props{UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, nullptr, owned};
    ur_mem_handle_t view = nullptr;
    ASSERT_EQ(T(context).Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(bytes + 200), context,
                                                             &props, &view),
              UR_RESULT_SUCCESS);
    buffers.push_back(view);
    EXPECT_EQ(size_of(view), 800u) << "from the pointer to the end of the buffer";
    EXPECT_EQ(native(view), bytes + 200);
  }
  // The views keep the source's bytes after its last user reference; ownership of
  // another buffer's bytes stays with that buffer (nothing is freed twice).
  ASSERT_EQ(T(source).Mem.pfnRelease(source), UR_RESULT_SUCCESS);
  std::vector<char> out(800);
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferRead(q, buffers[0], true, 0, 800, out.data(), 0, nullptr, nullptr),
            UR_RESULT_SUCCESS);
  for (size_t i = 0; i < 800; ++i) ASSERT_EQ(out[i], char(200 + i)) << i;
}

TEST_F(NativeCpuMemory, NativeHandleFromUsm) {
  auto &t = T(context);
  void *usm = nullptr;
  ASSERT_EQ(t.USM.pfnDeviceAlloc(context, device, nullptr, nullptr, 4096, &usm), UR_RESULT_SUCCESS);
  char *base = static_cast<char *>(usm);
  ur_mem_native_properties_t not_owned{UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, nullptr, false};
  ur_mem_native_properties_t owned{UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, nullptr, true};
  ur_mem_handle_t m = nullptr;
  // An interior pointer: the rest of the allocation; it cannot be owned.
  ASSERT_EQ(
      t.Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(base + 96), context, &not_owned, &m),
      UR_RESULT_SUCCESS);
  EXPECT_EQ(size_of(m), 4096u - 96);
  EXPECT_EQ(T(m).Mem.pfnRelease(m), UR_RESULT_SUCCESS);
  m = nullptr;
  EXPECT_EQ(t.Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(base + 96), context, &owned, &m),
            UR_RESULT_ERROR_INVALID_VALUE);
  EXPECT_EQ(m, nullptr);
  // Unknown memory and null are no buffer; a null context or output is refused.
  int on_stack = 0;
  EXPECT_EQ(
      t.Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(&on_stack), context, nullptr, &m),
      UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(t.Mem.pfnBufferCreateWithNativeHandle(0, context, nullptr, &m), UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(t.Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(base), nullptr, nullptr, &m),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  EXPECT_EQ(
      t.Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(base), context, nullptr, nullptr),
      UR_RESULT_ERROR_INVALID_NULL_POINTER);
  // Owned from its first byte: the buffer frees the allocation when it goes.
  ASSERT_EQ(t.Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(base), context, &owned, &m),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(size_of(m), 4096u);
  ur_usm_type_t type = UR_USM_TYPE_FORCE_UINT32;
  ASSERT_EQ(t.USM.pfnGetMemAllocInfo(context, base, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(type, UR_USM_TYPE_DEVICE);
  EXPECT_EQ(T(m).Mem.pfnRelease(m), UR_RESULT_SUCCESS);
  ASSERT_EQ(t.USM.pfnGetMemAllocInfo(context, base, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(type, UR_USM_TYPE_UNKNOWN) << "the buffer freed the allocation it owned";
}

TEST_F(NativeCpuMemory, NativeHandleOfAnotherContextIsRefused) {
  ur_context_handle_t other = nullptr;
  ASSERT_EQ(T(device).Context.pfnCreate(1, &device, nullptr, &other), UR_RESULT_SUCCESS);
  ur_mem_handle_t m = buffer(256);
  ur_mem_handle_t view = nullptr;
  EXPECT_EQ(T(other).Mem.pfnBufferCreateWithNativeHandle(reinterpret_cast<ur_native_handle_t>(native(m)), other,
                                                         nullptr, &view),
            UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(view, nullptr);
  EXPECT_EQ(T(other).Context.pfnRelease(other), UR_RESULT_SUCCESS);
}

// ---- lifetimes and ordering --------------------------------------------------------------------------

TEST_F(NativeCpuMemory, PendingCommandsHoldReleasedBuffers) {
  ur_queue_handle_t q = make_queue();
  Gate gate;
  ur_event_handle_t held = gated(q, gate);
  ur_mem_handle_t a = nullptr, sub = nullptr;
  ASSERT_EQ(T(context).Mem.pfnBufferCreate(context, 0, 1 << 16, nullptr, &a), UR_RESULT_SUCCESS);
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 1024, 1024};
  ASSERT_EQ(T(a).Mem.pfnBufferPartition(a, 0, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub), UR_RESULT_SUCCESS);
  ur_mem_handle_t b = buffer(1 << 16);
  std::vector<uint8_t> in(1 << 16);
  std::iota(in.begin(), in.end(), uint8_t(3));
  const uint8_t nine = 9;
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferWrite(q, a, false, 0, in.size(), in.data(), 0, nullptr, nullptr),
            UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferFill(q, sub, &nine, 1, 0, 1024, 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferCopy(q, a, b, 0, 0, in.size(), 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  // Every user reference goes while nothing has run yet.
  ASSERT_EQ(T(sub).Mem.pfnRelease(sub), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(a).Mem.pfnRelease(a), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(a).Mem.pfnRetain(a), UR_RESULT_ERROR_INVALID_MEM_OBJECT) << "the user's handle is gone";
  gate.open();
  std::vector<uint8_t> out(in.size());
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferRead(q, b, true, 0, out.size(), out.data(), 0, nullptr, nullptr),
            UR_RESULT_SUCCESS);
  std::fill_n(in.begin() + 1024, 1024, 9);
  EXPECT_EQ(in, out);
  release({held});
}

TEST_F(NativeCpuMemory, NonBlockingMapReturnsAtOnce) {
  ur_queue_handle_t q = make_queue();
  ur_mem_handle_t m = buffer(4096);
  Gate gate;
  ur_event_handle_t held = gated(q, gate);
  std::vector<uint8_t> in(4096, 0x42);
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferWrite(q, m, false, 0, 4096, in.data(), 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  void *p = nullptr;
  ur_event_handle_t mapped = nullptr, unmapped = nullptr;
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferMap(q, m, false, UR_MAP_FLAG_READ, 96, 128, 0, nullptr, &mapped, &p),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(p, native(m) + 96) << "the buffer's own bytes, known before the map completes";
  EXPECT_NE(status(mapped), UR_EVENT_STATUS_COMPLETE);
  // An unmap may be enqueued at once, behind the map.
  ASSERT_EQ(T(q).Enqueue.pfnMemUnmap(q, m, p, 0, nullptr, &unmapped), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(q).Enqueue.pfnMemUnmap(q, m, p, 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_VALUE)
      << "one unmap per map";
  gate.open();
  ASSERT_EQ(T(q).Event.pfnWait(1, &mapped), UR_RESULT_SUCCESS);
  EXPECT_EQ(static_cast<uint8_t *>(p)[0], 0x42);
  ASSERT_EQ(T(q).Event.pfnWait(1, &unmapped), UR_RESULT_SUCCESS);
  release({held, mapped, unmapped});
}

TEST_F(NativeCpuMemory, FailedDependencies) {
  ur_queue_handle_t q = make_queue();
  ur_mem_handle_t m = buffer(256);
  std::vector<uint8_t> zeros(256, 0);
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferWrite(q, m, true, 0, 256, zeros.data(), 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  ur_kernel_handle_t fail_at = kernel(build_program(extra_kernels_path()), "fail_at");
  uint32_t bad = 0;
  size_t global = 64;
  ur_event_handle_t failed = nullptr;
  ASSERT_EQ(launch(q, fail_at, 1, &global, nullptr, {mem_arg(0, m), value_arg(1, 4, &bad)}, 0, nullptr, &failed),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(T(q).Event.pfnWait(1, &failed), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  // A wait list with a failed event is refused; the in-order queue is poisoned.
  std::vector<uint8_t> out(256, 0xEE);
  EXPECT_EQ(T(q).Enqueue.pfnMemBufferRead(q, m, true, 0, 256, out.data(), 1, &failed, nullptr),
            UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(T(q).Enqueue.pfnMemBufferRead(q, m, true, 0, 256, out.data(), 0, nullptr, nullptr),
            UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(out, std::vector<uint8_t>(256, 0xEE)) << "a command that did not run read nothing";
  void *p = nullptr;
  EXPECT_EQ(T(q).Enqueue.pfnMemBufferMap(q, m, true, UR_MAP_FLAG_READ, 0, 64, 0, nullptr, nullptr, &p),
            UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(T(q).Enqueue.pfnMemUnmap(q, m, native(m), 0, nullptr, nullptr), UR_RESULT_ERROR_INVALID_VALUE)
      << "a failed blocking map is not a map";
  // Another queue still works on the buffer, which the failed kernel did write in part.
  ur_queue_handle_t fresh = make_queue();
  ASSERT_EQ(T(fresh).Enqueue.pfnMemBufferRead(fresh, m, true, 0, 256, out.data(), 0, nullptr, nullptr),
            UR_RESULT_SUCCESS);
  release({failed});
}

// ---- overlapping copies --------------------------------------------------------------------------

TEST_F(NativeCpuMemory, OverlappingCopiesAreRefused) {
  // Every adapter refuses a copy whose two sides share a byte of one buffer
  // (ur_common/buffer_commands.hpp); nothing is written.
  ur_queue_handle_t q = make_queue();
  const size_t n = 1024;
  ur_mem_handle_t m = buffer(n);
  std::vector<uint8_t> in(n);
  std::iota(in.begin(), in.end(), uint8_t(0));
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferWrite(q, m, true, 0, n, in.data(), 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  // 1-D: [0, 600) to [100, 700).
  EXPECT_EQ(T(q).Enqueue.pfnMemBufferCopy(q, m, m, 0, 100, 600, 0, nullptr, nullptr),
            UR_RESULT_ERROR_OVERLAPPING_REGIONS);
  // A rectangle moved one row down and 4 bytes right within itself (rows of 32).
  const ur_rect_region_t region{16, 10, 1};
  EXPECT_EQ(T(q).Enqueue.pfnMemBufferCopyRect(q, m, m, {2, 3, 0}, {6, 4, 0}, region, 32, 0, 32, 0, 0, nullptr, nullptr),
            UR_RESULT_ERROR_OVERLAPPING_REGIONS);
  std::vector<uint8_t> out(n);
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferRead(q, m, true, 0, n, out.data(), 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(in, out);
  // Rows of 32 bytes, columns [0, 16) to [16, 32): interleaved, no byte shared.
  ASSERT_EQ(
      T(q).Enqueue.pfnMemBufferCopyRect(q, m, m, {0, 0, 0}, {16, 0, 0}, region, 32, 0, 32, 0, 0, nullptr, nullptr),
      UR_RESULT_SUCCESS);
  std::vector<uint8_t> expect = in;
  for (size_t y = 0; y < region.height; ++y)
    for (size_t x = 0; x < region.width; ++x) expect[y * 32 + 16 + x] = in[y * 32 + x];
  ASSERT_EQ(T(q).Enqueue.pfnMemBufferRead(q, m, true, 0, n, out.data(), 0, nullptr, nullptr), UR_RESULT_SUCCESS);
  EXPECT_EQ(expect, out);
}

// ---- kernel arguments ------------------------------------------------------------------------------------

TEST_F(NativeCpuMemory, KernelArgumentRules) {
  ur_queue_handle_t q = make_queue();
  ur_program_handle_t p = build_program(test_kernels_path());
  ur_kernel_handle_t fill = kernel(p, "fill"), local_sum = kernel(p, "local_sum");
  ur_mem_handle_t m = buffer(256);
  size_t global = 64, local = 64;
  const uint32_t value = 3;
  int bogus[4] = {};
  EXPECT_EQ(launch(q, fill, 1, &global, nullptr,
                   {mem_arg(0, reinterpret_cast<ur_mem_handle_t>(&bogus)), value_arg(1, 4, &value)}),
            UR_RESULT_ERROR_INVALID_MEM_OBJECT);
  EXPECT_EQ(launch(q, fill, 1, &global, nullptr, {mem_arg(0, m, 1u << 9), value_arg(1, 4, &value)}),
            UR_RESULT_ERROR_INVALID_ENUMERATION);
  ur_context_handle_t other = nullptr;
  ASSERT_EQ(T(device).Context.pfnCreate(1, &device, nullptr, &other), UR_RESULT_SUCCESS);
  ur_mem_handle_t foreign = nullptr;
  ASSERT_EQ(T(other).Mem.pfnBufferCreate(other, 0, 256, nullptr, &foreign), UR_RESULT_SUCCESS);
  EXPECT_EQ(launch(q, fill, 1, &global, nullptr, {mem_arg(0, foreign), value_arg(1, 4, &value)}),
            UR_RESULT_ERROR_INVALID_MEM_OBJECT)
      << "a buffer of another context";
  EXPECT_EQ(T(foreign).Mem.pfnRelease(foreign), UR_RESULT_SUCCESS);
  EXPECT_EQ(T(other).Context.pfnRelease(other), UR_RESULT_SUCCESS);
  EXPECT_EQ(launch(q, fill, 1, &global, nullptr, {mem_arg(2, m), value_arg(1, 4, &value)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
  EXPECT_EQ(launch(q, fill, 1, &global, nullptr, {mem_arg(1, m), mem_arg(0, m)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
      << "a buffer where a 4-byte value is expected";
  ur_mem_handle_t out = buffer(4);
  EXPECT_EQ(launch(q, local_sum, 1, &global, &local, {mem_arg(0, m), mem_arg(1, out), mem_arg(2, m)}),
            UR_RESULT_ERROR_INVALID_KERNEL_ARGS)
      << "a buffer for local memory";
  ASSERT_EQ(launch(q, fill, 1, &global, nullptr, {mem_arg(0, m), value_arg(1, 4, &value)}), UR_RESULT_SUCCESS);
  ASSERT_EQ(T(q).Queue.pfnFinish(q), UR_RESULT_SUCCESS);
  const uint32_t *words = reinterpret_cast<const uint32_t *>(native(m));
  EXPECT_TRUE(std::all_of(words, words + 64, [](uint32_t v) { return v == 3; }));
  EXPECT_EQ(refs(m), 1u) << "the launch's hold on the buffer is gone with the launch";
}

TEST_F(NativeCpuMemory, NullBufferArgumentIsANullPointer) {
  ur_queue_handle_t q = make_queue();
  ur_kernel_handle_t fail_at = kernel(build_program(extra_kernels_path()), "fail_at");
  // fail_at returns before writing in the work-item `bad`: one item that never writes.
  const uint32_t bad = 0;
  size_t global = 1;
  ur_event_handle_t e = nullptr;
  ASSERT_EQ(launch(q, fail_at, 1, &global, nullptr, {mem_arg(0, nullptr), value_arg(1, 4, &bad)}, 0, nullptr, &e),
            UR_RESULT_SUCCESS);
  EXPECT_EQ(T(q).Event.pfnWait(1, &e), UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS) << "it ran, and failed as asked";
  release({e});
}

// ---- concurrency ----------------------------------------------------------------------------------------------

TEST_F(NativeCpuMemory, ConcurrentCreateAndRelease) {
  const int threads = 4, rounds = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto &d = T(context);
      for (int i = 0; i < rounds; ++i) {
        ur_mem_handle_t m = nullptr, sub = nullptr, view = nullptr;
        if (d.Mem.pfnBufferCreate(context, 0, 4096 + t, nullptr, &m) != UR_RESULT_SUCCESS) {
          ++failures;
          continue;
        }
        ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, 1024};
        ur_native_handle_t h = 0;
        if (d.Mem.pfnBufferPartition(m, 0, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub) != UR_RESULT_SUCCESS ||
            d.Mem.pfnGetNativeHandle(sub, nullptr, &h) != UR_RESULT_SUCCESS ||
            d.Mem.pfnBufferCreateWithNativeHandle(h, context, nullptr, &view) != UR_RESULT_SUCCESS)
          ++failures;
        // Release in an order that leaves the views holding the parent last.
        if (d.Mem.pfnRelease(m) != UR_RESULT_SUCCESS) ++failures;
        if (sub && d.Mem.pfnRelease(sub) != UR_RESULT_SUCCESS) ++failures;
        if (view && d.Mem.pfnRelease(view) != UR_RESULT_SUCCESS) ++failures;
      }
    });
  for (auto &th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
}

} // namespace
