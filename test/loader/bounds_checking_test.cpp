// SPDX-License-Identifier: Apache-2.0
// UR_LAYER_BOUNDS_CHECKING (docs/loader.md, "Bounds checking"): each checked enqueue
// function refused past the end of its memory and let through inside it, after the
// parameter checks under full validation, and let through when the size query fails.
// Buffers and images are stand-ins with the mock's table, whose urMemGetInfo and
// urMemImageGetInfo slots answer chosen sizes; USM is the mock's own.
#include <cstdint>
#include <cstring>
#include <limits>

#include "helpers.hpp"
#include "ur_ddi.h"

using namespace loader_test;

namespace {

const char kBounds[] = "UR_LAYER_BOUNDS_CHECKING";
const char kValidation[] = "UR_LAYER_PARAMETER_VALIDATION";
const char kFull[] = "UR_LAYER_FULL_VALIDATION";
constexpr size_t kMax = std::numeric_limits<size_t>::max();

int g_reached = 0; // calls that got past the layers to the (replaced) adapter slot
int g_queries = 0; // size queries answered
bool g_queries_fail = false;
size_t g_image[4] = {}; // width, height, depth, array size

// Any slot: counts the call, succeeds.
template <class F> struct Reached;
template <class... A> struct Reached<ur_result_t(UR_APICALL *)(A...)> {
  static ur_result_t UR_APICALL call(A...) {
    ++g_reached;
    return UR_RESULT_SUCCESS;
  }
};

struct FakeObject {
  const void *table;
};
FakeObject g_big, g_small, g_image_object; // buffers of 1024 and 64 bytes, an image

ur_result_t UR_APICALL mem_get_info(ur_mem_handle_t h, ur_mem_info_t prop, size_t size, void *value, size_t *) {
  if (g_queries_fail) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (prop != UR_MEM_INFO_SIZE || size != sizeof(size_t) || !value) return UR_RESULT_ERROR_INVALID_VALUE;
  ++g_queries;
  const size_t bytes = h == reinterpret_cast<ur_mem_handle_t>(&g_small) ? 64 : 1024;
  std::memcpy(value, &bytes, sizeof bytes);
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL image_get_info(ur_mem_handle_t, ur_image_info_t prop, size_t size, void *value, size_t *) {
  if (g_queries_fail) return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (size != sizeof(size_t) || !value || prop < UR_IMAGE_INFO_WIDTH || prop > UR_IMAGE_INFO_ARRAY_SIZE)
    return UR_RESULT_ERROR_INVALID_VALUE;
  ++g_queries;
  std::memcpy(value, &g_image[prop - UR_IMAGE_INFO_WIDTH], sizeof(size_t));
  return UR_RESULT_SUCCESS;
}

ur_result_t UR_APICALL queue_info_fails(ur_queue_handle_t, ur_queue_info_t, size_t, void *, size_t *) {
  return UR_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

#define REPLACE(name, type) ordo_mock::replace(objects.queue, name, &Reached<type>::call)

// The mocking loader with `layers`, a queue, stand-in memory and every checked slot
// replaced by a counter.
struct Session {
  explicit Session(const std::vector<std::string> &layers) : scope(true, layers) {
    auto list = adapters();
    EXPECT_EQ(list.size(), 1u);
    if (list.empty()) return;
    objects.create(list[0]);
    for (FakeObject *o : {&g_big, &g_small, &g_image_object}) o->table = *reinterpret_cast<void **>(objects.queue);
    ordo_mock::replace(objects.queue, "urMemGetInfo", mem_get_info);
    ordo_mock::replace(objects.queue, "urMemImageGetInfo", image_get_info);
    REPLACE("urEnqueueMemBufferRead", ur_pfnEnqueueMemBufferRead_t);
    REPLACE("urEnqueueMemBufferWrite", ur_pfnEnqueueMemBufferWrite_t);
    REPLACE("urEnqueueMemBufferReadRect", ur_pfnEnqueueMemBufferReadRect_t);
    REPLACE("urEnqueueMemBufferWriteRect", ur_pfnEnqueueMemBufferWriteRect_t);
    REPLACE("urEnqueueMemBufferCopy", ur_pfnEnqueueMemBufferCopy_t);
    REPLACE("urEnqueueMemBufferCopyRect", ur_pfnEnqueueMemBufferCopyRect_t);
    REPLACE("urEnqueueMemBufferFill", ur_pfnEnqueueMemBufferFill_t);
    REPLACE("urEnqueueMemBufferMap", ur_pfnEnqueueMemBufferMap_t);
    REPLACE("urEnqueueMemImageRead", ur_pfnEnqueueMemImageRead_t);
    REPLACE("urEnqueueMemImageWrite", ur_pfnEnqueueMemImageWrite_t);
    REPLACE("urEnqueueMemImageCopy", ur_pfnEnqueueMemImageCopy_t);
    REPLACE("urEnqueueUSMFill", ur_pfnEnqueueUSMFill_t);
    REPLACE("urEnqueueUSMMemcpy", ur_pfnEnqueueUSMMemcpy_t);
    REPLACE("urEnqueueUSMPrefetch", ur_pfnEnqueueUSMPrefetch_t);
    REPLACE("urEnqueueUSMAdvise", ur_pfnEnqueueUSMAdvise_t);
    REPLACE("urEnqueueUSMFill2D", ur_pfnEnqueueUSMFill2D_t);
    REPLACE("urEnqueueUSMMemcpy2D", ur_pfnEnqueueUSMMemcpy2D_t);
    g_reached = g_queries = 0;
    g_queries_fail = false;
  }
  ~Session() {
    if (objects.adapter) {
      ordo_mock::api_of(objects.adapter).restore_all();
      objects.release();
      urAdapterRelease(objects.adapter);
    }
  }
  ur_queue_handle_t queue() const { return objects.queue; }
  LoaderScope scope;
  MockObjects objects;
};

#undef REPLACE

ur_mem_handle_t big() { return reinterpret_cast<ur_mem_handle_t>(&g_big); }
ur_mem_handle_t small() { return reinterpret_cast<ur_mem_handle_t>(&g_small); }
ur_mem_handle_t image() { return reinterpret_cast<ur_mem_handle_t>(&g_image_object); }

// Expects `result`, and that the call reached the adapter exactly when it succeeded.
#define EXPECT_BOUNDS(call, result)                                                                                    \
  do {                                                                                                                 \
    const int before_ = g_reached;                                                                                     \
    EXPECT_EQ((call), (result));                                                                                       \
    EXPECT_EQ(g_reached - before_, (result) == UR_RESULT_SUCCESS ? 1 : 0) << "reached the adapter";                    \
  } while (0)
#define PASSES(call) EXPECT_BOUNDS(call, UR_RESULT_SUCCESS)
#define REFUSED(call) EXPECT_BOUNDS(call, UR_RESULT_ERROR_INVALID_SIZE)

char g_host[4096];

void set_image(size_t width, size_t height, size_t depth, size_t layers) {
  g_image[0] = width;
  g_image[1] = height;
  g_image[2] = depth;
  g_image[3] = layers;
}

TEST(BoundsChecking, BufferRangesStayInsideTheBuffer) {
  Session s({kBounds});
  auto q = s.queue();
  PASSES(urEnqueueMemBufferRead(q, big(), true, 0, 1024, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferRead(q, big(), true, 1, 1024, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferRead(q, big(), true, kMax, 2, g_host, 0, nullptr, nullptr)); // wraps
  PASSES(urEnqueueMemBufferWrite(q, small(), true, 60, 4, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferWrite(q, small(), true, 60, 8, g_host, 0, nullptr, nullptr));
  const uint32_t pattern = 7;
  PASSES(urEnqueueMemBufferFill(q, big(), &pattern, 4, 4, 1020, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferFill(q, big(), &pattern, 4, 4, 1024, 0, nullptr, nullptr));
  void *mapped = nullptr;
  PASSES(urEnqueueMemBufferMap(q, small(), true, UR_MAP_FLAG_READ, 0, 64, 0, nullptr, nullptr, &mapped));
  REFUSED(urEnqueueMemBufferMap(q, small(), true, UR_MAP_FLAG_READ, 1, 64, 0, nullptr, nullptr, &mapped));
  // Copy: each side against its own buffer.
  PASSES(urEnqueueMemBufferCopy(q, big(), small(), 960, 0, 64, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferCopy(q, big(), small(), 961, 0, 64, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferCopy(q, big(), small(), 0, 1, 64, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferCopy(q, small(), big(), 0, 0, 65, 0, nullptr, nullptr));
}

TEST(BoundsChecking, RectanglesMeasuredWithTheirPitches) {
  Session s({kBounds});
  auto q = s.queue();
  const ur_rect_offset_t zero{0, 0, 0};
  const ur_rect_region_t region{16, 4, 2}; // tight: 128 bytes
  // The last of 1024 bytes: 14 slices of 64 before the region, then 128.
  PASSES(urEnqueueMemBufferReadRect(q, big(), true, {0, 0, 14}, zero, region, 0, 0, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(
      urEnqueueMemBufferReadRect(q, big(), true, {1, 0, 14}, zero, region, 0, 0, 0, 0, g_host, 0, nullptr, nullptr));
  // Rows 100 apart, slices 500: (2 - 1) * 500 + 3 * 100 + 16 = 816 bytes from the origin.
  PASSES(urEnqueueMemBufferWriteRect(q, big(), true, {8, 2, 0}, zero, region, 100, 500, 0, 0, g_host, 0, nullptr,
                                     nullptr)); // 208 + 816 = 1024
  REFUSED(urEnqueueMemBufferWriteRect(q, big(), true, {9, 2, 0}, zero, region, 100, 500, 0, 0, g_host, 0, nullptr,
                                      nullptr));
  // The host side is not the buffer's: any origin there.
  PASSES(urEnqueueMemBufferReadRect(q, small(), true, zero, {4000, 9, 9}, {16, 4, 1}, 0, 0, 0, 0, g_host, 0, nullptr,
                                    nullptr));
  REFUSED(urEnqueueMemBufferReadRect(q, big(), true, {kMax, 1, 1}, zero, region, 0, 0, 0, 0, g_host, 0, nullptr,
                                     nullptr)); // wraps
  // Copy: source against its pitches, destination against its own.
  PASSES(urEnqueueMemBufferCopyRect(q, big(), small(), {0, 0, 7}, zero, {16, 4, 1}, 0, 0, 0, 0, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemBufferCopyRect(q, big(), small(), {0, 0, 7}, zero, {16, 4, 1}, 0, 0, 32, 0, 0, nullptr,
                                     nullptr)); // 3 * 32 + 16 = 112 > 64
  REFUSED(urEnqueueMemBufferCopyRect(q, big(), small(), {0, 0, 16}, zero, {16, 4, 1}, 0, 0, 0, 0, 0, nullptr,
                                     nullptr)); // 16 * 64 + 64 > 1024
}

TEST(BoundsChecking, ImagesAgainstEachDimension) {
  Session s({kBounds});
  auto q = s.queue();
  const ur_rect_offset_t zero{0, 0, 0};
  // 1-D: height and depth answered as 0 count as 1.
  set_image(8, 0, 0, 0);
  PASSES(urEnqueueMemImageRead(q, image(), true, zero, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageRead(q, image(), true, {1, 0, 0}, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageRead(q, image(), true, zero, {9, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageRead(q, image(), true, zero, {8, 2, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  // 2-D.
  set_image(8, 4, 0, 0);
  PASSES(urEnqueueMemImageWrite(q, image(), true, {0, 1, 0}, {8, 3, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageWrite(q, image(), true, {0, 1, 0}, {8, 4, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageWrite(q, image(), true, {0, 0, 1}, {8, 4, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  // 3-D, copied to itself: source and destination origins each checked.
  set_image(8, 4, 2, 0);
  PASSES(urEnqueueMemImageCopy(q, image(), image(), zero, {0, 0, 1}, {8, 4, 1}, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageCopy(q, image(), image(), {0, 0, 2}, zero, {8, 4, 1}, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageCopy(q, image(), image(), zero, {0, 0, 1}, {8, 4, 2}, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageCopy(q, image(), image(), {kMax, 0, 0}, zero, {8, 4, 1}, 0, nullptr, nullptr));
  // Arrays: the layers count in the first dimension the image does not have.
  set_image(8, 0, 0, 3); // 1-D array of 3
  PASSES(urEnqueueMemImageRead(q, image(), true, {0, 2, 0}, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageRead(q, image(), true, {0, 3, 0}, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  set_image(8, 1, 0, 3); // 1-D array of 3 from an adapter that answers height 1: never refused
  PASSES(urEnqueueMemImageRead(q, image(), true, {0, 2, 0}, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageRead(q, image(), true, {0, 3, 0}, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  set_image(8, 4, 0, 3); // 2-D array of 3
  PASSES(urEnqueueMemImageRead(q, image(), true, {0, 0, 1}, {8, 4, 2}, 0, 0, g_host, 0, nullptr, nullptr));
  REFUSED(urEnqueueMemImageRead(q, image(), true, {0, 0, 2}, {8, 4, 2}, 0, 0, g_host, 0, nullptr, nullptr));
}

TEST(BoundsChecking, UsmRangesInsideTheirAllocation) {
  Session s({kBounds});
  auto q = s.queue();
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(urUSMHostAlloc(s.objects.context, nullptr, nullptr, 64, &a), UR_RESULT_SUCCESS);
  ASSERT_EQ(urUSMHostAlloc(s.objects.context, nullptr, nullptr, 128, &b), UR_RESULT_SUCCESS);
  char *a8 = static_cast<char *>(a);
  const uint32_t pattern = 1;
  PASSES(urEnqueueUSMFill(q, a, 4, &pattern, 64, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMFill(q, a, 4, &pattern, 68, 0, nullptr, nullptr));
  // From inside the allocation only the rest of it counts.
  PASSES(urEnqueueUSMFill(q, a8 + 32, 4, &pattern, 32, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMFill(q, a8 + 32, 4, &pattern, 36, 0, nullptr, nullptr));
  // Memcpy: both sides; host memory that is not USM is not checked.
  PASSES(urEnqueueUSMMemcpy(q, true, b, a, 64, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMMemcpy(q, true, a, b, 128, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMMemcpy(q, true, b, a, 128, 0, nullptr, nullptr));
  PASSES(urEnqueueUSMMemcpy(q, true, g_host, b, 128, 0, nullptr, nullptr));
  PASSES(urEnqueueUSMMemcpy(q, true, g_host, g_host + 2048, 2048, 0, nullptr, nullptr));
  // 2-D: pitch * height from the pointer.
  PASSES(urEnqueueUSMFill2D(q, a, 16, 4, &pattern, 16, 4, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMFill2D(q, a, 16, 4, &pattern, 16, 5, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMFill2D(q, a, kMax, 4, &pattern, 16, 2, 0, nullptr, nullptr)); // wraps
  PASSES(urEnqueueUSMMemcpy2D(q, true, b, 32, a, 16, 16, 4, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMMemcpy2D(q, true, b, 16, a, 16, 16, 5, 0, nullptr, nullptr)); // src: 80 > 64
  REFUSED(urEnqueueUSMMemcpy2D(q, true, a, 32, b, 32, 16, 3, 0, nullptr, nullptr)); // dst: 96 > 64
  PASSES(urEnqueueUSMPrefetch(q, b, 128, 0, 0, nullptr, nullptr));
  REFUSED(urEnqueueUSMPrefetch(q, b, 129, 0, 0, nullptr, nullptr));
  PASSES(urEnqueueUSMAdvise(q, a, 64, UR_USM_ADVICE_FLAG_DEFAULT, nullptr));
  REFUSED(urEnqueueUSMAdvise(q, a8 + 1, 64, UR_USM_ADVICE_FLAG_DEFAULT, nullptr));
  EXPECT_EQ(urUSMFree(s.objects.context, a), UR_RESULT_SUCCESS);
  EXPECT_EQ(urUSMFree(s.objects.context, b), UR_RESULT_SUCCESS);
}

TEST(BoundsChecking, FullValidationChecksAfterTheParameterRules) {
  Session s({kFull});
  auto q = s.queue();
  // A null destination is the spec's INVALID_NULL_POINTER, before any size is asked.
  EXPECT_EQ(urEnqueueMemBufferRead(q, big(), true, 1, 1024, nullptr, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_POINTER);
  EXPECT_EQ(urEnqueueMemBufferRead(q, nullptr, true, 1, 1024, g_host, 0, nullptr, nullptr),
            UR_RESULT_ERROR_INVALID_NULL_HANDLE);
  ur_rect_region_t empty{0, 4, 1};
  EXPECT_EQ(urEnqueueMemBufferReadRect(q, big(), true, {kMax, 0, 0}, {0, 0, 0}, empty, 0, 0, 0, 0, g_host, 0, nullptr,
                                       nullptr),
            UR_RESULT_ERROR_INVALID_SIZE); // the spec's rule for an empty region
  EXPECT_EQ(g_queries, 0);
  EXPECT_EQ(g_reached, 0);
  // Past the parameter rules, full validation checks bounds too.
  REFUSED(urEnqueueMemBufferRead(q, big(), true, 1, 1024, g_host, 0, nullptr, nullptr));
  EXPECT_EQ(g_queries, 1);
  PASSES(urEnqueueMemBufferRead(q, big(), true, 0, 1024, g_host, 0, nullptr, nullptr));
}

TEST(BoundsChecking, OffWithoutItsLayer) {
  for (const std::vector<std::string> &layers : {std::vector<std::string>{}, std::vector<std::string>{kValidation}}) {
    Session s(layers);
    PASSES(urEnqueueMemBufferRead(s.queue(), big(), true, 1, 1024, g_host, 0, nullptr, nullptr));
    EXPECT_EQ(g_queries, 0);
  }
}

TEST(BoundsChecking, NamedInTheEnvironment) {
  EnvVar env("UR_ENABLE_LAYERS", kBounds);
  Session s({});
  REFUSED(urEnqueueMemBufferRead(s.queue(), big(), true, 1, 1024, g_host, 0, nullptr, nullptr));
}

TEST(BoundsChecking, FailedSizeQueriesLetCallsThrough) {
  Session s({kBounds});
  auto q = s.queue();
  g_queries_fail = true;
  PASSES(urEnqueueMemBufferRead(q, big(), true, 1, 1024, g_host, 0, nullptr, nullptr));
  PASSES(urEnqueueMemBufferCopy(q, big(), small(), 0, 0, 2048, 0, nullptr, nullptr));
  PASSES(urEnqueueMemBufferReadRect(q, big(), true, {kMax, 1, 1}, {0, 0, 0}, {16, 4, 2}, 0, 0, 0, 0, g_host, 0, nullptr,
                                    nullptr));
  PASSES(urEnqueueMemImageRead(q, image(), true, {1, 0, 0}, {8, 1, 1}, 0, 0, g_host, 0, nullptr, nullptr));
  // A null buffer with no parameter validation: the query fails, the adapter decides.
  PASSES(urEnqueueMemBufferRead(q, nullptr, true, 1, 1024, g_host, 0, nullptr, nullptr));
  // USM: no context from the queue, nothing to measure against.
  void *a = nullptr;
  ASSERT_EQ(urUSMHostAlloc(s.objects.context, nullptr, nullptr, 64, &a), UR_RESULT_SUCCESS);
  const uint32_t pattern = 1;
  REFUSED(urEnqueueUSMFill(q, a, 4, &pattern, 68, 0, nullptr, nullptr));
  ordo_mock::replace(q, "urQueueGetInfo", queue_info_fails);
  PASSES(urEnqueueUSMFill(q, a, 4, &pattern, 68, 0, nullptr, nullptr));
  EXPECT_EQ(urUSMFree(s.objects.context, a), UR_RESULT_SUCCESS);
}

} // namespace
