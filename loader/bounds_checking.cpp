// SPDX-License-Identifier: Apache-2.0
// UR_LAYER_BOUNDS_CHECKING (docs/loader.md, "Bounds checking"): refuses enqueue commands
// whose buffer, image or USM range runs past the memory it names, with
// UR_RESULT_ERROR_INVALID_SIZE. Sizes are asked of the table below; a query that fails
// (an adapter that does not answer it) lets the call through unchecked.
#include <algorithm>
#include <string>

#include "layers_internal.hpp"
#include "ordo/checked_math.hpp"

namespace ordo {
namespace loader {
namespace {

// The table below this layer, saved at init: the checks' queries and the calls they
// let through go there. Lives for the process, like the other layers' tables.
ur_dditable_t g_next;

ur_result_t out_of_bounds(const char *function, const std::string &why) {
  return validation_refused(function, UR_RESULT_ERROR_INVALID_SIZE, why.c_str());
}

// Fits when `end` (false: the arithmetic overflowed) is within `limit`.
ur_result_t within(const char *function, bool computed, size_t end, size_t limit, const char *what) {
  if (computed && end <= limit) return UR_RESULT_SUCCESS;
  return out_of_bounds(function, std::string(what) + " runs past " + std::to_string(limit) + " bytes");
}

ur_result_t check_buffer(const char *function, ur_mem_handle_t mem, size_t offset, size_t size, const char *what) {
  size_t bytes = 0;
  if (g_next.Mem.pfnGetInfo(mem, UR_MEM_INFO_SIZE, sizeof bytes, &bytes, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_SUCCESS;
  size_t end = 0;
  const bool ok = checked::add(offset, size, end); // before `end` is read
  return within(function, ok, end, bytes, what);
}

// The byte after the last one a rectangle touches in its buffer: pitches of 0 are tight,
// as the enqueue functions read them. False on overflow.
bool rect_end(const ur_rect_offset_t &origin, const ur_rect_region_t &region, size_t row_pitch, size_t slice_pitch,
              size_t &end) {
  const size_t row = row_pitch ? row_pitch : region.width;
  size_t slice = slice_pitch;
  if (!slice && !checked::mul(row, region.height, slice)) return false;
  size_t first = 0, a = 0, b = 0, last = 0;
  return checked::mul(origin.z, slice, a) && checked::mul(origin.y, row, b) && checked::add(a, b, first) &&
         checked::add(first, origin.x, first) && checked::mul(region.depth - 1, slice, a) &&
         checked::add(first, a, last) && checked::span_2d(row, region.width, region.height, b) &&
         checked::add(last, b, end);
}

ur_result_t check_rect(const char *function, ur_mem_handle_t mem, const ur_rect_offset_t &origin,
                       const ur_rect_region_t &region, size_t row_pitch, size_t slice_pitch, const char *what) {
  // An empty region is the spec rules' INVALID_SIZE, not a range to measure.
  if (region.width == 0 || region.height == 0 || region.depth == 0) return UR_RESULT_SUCCESS;
  size_t bytes = 0;
  if (g_next.Mem.pfnGetInfo(mem, UR_MEM_INFO_SIZE, sizeof bytes, &bytes, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_SUCCESS;
  size_t end = 0;
  const bool ok = rect_end(origin, region, row_pitch, slice_pitch, end); // before `end` is read
  return within(function, ok, end, bytes, what);
}

bool image_info(ur_mem_handle_t image, ur_image_info_t info, size_t &value) {
  return g_next.Mem.pfnImageGetInfo(image, info, sizeof value, &value, nullptr) == UR_RESULT_SUCCESS;
}

ur_result_t check_image(const char *function, ur_mem_handle_t image, const ur_rect_offset_t &origin,
                        const ur_rect_region_t &region, const char *what) {
  size_t dims[3] = {};
  if (!image_info(image, UR_IMAGE_INFO_WIDTH, dims[0]) || !image_info(image, UR_IMAGE_INFO_HEIGHT, dims[1]) ||
      !image_info(image, UR_IMAGE_INFO_DEPTH, dims[2]))
    return UR_RESULT_SUCCESS;
  // Adapters answer 0 for a dimension the image does not have; regions give it as 1.
  // An array's layers count in the first dimension the image does not have: y for a
  // 1-D array, z for a 2-D one. A height of 1 may be either (some adapters answer 1
  // for a 1-D image), so both may then hold the layers: never refuse a valid call.
  size_t layers = 0;
  if (image_info(image, UR_IMAGE_INFO_ARRAY_SIZE, layers) && layers > 0) {
    if (dims[1] <= 1) dims[1] = std::max(dims[1], layers);
    if (dims[2] < layers) dims[2] = layers;
  }
  const size_t at[3] = {static_cast<size_t>(origin.x), static_cast<size_t>(origin.y), static_cast<size_t>(origin.z)};
  const size_t extent[3] = {region.width, region.height, region.depth};
  static const char *const names[3] = {"width", "height", "depth"};
  for (int i = 0; i < 3; ++i) {
    const size_t limit = dims[i] ? dims[i] : 1;
    size_t end = 0;
    if (!checked::add(at[i], extent[i], end) || end > limit)
      return out_of_bounds(function, std::string(what) + " + region runs past the image's " + names[i] + " " +
                                         std::to_string(limit));
  }
  return UR_RESULT_SUCCESS;
}

// `ptr` .. `ptr + size` (size_ok false: the size overflowed) inside the USM allocation
// of the queue's context that holds `ptr`. Pointers that are not USM of that context,
// and failed queries, are not checked: nothing says how large their memory is.
ur_result_t check_usm(const char *function, ur_queue_handle_t queue, const void *ptr, bool size_ok, size_t size,
                      const char *what) {
  if (!queue || !ptr) return UR_RESULT_SUCCESS;
  ur_context_handle_t context = nullptr;
  if (g_next.Queue.pfnGetInfo(queue, UR_QUEUE_INFO_CONTEXT, sizeof context, &context, nullptr) != UR_RESULT_SUCCESS ||
      !context)
    return UR_RESULT_SUCCESS;
  auto alloc_info = g_next.USM.pfnGetMemAllocInfo;
  ur_usm_type_t type = UR_USM_TYPE_UNKNOWN;
  size_t bytes = 0;
  if (alloc_info(context, ptr, UR_USM_ALLOC_INFO_TYPE, sizeof type, &type, nullptr) != UR_RESULT_SUCCESS ||
      type == UR_USM_TYPE_UNKNOWN ||
      alloc_info(context, ptr, UR_USM_ALLOC_INFO_SIZE, sizeof bytes, &bytes, nullptr) != UR_RESULT_SUCCESS)
    return UR_RESULT_SUCCESS;
  // A pointer into the middle of an allocation has only the rest of it; without the base
  // the whole size is allowed (never a false refusal).
  void *base = nullptr;
  size_t limit = bytes;
  if (alloc_info(context, ptr, UR_USM_ALLOC_INFO_BASE_PTR, sizeof base, &base, nullptr) == UR_RESULT_SUCCESS && base) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(base), p = reinterpret_cast<uintptr_t>(ptr);
    if (p >= b && p - b <= bytes) limit = bytes - (p - b);
  }
  return within(function, size_ok, size, limit, what);
}

ur_result_t check_usm(const char *function, ur_queue_handle_t queue, const void *ptr, size_t size, const char *what) {
  return check_usm(function, queue, ptr, true, size, what);
}

// pitch * height bytes from `ptr`, as UR's layer measures 2-D USM ranges.
ur_result_t check_usm_2d(const char *function, ur_queue_handle_t queue, const void *ptr, size_t pitch, size_t height,
                         const char *what) {
  size_t bytes = 0;
  const bool ok = checked::mul(pitch, height, bytes);
  return check_usm(function, queue, ptr, ok, bytes, what);
}

#define ORDO_CHECK(call)                                                                                               \
  if (ur_result_t r_ = (call)) return r_

ur_result_t UR_APICALL bc_urEnqueueMemBufferRead(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                                 size_t offset, size_t size, void *pDst, uint32_t n,
                                                 const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_buffer("urEnqueueMemBufferRead", hBuffer, offset, size, "offset + size"));
  return g_next.Enqueue.pfnMemBufferRead(hQueue, hBuffer, blocking, offset, size, pDst, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                                  size_t offset, size_t size, const void *pSrc, uint32_t n,
                                                  const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_buffer("urEnqueueMemBufferWrite", hBuffer, offset, size, "offset + size"));
  return g_next.Enqueue.pfnMemBufferWrite(hQueue, hBuffer, blocking, offset, size, pSrc, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferReadRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                                     ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                                     ur_rect_region_t region, size_t bufferRowPitch,
                                                     size_t bufferSlicePitch, size_t hostRowPitch,
                                                     size_t hostSlicePitch, void *pDst, uint32_t n,
                                                     const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_rect("urEnqueueMemBufferReadRect", hBuffer, bufferOrigin, region, bufferRowPitch, bufferSlicePitch,
                        "the buffer side of the rectangle"));
  return g_next.Enqueue.pfnMemBufferReadRect(hQueue, hBuffer, blocking, bufferOrigin, hostOrigin, region,
                                             bufferRowPitch, bufferSlicePitch, hostRowPitch, hostSlicePitch, pDst, n,
                                             waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferWriteRect(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                                      ur_rect_offset_t bufferOrigin, ur_rect_offset_t hostOrigin,
                                                      ur_rect_region_t region, size_t bufferRowPitch,
                                                      size_t bufferSlicePitch, size_t hostRowPitch,
                                                      size_t hostSlicePitch, void *pSrc, uint32_t n,
                                                      const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_rect("urEnqueueMemBufferWriteRect", hBuffer, bufferOrigin, region, bufferRowPitch, bufferSlicePitch,
                        "the buffer side of the rectangle"));
  return g_next.Enqueue.pfnMemBufferWriteRect(hQueue, hBuffer, blocking, bufferOrigin, hostOrigin, region,
                                              bufferRowPitch, bufferSlicePitch, hostRowPitch, hostSlicePitch, pSrc, n,
                                              waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                                 size_t srcOffset, size_t dstOffset, size_t size, uint32_t n,
                                                 const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_buffer("urEnqueueMemBufferCopy", hSrc, srcOffset, size, "srcOffset + size"));
  ORDO_CHECK(check_buffer("urEnqueueMemBufferCopy", hDst, dstOffset, size, "dstOffset + size"));
  return g_next.Enqueue.pfnMemBufferCopy(hQueue, hSrc, hDst, srcOffset, dstOffset, size, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferCopyRect(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc,
                                                     ur_mem_handle_t hDst, ur_rect_offset_t srcOrigin,
                                                     ur_rect_offset_t dstOrigin, ur_rect_region_t region,
                                                     size_t srcRowPitch, size_t srcSlicePitch, size_t dstRowPitch,
                                                     size_t dstSlicePitch, uint32_t n, const ur_event_handle_t *waits,
                                                     ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_rect("urEnqueueMemBufferCopyRect", hSrc, srcOrigin, region, srcRowPitch, srcSlicePitch,
                        "the source rectangle"));
  ORDO_CHECK(check_rect("urEnqueueMemBufferCopyRect", hDst, dstOrigin, region, dstRowPitch, dstSlicePitch,
                        "the destination rectangle"));
  return g_next.Enqueue.pfnMemBufferCopyRect(hQueue, hSrc, hDst, srcOrigin, dstOrigin, region, srcRowPitch,
                                             srcSlicePitch, dstRowPitch, dstSlicePitch, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferFill(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer,
                                                 const void *pPattern, size_t patternSize, size_t offset, size_t size,
                                                 uint32_t n, const ur_event_handle_t *waits,
                                                 ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_buffer("urEnqueueMemBufferFill", hBuffer, offset, size, "offset + size"));
  return g_next.Enqueue.pfnMemBufferFill(hQueue, hBuffer, pPattern, patternSize, offset, size, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemBufferMap(ur_queue_handle_t hQueue, ur_mem_handle_t hBuffer, bool blocking,
                                                ur_map_flags_t flags, size_t offset, size_t size, uint32_t n,
                                                const ur_event_handle_t *waits, ur_event_handle_t *phEvent,
                                                void **ppRetMap) {
  ORDO_CHECK(check_buffer("urEnqueueMemBufferMap", hBuffer, offset, size, "offset + size"));
  return g_next.Enqueue.pfnMemBufferMap(hQueue, hBuffer, blocking, flags, offset, size, n, waits, phEvent, ppRetMap);
}

ur_result_t UR_APICALL bc_urEnqueueMemImageRead(ur_queue_handle_t hQueue, ur_mem_handle_t hImage, bool blocking,
                                                ur_rect_offset_t origin, ur_rect_region_t region, size_t rowPitch,
                                                size_t slicePitch, void *pDst, uint32_t n,
                                                const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_image("urEnqueueMemImageRead", hImage, origin, region, "origin"));
  return g_next.Enqueue.pfnMemImageRead(hQueue, hImage, blocking, origin, region, rowPitch, slicePitch, pDst, n, waits,
                                        phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemImageWrite(ur_queue_handle_t hQueue, ur_mem_handle_t hImage, bool blocking,
                                                 ur_rect_offset_t origin, ur_rect_region_t region, size_t rowPitch,
                                                 size_t slicePitch, void *pSrc, uint32_t n,
                                                 const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_image("urEnqueueMemImageWrite", hImage, origin, region, "origin"));
  return g_next.Enqueue.pfnMemImageWrite(hQueue, hImage, blocking, origin, region, rowPitch, slicePitch, pSrc, n, waits,
                                         phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueMemImageCopy(ur_queue_handle_t hQueue, ur_mem_handle_t hSrc, ur_mem_handle_t hDst,
                                                ur_rect_offset_t srcOrigin, ur_rect_offset_t dstOrigin,
                                                ur_rect_region_t region, uint32_t n, const ur_event_handle_t *waits,
                                                ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_image("urEnqueueMemImageCopy", hSrc, srcOrigin, region, "srcOrigin"));
  ORDO_CHECK(check_image("urEnqueueMemImageCopy", hDst, dstOrigin, region, "dstOrigin"));
  return g_next.Enqueue.pfnMemImageCopy(hQueue, hSrc, hDst, srcOrigin, dstOrigin, region, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueUSMFill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize,
                                           const void *pPattern, size_t size, uint32_t n,
                                           const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_usm("urEnqueueUSMFill", hQueue, pMem, size, "pMem + size"));
  return g_next.Enqueue.pfnUSMFill(hQueue, pMem, patternSize, pPattern, size, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueUSMMemcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst, const void *pSrc,
                                             size_t size, uint32_t n, const ur_event_handle_t *waits,
                                             ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_usm("urEnqueueUSMMemcpy", hQueue, pDst, size, "pDst + size"));
  ORDO_CHECK(check_usm("urEnqueueUSMMemcpy", hQueue, pSrc, size, "pSrc + size"));
  return g_next.Enqueue.pfnUSMMemcpy(hQueue, blocking, pDst, pSrc, size, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueUSMPrefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                               ur_usm_migration_flags_t flags, uint32_t n,
                                               const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_usm("urEnqueueUSMPrefetch", hQueue, pMem, size, "pMem + size"));
  return g_next.Enqueue.pfnUSMPrefetch(hQueue, pMem, size, flags, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueUSMAdvise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                             ur_usm_advice_flags_t advice, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_usm("urEnqueueUSMAdvise", hQueue, pMem, size, "pMem + size"));
  return g_next.Enqueue.pfnUSMAdvise(hQueue, pMem, size, advice, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueUSMFill2D(ur_queue_handle_t hQueue, void *pMem, size_t pitch, size_t patternSize,
                                             const void *pPattern, size_t width, size_t height, uint32_t n,
                                             const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_usm_2d("urEnqueueUSMFill2D", hQueue, pMem, pitch, height, "pMem + pitch * height"));
  return g_next.Enqueue.pfnUSMFill2D(hQueue, pMem, pitch, patternSize, pPattern, width, height, n, waits, phEvent);
}

ur_result_t UR_APICALL bc_urEnqueueUSMMemcpy2D(ur_queue_handle_t hQueue, bool blocking, void *pDst, size_t dstPitch,
                                               const void *pSrc, size_t srcPitch, size_t width, size_t height,
                                               uint32_t n, const ur_event_handle_t *waits, ur_event_handle_t *phEvent) {
  ORDO_CHECK(check_usm_2d("urEnqueueUSMMemcpy2D", hQueue, pDst, dstPitch, height, "pDst + dstPitch * height"));
  ORDO_CHECK(check_usm_2d("urEnqueueUSMMemcpy2D", hQueue, pSrc, srcPitch, height, "pSrc + srcPitch * height"));
  return g_next.Enqueue.pfnUSMMemcpy2D(hQueue, blocking, pDst, dstPitch, pSrc, srcPitch, width, height, n, waits,
                                       phEvent);
}

#undef ORDO_CHECK

} // namespace

void init_bounds_checking_layer(const ur_dditable_t &next, ur_dditable_t &layer) {
  g_next = next;
  layer = next; // every slot it does not check is the next table's own
  ur_enqueue_dditable_t &e = layer.Enqueue;
  e.pfnMemBufferRead = bc_urEnqueueMemBufferRead;
  e.pfnMemBufferWrite = bc_urEnqueueMemBufferWrite;
  e.pfnMemBufferReadRect = bc_urEnqueueMemBufferReadRect;
  e.pfnMemBufferWriteRect = bc_urEnqueueMemBufferWriteRect;
  e.pfnMemBufferCopy = bc_urEnqueueMemBufferCopy;
  e.pfnMemBufferCopyRect = bc_urEnqueueMemBufferCopyRect;
  e.pfnMemBufferFill = bc_urEnqueueMemBufferFill;
  e.pfnMemBufferMap = bc_urEnqueueMemBufferMap;
  e.pfnMemImageRead = bc_urEnqueueMemImageRead;
  e.pfnMemImageWrite = bc_urEnqueueMemImageWrite;
  e.pfnMemImageCopy = bc_urEnqueueMemImageCopy;
  e.pfnUSMFill = bc_urEnqueueUSMFill;
  e.pfnUSMMemcpy = bc_urEnqueueUSMMemcpy;
  e.pfnUSMPrefetch = bc_urEnqueueUSMPrefetch;
  e.pfnUSMAdvise = bc_urEnqueueUSMAdvise;
  e.pfnUSMFill2D = bc_urEnqueueUSMFill2D;
  e.pfnUSMMemcpy2D = bc_urEnqueueUSMMemcpy2D;
}

} // namespace loader
} // namespace ordo
