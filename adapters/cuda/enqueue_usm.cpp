// USM commands: fill, copy (1-D and 2-D), prefetch and advice.
#include <cstring>
#include <vector>

#include "common.hpp"
#include "entry_points.hpp"

namespace ordo::cuda {

namespace {

// The smallest period (1, 2 or 4 bytes) a pattern repeats with, or its own size.
size_t pattern_period(const uint8_t *p, size_t size) {
  for (size_t period : {size_t{1}, size_t{2}, size_t{4}}) {
    if (period >= size || size % period) continue;
    bool repeats = true;
    for (size_t i = period; i < size && repeats; ++i) repeats = p[i] == p[i - period];
    if (repeats) return period;
  }
  return size;
}

// Fills `count` back-to-back copies of a `size`-byte pattern at `dst`. The
// memset engines write 1, 2 or 4 bytes; longer patterns become one strided 2-D
// memset per 4-, 2- or 1-byte word of the pattern (pitch = pattern size).
CUresult fill_patterns(CUdeviceptr dst, const uint8_t *pattern, size_t size, size_t count,
                       CUstream s) {
  Driver &cu = drv();
  if (count == 0) return CUDA_SUCCESS;
  size_t period = pattern_period(pattern, size);
  size_t words = count * (size / period);
  if (period == 1) return cu.cuMemsetD8Async(dst, pattern[0], words, s);
  if (period == 2 && dst % 2 == 0) {
    uint16_t v;
    std::memcpy(&v, pattern, 2);
    return cu.cuMemsetD16Async(dst, v, words, s);
  }
  if (period == 4 && dst % 4 == 0) {
    uint32_t v;
    std::memcpy(&v, pattern, 4);
    return cu.cuMemsetD32Async(dst, v, words, s);
  }
  size_t step = (size % 4 == 0 && dst % 4 == 0) ? 4 : (size % 2 == 0 && dst % 2 == 0) ? 2 : 1;
  for (size_t off = 0; off < size; off += step) {
    CUresult r;
    if (step == 4) {
      uint32_t v;
      std::memcpy(&v, pattern + off, 4);
      r = cu.cuMemsetD2D32Async(dst + off, size, v, 1, count, s);
    } else if (step == 2) {
      uint16_t v;
      std::memcpy(&v, pattern + off, 2);
      r = cu.cuMemsetD2D16Async(dst + off, size, v, 1, count, s);
    } else {
      r = cu.cuMemsetD2D8Async(dst + off, size, pattern[off], 1, count, s);
    }
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

// Fills `len` bytes at `dst` with the pattern, starting `phase` bytes into it.
CUresult fill_run(CUdeviceptr dst, const uint8_t *pattern, size_t size, size_t phase, size_t len,
                  CUstream s) {
  if (phase == 0 && len % size == 0) return fill_patterns(dst, pattern, size, len / size, s);
  std::vector<uint8_t> rotated(size);
  for (size_t i = 0; i < size; ++i) rotated[i] = pattern[(phase + i) % size];
  size_t full = len / size;
  if (CUresult r = fill_patterns(dst, rotated.data(), size, full, s)) return r;
  for (size_t j = 0; j < len % size; ++j)
    if (CUresult r = drv().cuMemsetD8Async(dst + full * size + j, rotated[j], 1, s)) return r;
  return CUDA_SUCCESS;
}

// A 2-D copy operand: memory the driver knows is addressed through UVA, anything
// else (pageable host memory) as host memory.
void set_operand(bool is_src, const void *ptr, size_t pitch, CUDA_MEMCPY2D &c) {
  unsigned type = 0;
  bool known = drv().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                           reinterpret_cast<CUdeviceptr>(ptr)) == CUDA_SUCCESS;
  CUmemorytype t = known ? CU_MEMORYTYPE_UNIFIED : CU_MEMORYTYPE_HOST;
  if (is_src) {
    c.srcMemoryType = t;
    c.srcPitch = pitch;
    if (known) c.srcDevice = reinterpret_cast<CUdeviceptr>(ptr);
    else c.srcHost = ptr;
  } else {
    c.dstMemoryType = t;
    c.dstPitch = pitch;
    if (known) c.dstDevice = reinterpret_cast<CUdeviceptr>(ptr);
    else c.dstHost = const_cast<void *>(ptr);
  }
}

bool is_managed(const void *ptr) {
  unsigned managed = 0;
  return drv().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                     reinterpret_cast<CUdeviceptr>(ptr)) == CUDA_SUCCESS &&
         managed;
}

bool overlap(const void *a, const void *b, size_t n) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + n && y < x + n;
}

} // namespace

ur_result_t UR_APICALL urEnqueueUSMFill(ur_queue_handle_t hQueue, void *pMem, size_t patternSize,
                                        const void *pPattern, size_t size, uint32_t numEventsInWaitList,
                                        const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (patternSize == 0 || size == 0 || patternSize > size || size % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  Command cmd(q, UR_COMMAND_USM_FILL, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  return cmd.finish(check(fill_patterns(reinterpret_cast<CUdeviceptr>(pMem),
                                        static_cast<const uint8_t *>(pPattern), patternSize,
                                        size / patternSize, cmd.stream())));
}

ur_result_t UR_APICALL urEnqueueUSMFill2D(ur_queue_handle_t hQueue, void *pMem, size_t pitch,
                                          size_t patternSize, const void *pPattern, size_t width,
                                          size_t height, uint32_t numEventsInWaitList,
                                          const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem || !pPattern) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pitch == 0 || pitch < width || patternSize == 0 || width == 0 || height == 0 ||
      patternSize > width * height || (patternSize & (patternSize - 1)) != 0 ||
      (width * height) % patternSize != 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  Command cmd(q, UR_COMMAND_USM_FILL_2D, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  auto dst = reinterpret_cast<CUdeviceptr>(pMem);
  auto pattern = static_cast<const uint8_t *>(pPattern);
  CUresult r = CUDA_SUCCESS;
  size_t period = pattern_period(pattern, patternSize);
  if (width % patternSize == 0 && period <= 4 && dst % period == 0 && pitch % period == 0) {
    // One 2-D memset covers the whole region.
    size_t w = width / period;
    if (period == 1) r = drv().cuMemsetD2D8Async(dst, pitch, pattern[0], w, height, cmd.stream());
    else if (period == 2) {
      uint16_t v;
      std::memcpy(&v, pattern, 2);
      r = drv().cuMemsetD2D16Async(dst, pitch, v, w, height, cmd.stream());
    } else {
      uint32_t v;
      std::memcpy(&v, pattern, 4);
      r = drv().cuMemsetD2D32Async(dst, pitch, v, w, height, cmd.stream());
    }
  } else {
    // Row by row; the pattern runs on across rows as over one flat range.
    for (size_t row = 0; row < height && r == CUDA_SUCCESS; ++row)
      r = fill_run(dst + row * pitch, pattern, patternSize, (row * width) % patternSize, width,
                   cmd.stream());
  }
  return cmd.finish(check(r));
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy(ur_queue_handle_t hQueue, bool blocking, void *pDst,
                                          const void *pSrc, size_t size, uint32_t numEventsInWaitList,
                                          const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  if (overlap(pDst, pSrc, size)) return UR_RESULT_ERROR_OVERLAPPING_REGIONS;
  Command cmd(q, UR_COMMAND_USM_MEMCPY, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  CUstream stream = cmd.stream();
  ur_result_t r = cmd.finish(check(drv().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(pDst),
                                                       reinterpret_cast<CUdeviceptr>(pSrc), size, stream)));
  if (r == UR_RESULT_SUCCESS && blocking) r = check(drv().cuStreamSynchronize(stream));
  return r;
}

ur_result_t UR_APICALL urEnqueueUSMMemcpy2D(ur_queue_handle_t hQueue, bool blocking, void *pDst,
                                            size_t dstPitch, const void *pSrc, size_t srcPitch,
                                            size_t width, size_t height, uint32_t numEventsInWaitList,
                                            const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pDst || !pSrc) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (srcPitch == 0 || dstPitch == 0 || srcPitch < width || dstPitch < width || height == 0)
    return UR_RESULT_ERROR_INVALID_SIZE;
  Command cmd(q, UR_COMMAND_USM_MEMCPY_2D, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  CUstream stream = cmd.stream();
  CUresult cr = CUDA_SUCCESS;
  if (width > 0) {
    CUDA_MEMCPY2D c{};
    set_operand(true, pSrc, srcPitch, c);
    set_operand(false, pDst, dstPitch, c);
    c.WidthInBytes = width;
    c.Height = height;
    cr = drv().cuMemcpy2DAsync(&c, stream);
  }
  ur_result_t r = cmd.finish(check(cr));
  if (r == UR_RESULT_SUCCESS && blocking) r = check(drv().cuStreamSynchronize(stream));
  return r;
}

ur_result_t UR_APICALL urEnqueueUSMPrefetch(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                            ur_usm_migration_flags_t flags, uint32_t numEventsInWaitList,
                                            const ur_event_handle_t *phEventWaitList, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (flags & UR_USM_MIGRATION_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  Command cmd(q, UR_COMMAND_USM_PREFETCH, numEventsInWaitList, phEventWaitList, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  CUresult r = CUDA_SUCCESS;
  // Only managed memory migrates; for anything else the hint has nothing to do.
  if (q->dev->facts.concurrent_managed && is_managed(pMem)) {
    CUmemLocation loc{};
    if (flags & UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST) {
      loc.type = CU_MEM_LOCATION_TYPE_HOST;
    } else {
      loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
      loc.id = q->dev->ordinal;
    }
    r = drv().cuMemPrefetchAsync(reinterpret_cast<CUdeviceptr>(pMem), size, loc, 0, cmd.stream());
  }
  return cmd.finish(check(r));
}

ur_result_t UR_APICALL urEnqueueUSMAdvise(ur_queue_handle_t hQueue, const void *pMem, size_t size,
                                          ur_usm_advice_flags_t advice, ur_event_handle_t *phEvent) {
  ORDO_UNWRAP(Queue, q, hQueue);
  if (!pMem) return UR_RESULT_ERROR_INVALID_NULL_POINTER;
  if (advice & UR_USM_ADVICE_FLAGS_MASK) return UR_RESULT_ERROR_INVALID_ENUMERATION;
  if (size == 0) return UR_RESULT_ERROR_INVALID_SIZE;
  Command cmd(q, UR_COMMAND_USM_ADVISE, 0, nullptr, phEvent);
  if (cmd.status() != UR_RESULT_SUCCESS) return cmd.status();
  if (!is_managed(pMem)) return cmd.finish(); // advice concerns managed memory only

  CUmemLocation device{}, host{};
  device.type = CU_MEM_LOCATION_TYPE_DEVICE;
  device.id = q->dev->ordinal;
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  struct Mapping {
    ur_usm_advice_flags_t flag;
    CUmem_advise advise;
    const CUmemLocation *loc;
  };
  const Mapping table[] = {
      {UR_USM_ADVICE_FLAG_SET_READ_MOSTLY, CU_MEM_ADVISE_SET_READ_MOSTLY, &device},
      {UR_USM_ADVICE_FLAG_CLEAR_READ_MOSTLY, CU_MEM_ADVISE_UNSET_READ_MOSTLY, &device},
      {UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, &device},
      {UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, &device},
      {UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION_HOST, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, &host},
      {UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION_HOST, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, &host},
      {UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_DEVICE, CU_MEM_ADVISE_SET_ACCESSED_BY, &device},
      {UR_USM_ADVICE_FLAG_CLEAR_ACCESSED_BY_DEVICE, CU_MEM_ADVISE_UNSET_ACCESSED_BY, &device},
      {UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_HOST, CU_MEM_ADVISE_SET_ACCESSED_BY, &host},
      {UR_USM_ADVICE_FLAG_CLEAR_ACCESSED_BY_HOST, CU_MEM_ADVISE_UNSET_ACCESSED_BY, &host},
  };
  auto ptr = reinterpret_cast<CUdeviceptr>(pMem);
  if (advice & UR_USM_ADVICE_FLAG_DEFAULT) {
    // Back to no advice at all.
    drv().cuMemAdvise(ptr, size, CU_MEM_ADVISE_UNSET_READ_MOSTLY, device);
    drv().cuMemAdvise(ptr, size, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, device);
    drv().cuMemAdvise(ptr, size, CU_MEM_ADVISE_UNSET_ACCESSED_BY, device);
    drv().cuMemAdvise(ptr, size, CU_MEM_ADVISE_UNSET_ACCESSED_BY, host);
  }
  for (const Mapping &m : table) {
    if (!(advice & m.flag)) continue;
    // Advice is a hint: one the driver declines for this device is not an error.
    if (CUresult r = drv().cuMemAdvise(ptr, size, m.advise, *m.loc))
      ORDO_LOG(logger(), debug, "cuMemAdvise(%d) declined: %s", int(m.advise), error_text(r).c_str());
  }
  // Non-atomic-mostly, cache bias and coherence hints have no CUDA counterpart.
  return cmd.finish();
}

} // namespace ordo::cuda
