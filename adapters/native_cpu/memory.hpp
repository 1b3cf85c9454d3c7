// SPDX-License-Identifier: Apache-2.0
// A buffer or sub-buffer: host memory, whose bytes (`data`) every kernel, copy and map
// sees, so nothing ever migrates.
#pragma once
#include <cstddef>
#include <mutex>
#include <vector>

#include "common.hpp"

namespace ordo::native_cpu {

struct Context;

struct Mem : Object<Mem> {
  using handle_type = ur_mem_handle_t;
  static constexpr handle_kind kKind = handle_kind::mem;
  static constexpr ur_result_t kInvalid = UR_RESULT_ERROR_INVALID_MEM_OBJECT;

  // How the bytes came to be, and so who gives them back.
  enum class Storage {
    Owned,    // allocated here: freed with the buffer
    UserHost, // UR_MEM_FLAG_USE_HOST_POINTER: the caller's memory
    Usm,      // a USM allocation given as a native handle: urUSMFree'd if `free_usm`
    Alias,    // the bytes of `parent` (a sub-buffer, a native handle into a buffer)
  };

  // A buffer over [data, data + size); `parent` (held) for Storage::Alias.
  Mem(Context *ctx, char *data, size_t size, ur_mem_flags_t access, Storage storage, Mem *parent = nullptr);
  ~Mem();

  Context *const context; // internal reference
  Mem *const parent;      // internal reference, or null
  char *const data;
  const size_t size;
  const ur_mem_flags_t access; // READ_WRITE, WRITE_ONLY or READ_ONLY (kernel access)
  const Storage storage;
  bool sub_buffer = false; // made by urMemBufferPartition (set before publication)
  bool free_usm = false;   // Storage::Usm: urUSMFree(data) when the buffer goes

  // Maps not yet unmapped (ur_common/buffer_commands.hpp keeps them).
  struct Mapping {
    void *host;
    size_t offset, size;
    bool write_back; // never: a map is the buffer's own bytes
  };
  std::mutex map_mutex;
  std::vector<Mapping> mappings;
  Mem *owner() { return this; }
};
ORDO_HANDLE_CHECK(Mem);

inline ur_mem_handle_t to_handle(Mem *m) { return reinterpret_cast<ur_mem_handle_t>(m); }

// Of every buffer allocated here and of a sub-buffer's origin:
// UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN / 8 (device.cpp).
size_t mem_base_align_bytes();

// Repeats `pattern` over [dst, dst + bytes) from its byte `phase` (enqueue_usm.cpp).
void fill_pattern(char *dst, size_t bytes, const std::vector<char> &pattern, size_t phase = 0);

// A memory-object kernel argument: the buffer of `queue_context` behind `h`, held in
// `held` (none for a null handle). INVALID_MEM_OBJECT for an unknown handle or a buffer
// of another context.
ur_result_t hold_kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *queue_context,
                                std::vector<Ref<Mem>> &held);

} // namespace ordo::native_cpu
