// SPDX-License-Identifier: Apache-2.0
// Memory objects: buffers and sub-buffers (urMem*), their commands (urEnqueueMemBuffer*,
// urEnqueueMemUnmap) and buffers as kernel arguments, with the data checked after every
// operation and what each function must refuse. An adapter without memory objects
// (urMemBufferCreate answers UR_RESULT_ERROR_UNSUPPORTED_FEATURE) skips all of them, and
// one without the rectangle commands skips those, saying so.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "conformance.hpp"

namespace {

using conf::arg_value;
using Query = const urinfo::InfoQuery *;

uint32_t mem_refs(ur_mem_handle_t m) {
  uint32_t n = 0;
  EXPECT_SUCCESS(urMemGetInfo(m, UR_MEM_INFO_REFERENCE_COUNT, sizeof n, &n, nullptr));
  return n;
}

size_t mem_size(ur_mem_handle_t m) {
  size_t n = 0;
  EXPECT_SUCCESS(urMemGetInfo(m, UR_MEM_INFO_SIZE, sizeof n, &n, nullptr));
  return n;
}

// Bytes that differ from their neighbours and from the fill patterns used below.
std::vector<uint8_t> bytes(size_t n, uint8_t seed = 1) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return v;
}

ur_exp_kernel_arg_properties_t arg_mem(uint32_t index, ur_mem_handle_t m,
                                       ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ;
  a.index = index;
  a.size = sizeof(ur_mem_handle_t);
  a.value.memObjTuple = {m, flags};
  return a;
}

// Skips a test whose device has no memory objects; returns false then.
ur_result_t probe_buffers(ur_context_handle_t context) {
  ur_mem_handle_t probe = nullptr;
  ur_result_t r = urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 64, nullptr, &probe);
  if (r == UR_RESULT_SUCCESS) urMemRelease(probe);
  return r;
}

#define CONF_SKIP_WITHOUT_BUFFERS()                                                                                    \
  do {                                                                                                                 \
    ur_result_t conf_probe_ = probe_buffers(this->context);                                                            \
    if (conf_probe_ == UR_RESULT_ERROR_UNSUPPORTED_FEATURE)                                                            \
      GTEST_SKIP() << "memory objects unsupported on " << this->found().label()                                        \
                   << ": urMemBufferCreate answers UR_RESULT_ERROR_UNSUPPORTED_FEATURE";                               \
    ASSERT_SUCCESS(conf_probe_);                                                                                       \
  } while (0)

// Buffers made through buffer() are released at the end of the test.
class urMemBufferTest : public conf::QueueTest {
protected:
  std::vector<ur_mem_handle_t> owned;

  void SetUp() override {
    CONF_BASE_SETUP(conf::QueueTest);
    CONF_SKIP_WITHOUT_BUFFERS();
  }
  void TearDown() override {
    if (queue) urQueueFinish(queue);
    for (ur_mem_handle_t m : owned) EXPECT_SUCCESS(urMemRelease(m));
    conf::QueueTest::TearDown();
  }
  ur_mem_handle_t buffer(size_t size, ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE, void *host = nullptr) {
    ur_buffer_properties_t props{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host};
    ur_mem_handle_t m = nullptr;
    ur_result_t r = urMemBufferCreate(context, flags, size, host ? &props : nullptr, &m);
    EXPECT_SUCCESS(r) << "urMemBufferCreate of " << size << " bytes, flags " << flags;
    if (m) owned.push_back(m);
    return m;
  }
  ur_mem_handle_t sub_buffer(ur_mem_handle_t parent, size_t origin, size_t size,
                             ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE) {
    ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, origin, size};
    ur_mem_handle_t m = nullptr;
    EXPECT_SUCCESS(urMemBufferPartition(parent, flags, UR_BUFFER_CREATE_TYPE_REGION, &region, &m))
        << "sub-buffer [" << origin << ", +" << size << ")";
    if (m) owned.push_back(m);
    return m;
  }
  std::vector<uint8_t> read(ur_mem_handle_t m, size_t offset, size_t size) {
    std::vector<uint8_t> out(size, 0xEE);
    EXPECT_SUCCESS(urEnqueueMemBufferRead(queue, m, true, offset, size, out.data(), 0, nullptr, nullptr));
    return out;
  }
  void write(ur_mem_handle_t m, size_t offset, const std::vector<uint8_t> &data) {
    ASSERT_SUCCESS(urEnqueueMemBufferWrite(queue, m, true, offset, data.size(), data.data(), 0, nullptr, nullptr));
  }
  // UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN in bytes: a sub-buffer's origin is a multiple of it.
  size_t base_align() {
    uint32_t bits = 0;
    EXPECT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, bits));
    return std::max<size_t>(1, bits / 8);
  }
  ur_command_t command_of(ur_event_handle_t e) {
    ur_command_t c = UR_COMMAND_FORCE_UINT32;
    EXPECT_SUCCESS(urEventGetInfo(e, UR_EVENT_INFO_COMMAND_TYPE, sizeof c, &c, nullptr));
    return c;
  }
};

// ---- creation -------------------------------------------------------------------------------------

TEST_P(urMemBufferTest, EveryAccessFlag) {
  const size_t n = 4096;
  for (ur_mem_flags_t flags :
       {ur_mem_flags_t{0}, ur_mem_flags_t{UR_MEM_FLAG_READ_WRITE}, ur_mem_flags_t{UR_MEM_FLAG_WRITE_ONLY},
        ur_mem_flags_t{UR_MEM_FLAG_READ_ONLY}, ur_mem_flags_t{UR_MEM_FLAG_ALLOC_HOST_POINTER},
        ur_mem_flags_t{UR_MEM_FLAG_READ_ONLY | UR_MEM_FLAG_ALLOC_HOST_POINTER}}) {
    ur_mem_handle_t m = buffer(n, flags);
    ASSERT_NE(nullptr, m) << "flags " << flags;
    EXPECT_EQ(n, mem_size(m)) << "flags " << flags;
    EXPECT_EQ(1u, mem_refs(m)) << "flags " << flags;
    // The access flags describe kernels; the host reads and writes every buffer.
    std::vector<uint8_t> in = bytes(n, static_cast<uint8_t>(flags));
    write(m, 0, in);
    EXPECT_EQ(in, read(m, 0, n)) << "flags " << flags;
  }
}

TEST_P(urMemBufferTest, UseHostPointerIsTheHostMemory) {
  const size_t n = 1024;
  std::vector<uint8_t> host = bytes(n, 3);
  ur_mem_handle_t m = buffer(n, UR_MEM_FLAG_USE_HOST_POINTER, host.data());
  ASSERT_NE(nullptr, m);
  EXPECT_EQ(bytes(n, 3), read(m, 0, n)) << "the buffer starts with the host memory's bytes";
  std::vector<uint8_t> in = bytes(256, 90);
  write(m, 128, in);
  // A map of a USE_HOST_POINTER buffer is derived from the host pointer, and shows the
  // buffer's bytes in the host memory.
  void *p = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ, 64, 512, 0, nullptr, nullptr, &p));
  EXPECT_EQ(static_cast<void *>(host.data() + 64), p);
  EXPECT_TRUE(std::equal(in.begin(), in.end(), host.begin() + 128));
  ASSERT_SUCCESS(urEnqueueMemUnmap(queue, m, p, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

TEST_P(urMemBufferTest, AllocCopyHostPointerCopiesAtCreation) {
  const size_t n = 2048;
  for (ur_mem_flags_t flags : {ur_mem_flags_t{UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER},
                               ur_mem_flags_t{UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER | UR_MEM_FLAG_ALLOC_HOST_POINTER},
                               ur_mem_flags_t{UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER | UR_MEM_FLAG_READ_ONLY}}) {
    std::vector<uint8_t> host = bytes(n, 5);
    ur_mem_handle_t m = buffer(n, flags, host.data());
    ASSERT_NE(nullptr, m);
    std::fill(host.begin(), host.end(), 0); // the buffer has its own copy
    EXPECT_EQ(bytes(n, 5), read(m, 0, n)) << "flags " << flags;
  }
}

TEST_P(urMemBufferTest, BuffersAreDistinct) {
  const size_t n = 512;
  ur_mem_handle_t a = buffer(n), b = buffer(n);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  write(a, 0, bytes(n, 1));
  write(b, 0, bytes(n, 2));
  EXPECT_EQ(bytes(n, 1), read(a, 0, n));
  EXPECT_EQ(bytes(n, 2), read(b, 0, n));
}

// What the adapter must refuse by itself (no parameter rule covers it).
TEST_P(urMemBufferTest, CreateRefusesContradictoryFlags) {
  std::vector<uint8_t> host(64);
  ur_buffer_properties_t props{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data()};
  ur_mem_handle_t m = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urMemBufferCreate(context, UR_MEM_FLAG_READ_ONLY | UR_MEM_FLAG_WRITE_ONLY, 64, nullptr, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE | UR_MEM_FLAG_READ_ONLY, 64, nullptr, &m));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_VALUE,
      urMemBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER | UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER, 64, &props, &m));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_VALUE,
      urMemBufferCreate(context, UR_MEM_FLAG_USE_HOST_POINTER | UR_MEM_FLAG_ALLOC_HOST_POINTER, 64, &props, &m));
  EXPECT_EQ(nullptr, m);
}

TEST_P(urMemBufferTest, CreateRefusesMoreThanMaxAllocSize) {
  uint64_t max_alloc = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, max_alloc));
  if (max_alloc >= SIZE_MAX) GTEST_SKIP() << "UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE is the whole address space";
  ur_mem_handle_t m = nullptr;
  ur_result_t r = urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, static_cast<size_t>(max_alloc) + 1, nullptr, &m);
  if (r == UR_RESULT_SUCCESS) {
    urMemRelease(m);
    FAIL() << "a buffer past UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE was created";
  }
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, r);
}

TEST_P(urMemBufferTest, CreateParameterRules) {
  CONF_REQUIRE_VALIDATION();
  std::vector<uint8_t> host(64);
  ur_buffer_properties_t with_host{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, host.data()};
  ur_buffer_properties_t without_host{UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, nullptr, nullptr};
  ur_mem_handle_t m = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urMemBufferCreate(nullptr, 0, 64, nullptr, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urMemBufferCreate(context, 0, 64, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION, urMemBufferCreate(context, 1u << 6, 64, nullptr, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urMemBufferCreate(context, UR_MEM_FLAG_FORCE_UINT32, 64, nullptr, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, urMemBufferCreate(context, 0, 0, nullptr, &m));
  for (ur_mem_flags_t f : {UR_MEM_FLAG_USE_HOST_POINTER, UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER}) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_HOST_PTR, urMemBufferCreate(context, f, 64, nullptr, &m));
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_HOST_PTR, urMemBufferCreate(context, f, 64, &without_host, &m));
  }
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_HOST_PTR,
                   urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 64, &with_host, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_HOST_PTR,
                   urMemBufferCreate(context, UR_MEM_FLAG_ALLOC_HOST_POINTER, 64, &with_host, &m));
  EXPECT_EQ(nullptr, m);
}

// ---- reference counts and lifetimes -----------------------------------------------------------

TEST_P(urMemBufferTest, RetainAndRelease) {
  ur_mem_handle_t m = nullptr;
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 256, nullptr, &m));
  EXPECT_EQ(1u, mem_refs(m));
  ASSERT_SUCCESS(urMemRetain(m));
  ASSERT_SUCCESS(urMemRetain(m));
  EXPECT_EQ(3u, mem_refs(m));
  ASSERT_SUCCESS(urMemRelease(m));
  EXPECT_EQ(2u, mem_refs(m));
  ASSERT_SUCCESS(urMemRelease(m));
  write(m, 0, bytes(256)); // still a live buffer
  EXPECT_EQ(bytes(256), read(m, 0, 256));
  ASSERT_SUCCESS(urMemRelease(m));
}

TEST_P(urMemBufferTest, BufferHoldsItsContext) {
  ur_mem_handle_t m = buffer(64);
  ASSERT_NE(nullptr, m);
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urMemGetInfo(m, UR_MEM_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
}

TEST_P(urMemBufferTest, ReleasedWhileCommandsPending) {
  const size_t n = 1 << 20;
  ur_mem_handle_t a = nullptr, b = buffer(n);
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, n, nullptr, &a));
  const uint32_t pattern = 0x5A5AA5A5;
  ur_event_handle_t filled = nullptr, copied = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, a, &pattern, 4, 0, n, 0, nullptr, &filled));
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, a, b, 0, 0, n, 1, &filled, &copied));
  ASSERT_SUCCESS(urMemRelease(a)); // the commands still hold it
  ASSERT_SUCCESS(urEventWait(1, &copied));
  std::vector<uint8_t> out = read(b, 0, n);
  for (size_t i = 0; i < n; i += 4) {
    uint32_t v;
    std::memcpy(&v, &out[i], 4);
    ASSERT_EQ(pattern, v) << "byte " << i;
  }
  EXPECT_SUCCESS(urEventRelease(filled));
  EXPECT_SUCCESS(urEventRelease(copied));
}

// ---- info ---------------------------------------------------------------------------------------

// The queries of ur_mem_info_t: the generated tables' if they list the enumeration,
// else these (the same facts, from ur_api.h).
const urinfo::InfoQuery kMemInfoQueries[] = {
    {"UR_MEM_INFO_SIZE", UR_MEM_INFO_SIZE, "size_t", urinfo::ValueKind::Unsigned, sizeof(size_t), 1, nullptr},
    {"UR_MEM_INFO_CONTEXT", UR_MEM_INFO_CONTEXT, "ur_context_handle_t", urinfo::ValueKind::Handle,
     sizeof(ur_context_handle_t), 1, nullptr},
    {"UR_MEM_INFO_REFERENCE_COUNT", UR_MEM_INFO_REFERENCE_COUNT, "uint32_t", urinfo::ValueKind::Unsigned,
     sizeof(uint32_t), 1, nullptr},
};
std::vector<Query> mem_info_queries() {
  if (urinfo::find_info_table("ur_mem_info_t")) return conf::queries_of("ur_mem_info_t");
  std::vector<Query> out;
  for (const urinfo::InfoQuery &q : kMemInfoQueries) out.push_back(&q);
  return out;
}

using urMemGetInfoTest = conf::ContextTestWith<Query>;

TEST_P(urMemGetInfoTest, Query) {
  CONF_SKIP_WITHOUT_BUFFERS();
  ur_mem_handle_t m = nullptr;
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 4096, nullptr, &m));
  const urinfo::InfoQuery &q = *std::get<1>(GetParam());
  conf::check_info_query(q,
                         [m](uint32_t id, size_t size, void *value, size_t *ret) {
                           return urMemGetInfo(m, static_cast<ur_mem_info_t>(id), size, value, ret);
                         },
                         {});
  EXPECT_SUCCESS(urMemRelease(m));
}

CONF_INSTANTIATE_DEVICE_SUITE_WITH(urMemGetInfoTest, Query, ::testing::ValuesIn(mem_info_queries()), conf::QueryNamer);

TEST_P(urMemBufferTest, InfoValues) {
  const size_t align = base_align();
  ur_mem_handle_t m = buffer(4 * align);
  ASSERT_NE(nullptr, m);
  ur_mem_handle_t s = sub_buffer(m, align, 2 * align);
  ASSERT_NE(nullptr, s);
  EXPECT_EQ(4 * align, mem_size(m));
  EXPECT_EQ(2 * align, mem_size(s));
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urMemGetInfo(s, UR_MEM_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  EXPECT_EQ(1u, mem_refs(s));
  size_t size_ret = 0;
  ASSERT_SUCCESS(urMemGetInfo(m, UR_MEM_INFO_SIZE, 0, nullptr, &size_ret));
  EXPECT_EQ(sizeof(size_t), size_ret);
  size_t too_small = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urMemGetInfo(m, UR_MEM_INFO_SIZE, 1, &too_small, nullptr));
}

TEST_P(urMemBufferTest, InfoParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t m = buffer(64);
  ASSERT_NE(nullptr, m);
  size_t v = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urMemGetInfo(nullptr, UR_MEM_INFO_SIZE, sizeof v, &v, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urMemGetInfo(m, UR_MEM_INFO_FORCE_UINT32, sizeof v, &v, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urMemGetInfo(m, UR_MEM_INFO_SIZE, 0, &v, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urMemGetInfo(m, UR_MEM_INFO_SIZE, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urMemRetain(nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urMemRelease(nullptr));
}

// ---- sub-buffers ----------------------------------------------------------------------------------

TEST_P(urMemBufferTest, SubBufferIsAViewOfItsParent) {
  const size_t align = base_align(), n = 8 * align;
  ur_mem_handle_t parent = buffer(n);
  ASSERT_NE(nullptr, parent);
  std::vector<uint8_t> in = bytes(n, 11);
  write(parent, 0, in);
  ur_mem_handle_t sub = sub_buffer(parent, 2 * align, 3 * align);
  ASSERT_NE(nullptr, sub);
  EXPECT_EQ(std::vector<uint8_t>(in.begin() + 2 * align, in.begin() + 5 * align), read(sub, 0, 3 * align));
  // Writes through the sub-buffer land in the parent at the sub-buffer's origin.
  const uint8_t zero = 0;
  ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, sub, &zero, 1, align, align, 0, nullptr, nullptr));
  std::vector<uint8_t> out = read(parent, 0, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ((i >= 3 * align && i < 4 * align) ? 0 : in[i], out[i]) << "byte " << i;
  // And the parent's writes show through the sub-buffer.
  write(parent, 2 * align, bytes(align, 200));
  EXPECT_EQ(bytes(align, 200), read(sub, 0, align));
}

TEST_P(urMemBufferTest, SubBufferKeepsItsParent) {
  const size_t align = base_align();
  ur_mem_handle_t parent = nullptr;
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, 4 * align, nullptr, &parent));
  write(parent, 0, bytes(4 * align, 9));
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, align, 2 * align};
  ur_mem_handle_t sub = nullptr;
  ASSERT_SUCCESS(urMemBufferPartition(parent, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  ASSERT_SUCCESS(urMemRelease(parent));
  std::vector<uint8_t> all = bytes(4 * align, 9);
  EXPECT_EQ(std::vector<uint8_t>(all.begin() + align, all.begin() + 3 * align), read(sub, 0, 2 * align));
  write(sub, 0, bytes(2 * align, 77));
  EXPECT_EQ(bytes(2 * align, 77), read(sub, 0, 2 * align));
  ASSERT_SUCCESS(urMemRelease(sub));
}

TEST_P(urMemBufferTest, SubBufferAccessFlags) {
  const size_t align = base_align();
  ur_mem_handle_t ro = buffer(2 * align, UR_MEM_FLAG_READ_ONLY);
  ASSERT_NE(nullptr, ro);
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, align};
  ur_mem_handle_t sub = nullptr;
  // A read-only buffer's sub-buffer may not be writable by kernels.
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urMemBufferPartition(ro, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE,
                   urMemBufferPartition(ro, UR_MEM_FLAG_WRITE_ONLY, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  EXPECT_EQ(nullptr, sub);
  EXPECT_NE(nullptr, sub_buffer(ro, 0, align, UR_MEM_FLAG_READ_ONLY));
  EXPECT_NE(nullptr, sub_buffer(ro, align, align, 0)) << "no access flag: the parent's";
  // A read-write buffer's sub-buffers may narrow the access.
  ur_mem_handle_t rw = buffer(2 * align);
  ASSERT_NE(nullptr, rw);
  EXPECT_NE(nullptr, sub_buffer(rw, 0, align, UR_MEM_FLAG_READ_ONLY));
  EXPECT_NE(nullptr, sub_buffer(rw, align, align, UR_MEM_FLAG_WRITE_ONLY));
}

TEST_P(urMemBufferTest, PartitionRefusals) {
  const size_t align = base_align();
  ur_mem_handle_t parent = buffer(4 * align);
  ASSERT_NE(nullptr, parent);
  ur_mem_handle_t m = nullptr;
  auto partition = [&](size_t origin, size_t size, ur_mem_flags_t flags = UR_MEM_FLAG_READ_WRITE,
                       ur_mem_handle_t of = nullptr) {
    ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, origin, size};
    return urMemBufferPartition(of ? of : parent, flags, UR_BUFFER_CREATE_TYPE_REGION, &region, &m);
  };
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, partition(0, 4 * align + 1));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, partition(2 * align, 2 * align + 1));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, partition(8 * align, 1));
  if (align > 1) {
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET, partition(align / 2, align));
  }
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, partition(0, align, UR_MEM_FLAG_ALLOC_HOST_POINTER));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, partition(0, align, UR_MEM_FLAG_USE_HOST_POINTER));
  EXPECT_EQ(nullptr, m);
  ur_mem_handle_t sub = sub_buffer(parent, align, 2 * align);
  ASSERT_NE(nullptr, sub);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT, partition(0, align, UR_MEM_FLAG_READ_WRITE, sub))
      << "no sub-buffer of a sub-buffer";
  EXPECT_EQ(nullptr, m);
}

TEST_P(urMemBufferTest, PartitionParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t parent = buffer(4096);
  ASSERT_NE(nullptr, parent);
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, 1024};
  ur_buffer_region_t empty{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, 0, 0};
  ur_mem_handle_t m = nullptr;
  const auto rw = UR_MEM_FLAG_READ_WRITE;
  const auto type = UR_BUFFER_CREATE_TYPE_REGION;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urMemBufferPartition(nullptr, rw, type, &region, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urMemBufferPartition(parent, rw, type, nullptr, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urMemBufferPartition(parent, rw, type, &region, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urMemBufferPartition(parent, UR_MEM_FLAG_FORCE_UINT32, type, &region, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urMemBufferPartition(parent, rw, UR_BUFFER_CREATE_TYPE_FORCE_UINT32, &region, &m));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, urMemBufferPartition(parent, rw, type, &empty, &m));
  EXPECT_EQ(nullptr, m);
}

// ---- native handles -------------------------------------------------------------------------------

TEST_P(urMemBufferTest, NativeHandleRoundTrip) {
  const size_t n = 4096;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  write(m, 0, bytes(n, 21));
  ur_native_handle_t native = 0;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urMemGetNativeHandle(m, device(), &native));
  ur_native_handle_t again = 0;
  ASSERT_SUCCESS(urMemGetNativeHandle(m, nullptr, &again));
  EXPECT_EQ(native, again) << "the device is optional and names the same memory";
  ur_mem_native_properties_t props{UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, nullptr, false};
  ur_mem_handle_t view = nullptr;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urMemBufferCreateWithNativeHandle(native, context, &props, &view));
  EXPECT_EQ(n, mem_size(view));
  ur_context_handle_t c = nullptr;
  ASSERT_SUCCESS(urMemGetInfo(view, UR_MEM_INFO_CONTEXT, sizeof c, &c, nullptr));
  EXPECT_EQ(context, c);
  // One memory, two handles: each sees what the other writes.
  EXPECT_EQ(bytes(n, 21), read(view, 0, n));
  write(view, 100, bytes(50, 99));
  std::vector<uint8_t> expect = bytes(n, 21);
  std::copy_n(bytes(50, 99).begin(), 50, expect.begin() + 100);
  EXPECT_EQ(expect, read(m, 0, n));
  EXPECT_SUCCESS(urMemRelease(view));
  EXPECT_EQ(expect, read(m, 0, n)) << "releasing the second handle leaves the buffer";
}

TEST_P(urMemBufferTest, NativeHandleParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t m = buffer(64);
  ASSERT_NE(nullptr, m);
  ur_native_handle_t native = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urMemGetNativeHandle(nullptr, device(), &native));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urMemGetNativeHandle(m, device(), nullptr));
  ur_mem_handle_t view = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urMemBufferCreateWithNativeHandle(native, nullptr, nullptr, &view));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urMemBufferCreateWithNativeHandle(native, context, nullptr, nullptr));
}

// ---- read and write -------------------------------------------------------------------------------

TEST_P(urMemBufferTest, WriteAndReadRanges) {
  const size_t n = 1 << 16;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 31);
  write(m, 0, in);
  EXPECT_EQ(in, read(m, 0, n));
  for (size_t offset : {size_t(1), size_t(333), n - 1}) {
    size_t size = std::min<size_t>(n - offset, 1000);
    EXPECT_EQ(std::vector<uint8_t>(in.begin() + offset, in.begin() + offset + size), read(m, offset, size))
        << "offset " << offset;
  }
  std::vector<uint8_t> patch = bytes(777, 140);
  write(m, 4001, patch);
  std::copy(patch.begin(), patch.end(), in.begin() + 4001);
  EXPECT_EQ(in, read(m, 0, n));
}

TEST_P(urMemBufferTest, NonBlockingWithEvents) {
  const size_t n = 1 << 18;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 41), out(n, 0);
  ur_event_handle_t wrote = nullptr, was_read = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferWrite(queue, m, false, 0, n, in.data(), 0, nullptr, &wrote));
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, m, false, 0, n, out.data(), 1, &wrote, &was_read));
  ASSERT_SUCCESS(urEventWait(1, &was_read));
  EXPECT_EQ(UR_EVENT_STATUS_COMPLETE, conf::event_status(wrote));
  EXPECT_EQ(in, out);
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_WRITE, command_of(wrote));
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_READ, command_of(was_read));
  EXPECT_SUCCESS(urEventRelease(wrote));
  EXPECT_SUCCESS(urEventRelease(was_read));
}

TEST_P(urMemBufferTest, ReadWriteOutOfRange) {
  const size_t n = 1024;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  write(m, 0, bytes(n));
  std::vector<uint8_t> host(2 * n, 0xEE);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferRead(queue, m, true, 1, n, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferRead(queue, m, true, 0, n + 1, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferRead(queue, m, true, n + 1, 1, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferRead(queue, m, true, 8, SIZE_MAX - 4, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferWrite(queue, m, true, n - 4, 8, host.data(), 0, nullptr, nullptr));
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](uint8_t b) { return b == 0xEE; })) << "nothing was read";
  EXPECT_EQ(bytes(n), read(m, 0, n)) << "nothing was written";
}

TEST_P(urMemBufferTest, BufferOfAnotherContextIsRefused) {
  // CUDA, HIP and Level Zero read, write and copy a buffer of another context of the same
  // device (urURCtsRegressionTest.CopyBetweenContextsOfOneDevice); Level Zero still
  // refuses it for fills and maps.
  const bool takes_copies =
      backend() == UR_BACKEND_CUDA || backend() == UR_BACKEND_HIP || backend() == UR_BACKEND_LEVEL_ZERO;
  if (backend() == UR_BACKEND_CUDA || backend() == UR_BACKEND_HIP)
    GTEST_SKIP() << "CUDA and HIP take a buffer of another context of the same device for every command "
                    "(docs/cuda.md)";
  ur_context_handle_t other = nullptr;
  ur_device_handle_t dev = device();
  ASSERT_SUCCESS(urContextCreate(1, &dev, nullptr, &other));
  ur_mem_handle_t foreign = nullptr;
  ASSERT_SUCCESS(urMemBufferCreate(other, UR_MEM_FLAG_READ_WRITE, 256, nullptr, &foreign));
  ur_mem_handle_t mine = buffer(256);
  ASSERT_NE(nullptr, mine);
  std::vector<uint8_t> host(256);
  const uint8_t zero = 0;
  const ur_result_t copies = takes_copies ? UR_RESULT_SUCCESS : UR_RESULT_ERROR_INVALID_MEM_OBJECT;
  EXPECT_EQ_RESULT(copies, urEnqueueMemBufferRead(queue, foreign, true, 0, 256, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(copies, urEnqueueMemBufferWrite(queue, foreign, true, 0, 256, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(copies, urEnqueueMemBufferCopy(queue, mine, foreign, 0, 0, 256, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueMemBufferFill(queue, foreign, &zero, 1, 0, 256, 0, nullptr, nullptr));
  void *p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_MEM_OBJECT,
                   urEnqueueMemBufferMap(queue, foreign, true, UR_MAP_FLAG_READ, 0, 256, 0, nullptr, nullptr, &p));
  EXPECT_SUCCESS(urMemRelease(foreign));
  EXPECT_SUCCESS(urContextRelease(other));
}

TEST_P(urMemBufferTest, ReadWriteParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t m = buffer(64);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> host(64);
  ur_event_handle_t e = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urEnqueueMemBufferRead(nullptr, m, true, 0, 64, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urEnqueueMemBufferRead(queue, nullptr, true, 0, 64, host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueMemBufferRead(queue, m, true, 0, 64, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueMemBufferWrite(queue, m, true, 0, 64, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
                   urEnqueueMemBufferWrite(queue, m, true, 0, 64, host.data(), 1, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
                   urEnqueueMemBufferRead(queue, m, true, 0, 64, host.data(), 0, &e, nullptr));
}

// ---- copy and fill --------------------------------------------------------------------------------

TEST_P(urMemBufferTest, CopyBetweenBuffers) {
  const size_t n = 1 << 14;
  ur_mem_handle_t a = buffer(n), b = buffer(n);
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> in = bytes(n, 51), base = bytes(n, 52);
  write(a, 0, in);
  write(b, 0, base);
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, a, b, 100, 3000, 5000, 0, nullptr, nullptr));
  std::copy_n(in.begin() + 100, 5000, base.begin() + 3000);
  EXPECT_EQ(base, read(b, 0, n));
  EXPECT_EQ(in, read(a, 0, n)) << "the source is unchanged";
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, b, a, 0, 0, n, 0, nullptr, &e));
  ASSERT_SUCCESS(urEventWait(1, &e));
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_COPY, command_of(e));
  EXPECT_EQ(base, read(a, 0, n));
  EXPECT_SUCCESS(urEventRelease(e));
}

TEST_P(urMemBufferTest, CopyWithinOneBuffer) {
  const size_t n = 8192;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 61);
  write(m, 0, in);
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, m, m, 0, 4096, 4096, 0, nullptr, nullptr));
  std::copy_n(in.begin(), 4096, in.begin() + 4096);
  EXPECT_EQ(in, read(m, 0, n));
  // Between a sub-buffer and its parent, where the two ranges do not overlap.
  const size_t align = base_align();
  if (4 * align <= n) {
    ur_mem_handle_t sub = sub_buffer(m, 2 * align, 2 * align);
    ASSERT_NE(nullptr, sub);
    ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, sub, m, 0, 0, align, 0, nullptr, nullptr));
    std::copy_n(in.begin() + 2 * align, align, in.begin());
    EXPECT_EQ(in, read(m, 0, n));
  }
}

// A copy whose source and destination share a byte of one buffer (the same handle, a
// buffer and its sub-buffer, two sub-buffers of one buffer) is OVERLAPPING_REGIONS on
// every adapter, with no event and the buffer as it was (review 26: only OpenCL refused).
TEST_P(urMemBufferTest, CopyOverlappingWithinOneBufferRefused) {
  const size_t align = base_align(), n = std::max<size_t>(8192, 4 * align);
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  const std::vector<uint8_t> in = bytes(n, 17);
  write(m, 0, in);
  struct Case {
    const char *what;
    ur_mem_handle_t src, dst;
    size_t src_offset, dst_offset, size;
  };
  std::vector<Case> cases = {{"forward by 100", m, m, 0, 100, 600},
                             {"backward by 1", m, m, 1, 0, 600},
                             {"the same range", m, m, 64, 64, 128},
                             {"one byte shared", m, m, 0, 599, 600}};
  ur_mem_handle_t sub = sub_buffer(m, align, 2 * align), sub2 = sub_buffer(m, 2 * align, 2 * align);
  ASSERT_TRUE(sub && sub2);
  cases.push_back({"sub-buffer to its parent", sub, m, 0, align + 1, align});
  cases.push_back({"parent to its sub-buffer", m, sub, align, 0, align});
  cases.push_back({"two sub-buffers of one buffer", sub, sub2, align, 0, align});
  for (const Case &c : cases) {
    ur_event_handle_t e = nullptr;
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_OVERLAPPING_REGIONS,
                     urEnqueueMemBufferCopy(queue, c.src, c.dst, c.src_offset, c.dst_offset, c.size, 0, nullptr, &e))
        << c.what;
    EXPECT_EQ(nullptr, e) << c.what;
    if (e) urEventRelease(e);
  }
  EXPECT_EQ(in, read(m, 0, n)) << "a refused copy writes nothing";
  // Ranges that only touch, and sub-buffers apart, are copied.
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, m, m, 0, 600, 600, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, sub, sub2, 0, align, align, 0, nullptr, nullptr));
  std::vector<uint8_t> expect = in;
  std::copy_n(in.begin(), 600, expect.begin() + 600);
  std::copy_n(expect.begin() + align, align, expect.begin() + 3 * align);
  EXPECT_EQ(expect, read(m, 0, n));
}

TEST_P(urMemBufferTest, CopyRectOverlappingWithinOneBufferRefused) {
  const size_t row = 32, height = 16, n = row * height;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  const std::vector<uint8_t> in = bytes(n, 23);
  write(m, 0, in);
  struct Case {
    const char *what;
    ur_rect_offset_t src, dst;
    ur_rect_region_t region;
    size_t src_row, src_slice, dst_row, dst_slice;
  };
  const Case cases[] = {
      {"one row down, 4 bytes right", {2, 3, 0}, {6, 4, 0}, {16, 10, 1}, row, 0, row, 0},
      {"the same rectangle", {0, 0, 0}, {0, 0, 0}, {8, 4, 1}, row, 0, row, 0},
      {"the last byte of the source's first row", {0, 0, 0}, {7, 0, 0}, {8, 2, 1}, row, 0, row, 0},
      // Source rows at 0, 64, 128; destination rows at 32, 64, 96: one row shared.
      {"different row pitches", {0, 0, 0}, {0, 1, 0}, {8, 3, 1}, 64, 0, row, 0},
      // Source rows at 0, 32 | 64, 96; destination rows at 96, 128 | 192, 224: the
      // destination's first row is the source's last.
      {"a later slice", {0, 0, 0}, {0, 0, 1}, {8, 2, 2}, row, 0, row, 96},
  };
  for (const Case &c : cases) {
    ur_event_handle_t e = nullptr;
    ur_result_t r = urEnqueueMemBufferCopyRect(queue, m, m, c.src, c.dst, c.region, c.src_row, c.src_slice, c.dst_row,
                                               c.dst_slice, 0, nullptr, &e);
    if (r == UR_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "urEnqueueMemBufferCopyRect unsupported";
    EXPECT_EQ_RESULT(UR_RESULT_ERROR_OVERLAPPING_REGIONS, r) << c.what;
    EXPECT_EQ(nullptr, e) << c.what;
    if (e) urEventRelease(e);
  }
  EXPECT_EQ(in, read(m, 0, n)) << "a refused copy writes nothing";
  // Within one span but no byte shared: rows of 64 at 0 against rows of 64 at 32.
  ASSERT_SUCCESS(
      urEnqueueMemBufferCopyRect(queue, m, m, {0, 0, 0}, {32, 0, 0}, {8, 4, 1}, 64, 0, 64, 0, 0, nullptr, nullptr));
  std::vector<uint8_t> expect = in;
  for (size_t y = 0; y < 4; ++y) std::copy_n(in.begin() + y * 64, 8, expect.begin() + y * 64 + 32);
  EXPECT_EQ(expect, read(m, 0, n));
}

TEST_P(urMemBufferTest, CopyOutOfRange) {
  ur_mem_handle_t a = buffer(1024), b = buffer(512);
  ASSERT_TRUE(a && b);
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueMemBufferCopy(queue, a, b, 0, 0, 1024, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferCopy(queue, a, b, 1000, 0, 100, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferCopy(queue, b, a, 0, 1000, 100, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferCopy(queue, b, a, 0, SIZE_MAX, 2, 0, nullptr, nullptr));
}

TEST_P(urMemBufferTest, FillEveryPatternSize) {
  const size_t n = 4096;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  for (size_t pattern_size = 1; pattern_size <= 128; pattern_size *= 2) {
    const uint8_t zero = 0;
    ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, m, &zero, 1, 0, n, 0, nullptr, nullptr));
    std::vector<uint8_t> pattern = bytes(pattern_size, static_cast<uint8_t>(pattern_size));
    const size_t offset = 2 * pattern_size, size = 16 * pattern_size;
    ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, m, pattern.data(), pattern_size, offset, size, 0, nullptr, nullptr))
        << "pattern of " << pattern_size;
    std::vector<uint8_t> out = read(m, 0, n);
    for (size_t i = 0; i < n; ++i) {
      uint8_t want = (i >= offset && i < offset + size) ? pattern[(i - offset) % pattern_size] : 0;
      if (out[i] != want) {
        ADD_FAILURE() << "pattern of " << pattern_size << ": byte " << i;
        break;
      }
    }
  }
}

TEST_P(urMemBufferTest, FillPatternCopiedAtEnqueue) {
  ur_mem_handle_t m = buffer(1024);
  ASSERT_NE(nullptr, m);
  uint64_t pattern = 0x0102030405060708ull;
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, m, &pattern, sizeof pattern, 0, 1024, 0, nullptr, &e));
  pattern = 0;
  ASSERT_SUCCESS(urEventWait(1, &e));
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_FILL, command_of(e));
  std::vector<uint8_t> out = read(m, 0, 1024);
  uint64_t last = 0;
  std::memcpy(&last, &out[1016], 8);
  EXPECT_EQ(0x0102030405060708ull, last);
  EXPECT_SUCCESS(urEventRelease(e));
}

TEST_P(urMemBufferTest, FillOutOfRange) {
  ur_mem_handle_t m = buffer(1024);
  ASSERT_NE(nullptr, m);
  const uint32_t pattern = 7;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferFill(queue, m, &pattern, 4, 1024, 4, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferFill(queue, m, &pattern, 4, 512, 1024, 0, nullptr, nullptr));
}

TEST_P(urMemBufferTest, FillParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t m = buffer(1024);
  ASSERT_NE(nullptr, m);
  const uint64_t pattern = 0;
  auto fill = [&](const void *p, size_t pattern_size, size_t offset, size_t size) {
    return urEnqueueMemBufferFill(queue, m, p, pattern_size, offset, size, 0, nullptr, nullptr);
  };
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, fill(nullptr, 4, 0, 64));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, fill(&pattern, 0, 0, 64));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, fill(&pattern, 4, 0, 0));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, fill(&pattern, 8, 0, 4));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, fill(&pattern, 3, 0, 63));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, fill(&pattern, 4, 0, 62));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, fill(&pattern, 4, 2, 64));
}

// ---- rectangles -----------------------------------------------------------------------------------

// The byte of a rectangle side at (x, y, z), UR's layout: origin, then pitches.
size_t rect_at(const ur_rect_offset_t &o, size_t row, size_t slice, size_t x, size_t y, size_t z) {
  return (o.z + z) * slice + (o.y + y) * row + o.x + x;
}

TEST_P(urMemBufferTest, ReadRect) {
  const size_t row = 32, slice = 32 * 8, n = slice * 4;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 71);
  write(m, 0, in);
  const ur_rect_offset_t bo{2, 1, 1}, ho{1, 2, 0};
  const ur_rect_region_t region{5, 3, 2};
  const size_t host_row = 8, host_slice = 48;
  std::vector<uint8_t> host(96, 0xEE);
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urEnqueueMemBufferReadRect(queue, m, true, bo, ho, region, row, slice, host_row,
                                                                host_slice, host.data(), 0, nullptr, nullptr));
  std::vector<uint8_t> expect(96, 0xEE);
  for (size_t z = 0; z < region.depth; ++z)
    for (size_t y = 0; y < region.height; ++y)
      for (size_t x = 0; x < region.width; ++x)
        expect[rect_at(ho, host_row, host_slice, x, y, z)] = in[rect_at(bo, row, slice, x, y, z)];
  EXPECT_EQ(expect, host);
}

TEST_P(urMemBufferTest, WriteRect) {
  const size_t row = 40, slice = 40 * 6, n = slice * 3;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  const uint8_t zero = 0;
  ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, m, &zero, 1, 0, n, 0, nullptr, nullptr));
  const ur_rect_offset_t bo{7, 2, 0}, ho{3, 1, 1};
  const ur_rect_region_t region{9, 4, 3};
  const size_t host_row = 16, host_slice = 16 * 6;
  std::vector<uint8_t> host = bytes(host_slice * 4, 81);
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urEnqueueMemBufferWriteRect(queue, m, false, bo, ho, region, row, slice, host_row,
                                                                 host_slice, host.data(), 0, nullptr, &e));
  ASSERT_SUCCESS(urEventWait(1, &e));
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_WRITE_RECT, command_of(e));
  EXPECT_SUCCESS(urEventRelease(e));
  std::vector<uint8_t> expect(n, 0);
  for (size_t z = 0; z < region.depth; ++z)
    for (size_t y = 0; y < region.height; ++y)
      for (size_t x = 0; x < region.width; ++x)
        expect[rect_at(bo, row, slice, x, y, z)] = host[rect_at(ho, host_row, host_slice, x, y, z)];
  EXPECT_EQ(expect, read(m, 0, n));
}

TEST_P(urMemBufferTest, RectTightPitches) {
  // Pitches of 0 are the region's own: a whole region is one contiguous range.
  const size_t n = 16 * 4 * 2;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 91), out(n, 0);
  const ur_rect_offset_t zero{0, 0, 0};
  const ur_rect_region_t region{16, 4, 2};
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(
      urEnqueueMemBufferWriteRect(queue, m, true, zero, zero, region, 0, 0, 0, 0, in.data(), 0, nullptr, nullptr));
  EXPECT_EQ(in, read(m, 0, n));
  ASSERT_SUCCESS(
      urEnqueueMemBufferReadRect(queue, m, true, zero, zero, region, 0, 0, 0, 0, out.data(), 0, nullptr, nullptr));
  EXPECT_EQ(in, out);
}

TEST_P(urMemBufferTest, CopyRect) {
  const size_t src_row = 24, src_slice = 24 * 5, src_n = src_slice * 3;
  const size_t dst_row = 20, dst_slice = 20 * 7, dst_n = dst_slice * 4;
  ur_mem_handle_t src = buffer(src_n), dst = buffer(dst_n);
  ASSERT_TRUE(src && dst);
  std::vector<uint8_t> in = bytes(src_n, 101);
  write(src, 0, in);
  const uint8_t zero = 0;
  ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, dst, &zero, 1, 0, dst_n, 0, nullptr, nullptr));
  const ur_rect_offset_t so{4, 1, 1}, d_o{0, 3, 2};
  const ur_rect_region_t region{11, 4, 2};
  ur_event_handle_t e = nullptr;
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urEnqueueMemBufferCopyRect(queue, src, dst, so, d_o, region, src_row, src_slice,
                                                                dst_row, dst_slice, 0, nullptr, &e));
  ASSERT_SUCCESS(urEventWait(1, &e));
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_COPY_RECT, command_of(e));
  EXPECT_SUCCESS(urEventRelease(e));
  std::vector<uint8_t> expect(dst_n, 0);
  for (size_t z = 0; z < region.depth; ++z)
    for (size_t y = 0; y < region.height; ++y)
      for (size_t x = 0; x < region.width; ++x)
        expect[rect_at(d_o, dst_row, dst_slice, x, y, z)] = in[rect_at(so, src_row, src_slice, x, y, z)];
  EXPECT_EQ(expect, read(dst, 0, dst_n));
}

TEST_P(urMemBufferTest, CopyRectWithinOneBuffer) {
  // Columns 0..7 of every row to columns 16..23 of the same rows: the rectangles'
  // bytes interleave but do not overlap.
  const size_t row = 32, height = 16, n = row * height;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 111);
  write(m, 0, in);
  const ur_rect_offset_t so{0, 0, 0}, d_o{16, 0, 0};
  const ur_rect_region_t region{8, height, 1};
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(
      urEnqueueMemBufferCopyRect(queue, m, m, so, d_o, region, row, 0, row, 0, 0, nullptr, nullptr));
  for (size_t y = 0; y < height; ++y) std::copy_n(in.begin() + y * row, 8, in.begin() + y * row + 16);
  EXPECT_EQ(in, read(m, 0, n));
}

TEST_P(urMemBufferTest, CopyRectWithinOneBufferDifferentPitches) {
  // Rows of 8 bytes 64 apart to rows 32 apart, starting at column 16: no byte shared
  // (source rows at 0, 64, 128, 192; destination rows at 16, 48, 80, 112), and both
  // pitches differ (OpenCL's own copy refuses that within one buffer object).
  const size_t n = 256;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 57);
  write(m, 0, in);
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(
      urEnqueueMemBufferCopyRect(queue, m, m, {0, 0, 0}, {16, 0, 0}, {8, 4, 1}, 64, 256, 32, 128, 0, nullptr, nullptr));
  std::vector<uint8_t> expect = in;
  for (size_t y = 0; y < 4; ++y) std::copy_n(in.begin() + y * 64, 8, expect.begin() + 16 + y * 32);
  EXPECT_EQ(expect, read(m, 0, n));
}

TEST_P(urMemBufferTest, CopyRectBetweenOverlappingSubBuffers) {
  // Two sub-buffers whose ranges overlap; rows of 8 bytes 16 apart from each, the
  // destination's between the source's: no byte shared, so the copy is valid.
  const size_t a = base_align();
  ur_mem_handle_t root = buffer(4 * a);
  ASSERT_NE(nullptr, root);
  std::vector<uint8_t> in = bytes(4 * a, 91);
  write(root, 0, in);
  ur_mem_handle_t s0 = sub_buffer(root, 0, 2 * a), s1 = sub_buffer(root, a, 2 * a);
  ASSERT_TRUE(s0 && s1);
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urEnqueueMemBufferCopyRect(queue, s0, s1, {a + 8, 0, 0}, {0, 0, 0}, {8, 4, 1}, 16,
                                                                64, 16, 64, 0, nullptr, nullptr));
  std::vector<uint8_t> expect = in;
  for (size_t y = 0; y < 4; ++y) std::copy_n(in.begin() + a + 8 + y * 16, 8, expect.begin() + a + y * 16);
  EXPECT_EQ(expect, read(root, 0, 4 * a));
}

TEST_P(urMemBufferTest, RectOutOfRange) {
  const size_t n = 32 * 8;
  ur_mem_handle_t m = buffer(n), other = buffer(n);
  ASSERT_TRUE(m && other);
  std::vector<uint8_t> host(4 * n, 0xEE);
  const ur_rect_offset_t zero{0, 0, 0};
  // 8 rows of 32 fit; a ninth row does not, nor a byte past the last row, nor a second slice.
  ASSERT_SUCCESS_OR_SKIP_UNSUPPORTED(urEnqueueMemBufferReadRect(queue, m, true, zero, zero, {32, 8, 1}, 32, 0, 32, 0,
                                                                host.data(), 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferReadRect(queue, m, true, zero, zero, {32, 9, 1}, 32, 0, 32, 0, host.data(), 0,
                                              nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferReadRect(queue, m, true, {1, 7, 0}, zero, {32, 1, 1}, 32, 0, 32, 0, host.data(), 0,
                                              nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferWriteRect(queue, m, true, zero, zero, {16, 4, 2}, 32, 256, 16, 0, host.data(), 0,
                                               nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueMemBufferCopyRect(queue, m, other, {0, 0, 1}, zero, {8, 1, 1},
                                                                            32, 256, 32, 256, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueMemBufferCopyRect(queue, m, other, zero, {0, 8, 0}, {8, 1, 1},
                                                                            32, 0, 32, 0, 0, nullptr, nullptr));
}

TEST_P(urMemBufferTest, RectParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t m = buffer(4096), other = buffer(4096);
  ASSERT_TRUE(m && other);
  std::vector<uint8_t> host(4096);
  const ur_rect_offset_t zero{0, 0, 0};
  auto read_rect = [&](ur_rect_region_t r, size_t brow, size_t bslice, size_t hrow, size_t hslice) {
    return urEnqueueMemBufferReadRect(queue, m, true, zero, zero, r, brow, bslice, hrow, hslice, host.data(), 0,
                                      nullptr, nullptr);
  };
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({0, 1, 1}, 0, 0, 0, 0));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 0, 1}, 0, 0, 0, 0));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 1, 0}, 0, 0, 0, 0));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 2, 2}, 4, 0, 0, 0)); // row pitch < width
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 2, 2}, 0, 0, 4, 0));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 2, 2}, 8, 8, 0, 0));  // slice pitch < height * row
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 2, 2}, 8, 20, 0, 0)); // not a multiple of the row
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, read_rect({8, 2, 2}, 0, 0, 8, 20));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_NULL_POINTER,
      urEnqueueMemBufferReadRect(queue, m, true, zero, zero, {8, 1, 1}, 0, 0, 0, 0, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE, urEnqueueMemBufferCopyRect(queue, m, other, zero, zero, {8, 2, 2}, 0,
                                                                            0, 8, 12, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(
      UR_RESULT_ERROR_INVALID_NULL_HANDLE,
      urEnqueueMemBufferCopyRect(queue, m, nullptr, zero, zero, {8, 1, 1}, 0, 0, 0, 0, 0, nullptr, nullptr));
}

// ---- map and unmap --------------------------------------------------------------------------------

TEST_P(urMemBufferTest, MapReadsAndWrites) {
  const size_t n = 4096;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 121);
  write(m, 0, in);
  void *p = nullptr;
  ASSERT_SUCCESS(
      urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ | UR_MAP_FLAG_WRITE, 1000, 2000, 0, nullptr, nullptr, &p));
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(0, std::memcmp(p, in.data() + 1000, 2000)) << "the map shows the buffer's bytes at the offset";
  std::memset(p, 0x3C, 2000);
  ur_event_handle_t unmapped = nullptr;
  ASSERT_SUCCESS(urEnqueueMemUnmap(queue, m, p, 0, nullptr, &unmapped));
  ASSERT_SUCCESS(urEventWait(1, &unmapped));
  EXPECT_EQ(UR_COMMAND_MEM_UNMAP, command_of(unmapped));
  EXPECT_SUCCESS(urEventRelease(unmapped));
  std::fill_n(in.begin() + 1000, 2000, 0x3C);
  EXPECT_EQ(in, read(m, 0, n)) << "what was written through the map is the buffer's after the unmap";
}

TEST_P(urMemBufferTest, NonBlockingMapAfterWrite) {
  const size_t n = 1 << 16;
  ur_mem_handle_t m = buffer(n);
  ASSERT_NE(nullptr, m);
  std::vector<uint8_t> in = bytes(n, 131);
  ur_event_handle_t wrote = nullptr, mapped = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferWrite(queue, m, false, 0, n, in.data(), 0, nullptr, &wrote));
  void *p = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferMap(queue, m, false, UR_MAP_FLAG_READ, 0, n, 1, &wrote, &mapped, &p));
  ASSERT_NE(nullptr, p);
  ASSERT_SUCCESS(urEventWait(1, &mapped));
  EXPECT_EQ(UR_COMMAND_MEM_BUFFER_MAP, command_of(mapped));
  EXPECT_EQ(0, std::memcmp(p, in.data(), n));
  ASSERT_SUCCESS(urEnqueueMemUnmap(queue, m, p, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  EXPECT_SUCCESS(urEventRelease(wrote));
  EXPECT_SUCCESS(urEventRelease(mapped));
}

TEST_P(urMemBufferTest, MapTwiceUnmapTwice) {
  ur_mem_handle_t m = buffer(1024);
  ASSERT_NE(nullptr, m);
  void *a = nullptr, *b = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ, 0, 512, 0, nullptr, nullptr, &a));
  ASSERT_SUCCESS(urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ, 512, 512, 0, nullptr, nullptr, &b));
  EXPECT_NE(a, b);
  ASSERT_SUCCESS(urEnqueueMemUnmap(queue, m, b, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueMemUnmap(queue, m, a, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
}

TEST_P(urMemBufferTest, MapRefusals) {
  ur_mem_handle_t m = buffer(1024);
  ASSERT_NE(nullptr, m);
  void *p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ, 512, 513, 0, nullptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_SIZE,
                   urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ, 1025, 1, 0, nullptr, nullptr, &p));
  EXPECT_EQ(nullptr, p);
}

TEST_P(urMemBufferTest, UnmapOfAPointerNotMappedIsRefused) {
  ur_mem_handle_t m = buffer(1024), other = buffer(1024);
  ASSERT_TRUE(m && other);
  void *p = nullptr;
  ASSERT_SUCCESS(urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_WRITE, 0, 1024, 0, nullptr, nullptr, &p));
  int on_stack = 0;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, urEnqueueMemUnmap(queue, m, &on_stack, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_VALUE, urEnqueueMemUnmap(queue, other, p, 0, nullptr, nullptr))
      << "mapped from another buffer";
  ASSERT_SUCCESS(urEnqueueMemUnmap(queue, m, p, 0, nullptr, nullptr)) << "the map is still there";
  ASSERT_SUCCESS(urQueueFinish(queue));
}

TEST_P(urMemBufferTest, MapParameterRules) {
  CONF_REQUIRE_VALIDATION();
  ur_mem_handle_t m = buffer(1024);
  ASSERT_NE(nullptr, m);
  void *p = nullptr;
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urEnqueueMemBufferMap(nullptr, m, true, UR_MAP_FLAG_READ, 0, 64, 0, nullptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE,
                   urEnqueueMemBufferMap(queue, nullptr, true, UR_MAP_FLAG_READ, 0, 64, 0, nullptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER,
                   urEnqueueMemBufferMap(queue, m, true, UR_MAP_FLAG_READ, 0, 64, 0, nullptr, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_ENUMERATION,
                   urEnqueueMemBufferMap(queue, m, true, 1u << 3, 0, 64, 0, nullptr, nullptr, &p));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_POINTER, urEnqueueMemUnmap(queue, m, nullptr, 0, nullptr, nullptr));
  EXPECT_EQ_RESULT(UR_RESULT_ERROR_INVALID_NULL_HANDLE, urEnqueueMemUnmap(queue, nullptr, &p, 0, nullptr, nullptr));
}

// ---- ordering -------------------------------------------------------------------------------------

TEST_P(urMemBufferTest, OutOfOrderChainFollowsWaitLists) {
  if (!conf::device_has_queue_flag(device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    GTEST_SKIP() << "no out-of-order queues";
  ur_queue_handle_t ooo = nullptr;
  ASSERT_SUCCESS(conf::make_queue(context, device(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE, &ooo));
  const size_t n = 1 << 18;
  ur_mem_handle_t a = buffer(n), b = buffer(n);
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> in = bytes(n, 141), out(n, 0);
  const uint16_t pattern = 0xBEEF;
  ur_event_handle_t e[4] = {};
  ASSERT_SUCCESS(urEnqueueMemBufferWrite(ooo, a, false, 0, n, in.data(), 0, nullptr, &e[0]));
  ASSERT_SUCCESS(urEnqueueMemBufferFill(ooo, a, &pattern, 2, n / 2, n / 4, 1, &e[0], &e[1]));
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(ooo, a, b, 0, 0, n, 1, &e[1], &e[2]));
  ASSERT_SUCCESS(urEnqueueMemBufferRead(ooo, b, false, 0, n, out.data(), 1, &e[2], &e[3]));
  ASSERT_SUCCESS(urEventWait(1, &e[3]));
  for (size_t i = n / 2; i < n / 2 + n / 4; i += 2) std::memcpy(&in[i], &pattern, 2);
  EXPECT_EQ(in, out);
  for (ur_event_handle_t ev : e) EXPECT_SUCCESS(urEventRelease(ev));
  EXPECT_SUCCESS(urQueueFinish(ooo));
  EXPECT_SUCCESS(urQueueRelease(ooo));
}

TEST_P(urMemBufferTest, InOrderQueueChainsBufferCommands) {
  const size_t n = 1 << 16;
  ur_mem_handle_t a = buffer(n), b = buffer(n);
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> in = bytes(n, 151), out(n, 0);
  const uint8_t seven = 7;
  // No wait lists: the queue's order alone makes each command see the one before.
  ASSERT_SUCCESS(urEnqueueMemBufferWrite(queue, a, false, 0, n, in.data(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueMemBufferFill(queue, a, &seven, 1, 0, 64, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, a, b, 0, 0, n, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urEnqueueMemBufferRead(queue, b, false, 0, n, out.data(), 0, nullptr, nullptr));
  ASSERT_SUCCESS(urQueueFinish(queue));
  std::fill_n(in.begin(), 64, 7);
  EXPECT_EQ(in, out);
}

// ---- buffers as kernel arguments ----------------------------------------------------------------

class urMemBufferKernelTest : public conf::ProgramTest {
protected:
  std::vector<ur_kernel_handle_t> kernels;
  std::vector<ur_mem_handle_t> owned;

  void SetUp() override {
    CONF_BASE_SETUP(conf::ProgramTest);
    CONF_SKIP_WITHOUT_BUFFERS();
  }
  void TearDown() override {
    if (queue) urQueueFinish(queue);
    for (ur_kernel_handle_t k : kernels) EXPECT_SUCCESS(urKernelRelease(k));
    for (ur_mem_handle_t m : owned) EXPECT_SUCCESS(urMemRelease(m));
    conf::ProgramTest::TearDown();
  }
  ur_kernel_handle_t kernel(const char *name) {
    ur_kernel_handle_t k = make_kernel(name);
    if (k) kernels.push_back(k);
    return k;
  }
  ur_mem_handle_t buffer(size_t size) {
    ur_mem_handle_t m = nullptr;
    EXPECT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, size, nullptr, &m));
    if (m) owned.push_back(m);
    return m;
  }
  ur_result_t launch(ur_kernel_handle_t k, size_t n, const std::vector<ur_exp_kernel_arg_properties_t> &args,
                     ur_event_handle_t *event = nullptr) {
    return urEnqueueKernelLaunchWithArgsExp(queue, k, 1, nullptr, &n, nullptr, static_cast<uint32_t>(args.size()),
                                            args.data(), nullptr, 0, nullptr, event);
  }
  template <class T> std::vector<T> read(ur_mem_handle_t m, size_t n) {
    std::vector<T> out(n);
    EXPECT_SUCCESS(urEnqueueMemBufferRead(queue, m, true, 0, n * sizeof(T), out.data(), 0, nullptr, nullptr));
    return out;
  }
  template <class T> void write(ur_mem_handle_t m, const std::vector<T> &in) {
    ASSERT_SUCCESS(urEnqueueMemBufferWrite(queue, m, true, 0, in.size() * sizeof(T), in.data(), 0, nullptr, nullptr));
  }
};

TEST_P(urMemBufferKernelTest, VectorAddOverBuffers) {
  const size_t n = 4096;
  ur_mem_handle_t a = buffer(n * 4), b = buffer(n * 4), c = buffer(n * 4);
  ASSERT_TRUE(a && b && c);
  std::vector<float> ha(n), hb(n);
  std::iota(ha.begin(), ha.end(), 0.0f);
  std::iota(hb.begin(), hb.end(), 500.0f);
  write(a, ha);
  write(b, hb);
  ur_kernel_handle_t k = kernel("vector_add");
  ASSERT_NE(nullptr, k);
  ASSERT_SUCCESS(launch(k, n,
                        {arg_mem(0, a, UR_MEM_FLAG_READ_ONLY), arg_mem(1, b, UR_MEM_FLAG_READ_ONLY),
                         arg_mem(2, c, UR_MEM_FLAG_WRITE_ONLY)}));
  std::vector<float> hc = read<float>(c, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(ha[i] + hb[i], hc[i]) << i;
}

TEST_P(urMemBufferKernelTest, SubBufferArgumentIsItsRegion) {
  uint32_t bits = 0;
  ASSERT_SUCCESS(conf::info(device(), UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, bits));
  const size_t align_words = std::max<size_t>(1, bits / 8 / 4);
  const size_t n = 8 * align_words, origin = 2 * align_words, count = 4 * align_words;
  ur_mem_handle_t m = buffer(n * 4);
  ASSERT_NE(nullptr, m);
  std::vector<uint32_t> in(n);
  std::iota(in.begin(), in.end(), 1000u);
  write(m, in);
  ur_buffer_region_t region{UR_STRUCTURE_TYPE_BUFFER_REGION, nullptr, origin * 4, count * 4};
  ur_mem_handle_t sub = nullptr;
  ASSERT_SUCCESS(urMemBufferPartition(m, UR_MEM_FLAG_READ_WRITE, UR_BUFFER_CREATE_TYPE_REGION, &region, &sub));
  owned.push_back(sub);
  ur_kernel_handle_t k = kernel("increment");
  ASSERT_NE(nullptr, k);
  ASSERT_SUCCESS(launch(k, count, {arg_mem(0, sub)}));
  std::vector<uint32_t> out = read<uint32_t>(m, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(in[i] + (i >= origin && i < origin + count ? 1u : 0u), out[i]) << i;
}

TEST_P(urMemBufferKernelTest, BufferReleasedWhileLaunchPending) {
  const size_t n = 1 << 16;
  ur_mem_handle_t m = nullptr, result = buffer(n * 4);
  ASSERT_NE(nullptr, result);
  ASSERT_SUCCESS(urMemBufferCreate(context, UR_MEM_FLAG_READ_WRITE, n * 4, nullptr, &m));
  ur_kernel_handle_t fill = kernel("fill");
  ASSERT_NE(nullptr, fill);
  const uint32_t value = 0xC0FFEE;
  ASSERT_SUCCESS(launch(fill, n, {arg_mem(0, m), arg_value(1, sizeof value, &value)}));
  ASSERT_SUCCESS(urEnqueueMemBufferCopy(queue, m, result, 0, 0, n * 4, 0, nullptr, nullptr));
  ASSERT_SUCCESS(urMemRelease(m)); // the launch and the copy hold it
  std::vector<uint32_t> out = read<uint32_t>(result, n);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [&](uint32_t v) { return v == value; }));
}

CONF_INSTANTIATE_DEVICE_SUITE(urMemBufferTest);
CONF_INSTANTIATE_DEVICE_SUITE(urMemBufferKernelTest);

} // namespace
