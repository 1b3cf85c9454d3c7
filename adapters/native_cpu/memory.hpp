// SPDX-License-Identifier: Apache-2.0
// A memory object: a buffer or a sub-buffer. Every buffer is host memory: the bytes a
// kernel, a copy or a map sees are the buffer's own `data`, so nothing ever migrates.
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
    Owned,    // allocated here (posix_memalign): freed with the buffer
    UserHost, // UR_MEM_FLAG_USE_HOST_POINTER: the caller's memory, never freed here
    Usm,      // a USM allocation of the context given as a native handle: freed with the
              // buffer through urUSMFree only if ownership was given (`free_usm`)
    Alias,    // another buffer's bytes (a sub-buffer, or a native handle into a buffer):
              // that buffer (`parent`) is kept alive
  };

  // A buffer over [data, data + size). `parent` (internal reference taken) is the
  // buffer whose bytes these are, for Storage::Alias.
  Mem(Context *ctx, char *data, size_t size, ur_mem_flags_t access, Storage storage, Mem *parent = nullptr);
  ~Mem();
  void on_user_released() {}

  Context *const context; // internal reference
  Mem *const parent;      // internal reference, or null
  char *const data;
  const size_t size;
  const ur_mem_flags_t access; // READ_WRITE, WRITE_ONLY or READ_ONLY (kernel access)
  const Storage storage;
  bool sub_buffer = false; // made by urMemBufferPartition (set before publication)
  bool free_usm = false;   // Storage::Usm: urUSMFree(data) when the buffer goes

  // The maps of urEnqueueMemBufferMap not yet ended by urEnqueueMemUnmap, one entry per
  // map (ur_common/buffer_commands.hpp keeps them; each buffer its own).
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

// Alignment of every buffer this adapter allocates, and the alignment a sub-buffer's
// origin must have: UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN / 8 (device.cpp).
size_t mem_base_align_bytes();

// Repeats `pattern` over [dst, dst + bytes), starting at byte `phase` of the pattern: the
// fill commands of buffers and USM (enqueue_usm.cpp).
void fill_pattern(char *dst, size_t bytes, const std::vector<char> &pattern, size_t phase = 0);

// A memory-object kernel argument (UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ): the buffer of
// `queue_context` behind `h`, with an internal reference in `held`; null for a null
// handle (the kernel gets a null pointer). INVALID_MEM_OBJECT for an unknown handle or
// a buffer of another context.
ur_result_t hold_kernel_mem_arg(ur_mem_handle_t h, ur_mem_flags_t flags, Context *queue_context,
                                std::vector<Ref<Mem>> &held);

} // namespace ordo::native_cpu
