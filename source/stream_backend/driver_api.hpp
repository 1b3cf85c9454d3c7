// SPDX-License-Identifier: Apache-2.0
// The driver interface of the stream backend (docs/architecture.md, "stream backend").
//
// The backend implements the UR API once for every driver whose model is streams,
// events, modules and functions (CUDA's driver API, HIP's runtime API). It calls the
// driver only through the functions declared in namespace `drv` below; each adapter
// that links the backend defines them (adapters/cuda/driver_table.cpp,
// adapters/hip/driver_table.cpp), each a thin call of its driver's entry point with
// the result translated into `status`. Handles are opaque pointers here; an adapter
// casts them to and from its driver's types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ur_api.h"

namespace ordo::stream_backend {

struct native_context;
struct native_stream;
struct native_event;
struct native_module;
struct native_function;
struct native_physical;
using dctx_t = native_context *;
using stream_t = native_stream *;
using event_t = native_event *;
using module_t = native_module *;
using function_t = native_function *;
using phys_t = native_physical *; // a driver handle of physical memory

// What the backend needs to know of a driver error; the driver's own code stays in
// `status::code` for log lines.
enum class err : uint8_t {
  none,
  not_ready, // an event or stream still has work
  not_found, // a module has no function of that name
  out_of_memory,
  invalid_value,
  not_initialized,
  invalid_device,
  invalid_context,
  invalid_image,
  build_failure,
  no_compiler,
  invalid_handle,
  out_of_resources,
  device_lost,
  not_supported,
  already_registered, // host memory registered before (by the caller or another buffer)
  other,
};

// A driver call's outcome. True when it failed, so `if (status s = call()) return ...`.
struct status {
  err kind = err::none;
  int code = 0;
  explicit operator bool() const { return kind != err::none; }
};

// The closest UR result for a driver error (UR_RESULT_SUCCESS for none).
ur_result_t to_ur(status s);

// Device attributes read once at discovery, in the backend's terms.
struct device_facts {
  std::string name;
  std::string pci_address;
  std::string version; // "9.0" (compute capability), "gfx90a", ...
  uint8_t uuid[16] = {};
  uint32_t vendor_id = 0; // PCI vendor id
  uint32_t pci_device_id = 0;
  size_t total_mem = 0;
  int arch_major = 0; // compute capability major on NVIDIA, 0 where it means nothing
  int sm_count = 0, warp_size = 32;
  int max_threads_per_block = 0, block_dim[3] = {}, grid_dim[3] = {};
  int shared_per_block = 0, shared_per_block_optin = 0, regs_per_block = 0;
  int clock_khz = 0, mem_clock_khz = 0, bus_width = 0, l2_size = 0, const_mem = 0;
  int ecc = 0, integrated = 0, managed = 0, concurrent_managed = 0, pageable_access = 0;
  int host_native_atomics = 0, cooperative = 0;
  bool fp16 = false, bf16 = false, async_barrier = false, independent_forward_progress = false;
  bool seq_cst_atomics = false;
  bool virtual_memory = false; // address reservation, physical memory and mapping
};

// The kind of a program image, from its first bytes.
enum class image_kind { ptx, elf, fatbin, offload_bundle, spirv, unknown };
image_kind classify_image(const uint8_t *data, size_t size);
constexpr unsigned image_bit(image_kind k) { return 1u << unsigned(k); }

// What tells one driver's platform from another's.
struct backend_info {
  const char *log_name;     // "cuda": logger name and UR_LOG_<NAME>
  const char *display_name; // "CUDA", in log lines
  ur_backend_t backend;
  const char *platform_name;
  const char *vendor_name;
  const char *binary_target;   // urDeviceSelectBinary's target
  const char *il_version;      // UR_DEVICE_INFO_IL_VERSION
  const char *profile;         // UR_DEVICE_INFO_PROFILE
  const char *ooo_streams_env; // overrides the streams per out-of-order queue
  std::string runtime_version; // "13.0" (filled in at load)
  bool wide_2d_memset;         // memset_2d16/32 exist (else 2-D fills use bytes)
  bool virtual_memory;         // the vm_* and phys_* calls exist (else urVirtualMem* are not offered)
  bool linking;                // link() exists (else urProgramLink is not offered)
  unsigned image_kinds;        // bit (1 << image_kind) for each kind module_load takes
};

enum class func_attr { max_threads_per_block, shared_size_bytes, local_size_bytes, num_regs };
enum class mem_advice {
  set_read_mostly,
  unset_read_mostly,
  set_preferred_location,
  unset_preferred_location,
  set_accessed_by,
  unset_accessed_by,
};

// The adapter's facts (drv::describe) with the runtime version found at load; valid
// before the driver is loaded (the version is empty then).
const backend_info &info();

// What the driver's loader/JIT is asked for (program.cpp parses the UR build options).
struct jit_request {
  int opt_level = -1;         // -O0..-O4, or -1: the driver's default
  unsigned max_registers = 0; // --maxrregcount=N, or 0: no limit
  char *info_log = nullptr;   // buffers of log_size bytes for the driver's messages
  char *error_log = nullptr;
  size_t log_size = 0;
};

// Implemented by each adapter.
namespace drv {

backend_info describe();
// Opens the driver library and initialises it; false with `why` (one line) when
// there is no usable driver. `runtime_version`: "13.0", for the info queries.
bool load(std::string &why, std::string &runtime_version);
// After load() failed: true when the backend is simply not installed here (no runtime
// library, a stub, no device), false when it is installed but broken.
bool not_installed();
std::string error_text(status s); // "CUDA_ERROR_OUT_OF_MEMORY (2)"

status device_count(int *count);
status device_get(int ordinal, int *native);
void read_facts(int native, device_facts &facts);
status primary_context(int native, dctx_t *out);
status get_current(dctx_t *out);
status set_current(dctx_t ctx);
status synchronize_current();
status mem_get_info(size_t *free_bytes, size_t *total);

status stream_priority_range(int *least, int *greatest);
status stream_create(stream_t *out, bool sync_with_default, int priority);
stream_t default_stream(); // the per-device stream that synchronises with others
status stream_destroy(stream_t s);
status stream_synchronize(stream_t s);
status stream_query(stream_t s); // err::not_ready while work remains
status stream_wait_event(stream_t s, event_t e);

status event_create(event_t *out, bool timing);
status event_destroy(event_t e);
status event_record(event_t e, stream_t s);
status event_query(event_t e); // err::not_ready while incomplete
status event_synchronize(event_t e);
status event_elapsed_ms(float *ms, event_t from, event_t to);

status alloc_device(void **out, size_t size);
status alloc_host(void **out, size_t size); // pinned, portable, mapped
status alloc_managed(void **out, size_t size);
status free_device(void *p); // device and managed memory
status free_host(void *p);
// Page-locks the caller's memory, portable and mapped (read-only for devices if asked).
status host_register(void *p, size_t size, bool read_only);
status host_unregister(void *p);
bool is_managed(const void *p);
// The driver allocation holding `p`: its first byte and size.
status address_range(const void *p, void **base, size_t *size);
// Inter-process handles of device allocations (64 opaque bytes); opening one maps the
// allocation of another process into the current context's address space.
constexpr size_t kIpcHandleBytes = 64;
status ipc_get(void *base, unsigned char (&handle)[kIpcHandleBytes]);
status ipc_open(void **base, const unsigned char (&handle)[kIpcHandleBytes]);
status ipc_close(void *base);

status memcpy_async(void *dst, const void *src, size_t size, stream_t s);
// Pageable host memory included on either side.
status memcpy_2d_async(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t width, size_t height,
                       stream_t s);
status memset_8(void *dst, uint8_t v, size_t count, stream_t s);
status memset_16(void *dst, uint16_t v, size_t count, stream_t s);
status memset_32(void *dst, uint32_t v, size_t count, stream_t s);
status memset_2d8(void *dst, size_t pitch, uint8_t v, size_t width, size_t height, stream_t s);
status memset_2d16(void *dst, size_t pitch, uint16_t v, size_t width, size_t height, stream_t s);
status memset_2d32(void *dst, size_t pitch, uint32_t v, size_t width, size_t height, stream_t s);
// Peer access between two devices (native handles): whether `native` can access `peer`'s
// memory, and whether atomics work across that link.
status peer_query(int native, int peer, bool *access, bool *atomics);
// With `native`'s context current: maps all of `peer`'s memory into it, or unmaps it
// (`peer_ctx`: the peer's primary context). The driver's "already enabled" and "not
// enabled" answers are successes here: the backend keeps the state.
status peer_enable(int peer, dctx_t peer_ctx);
status peer_disable(int peer, dctx_t peer_ctx);
status prefetch(const void *p, size_t size, bool to_host, int device_ordinal, stream_t s);

// Virtual memory (where backend_info::virtual_memory): address ranges reserved without
// backing, physical memory of one device, pieces of it mapped into reserved ranges, and
// the access each device has to a mapped range. Sizes and offsets are multiples of
// vm_granularity. Access: 0 none, 1 read, 3 read and write.
status vm_granularity(int native, bool recommended, size_t *out);
status vm_reserve(void **out, size_t size, const void *hint);
status vm_free(void *p, size_t size);
// `shareable`: exportable as a file descriptor (phys_export_fd) for another process.
status phys_create(phys_t *out, size_t size, int native, bool shareable);
status phys_export_fd(phys_t h, int *fd);   // a new descriptor of this process
status phys_import_fd(phys_t *out, int fd); // the descriptor stays the caller's
status phys_release(phys_t h);
status vm_map(void *p, size_t size, phys_t h, size_t offset);
status vm_unmap(void *p, size_t size);
status vm_set_access(void *p, size_t size, int native, int access);
status advise(const void *p, size_t size, mem_advice a, bool host, int device_ordinal);

// Loads an image (PTX NUL-terminated); the driver writes its messages to the
// request's log buffers.
status module_load(module_t *out, const std::vector<uint8_t> &image, const jit_request &jit);
status module_unload(module_t m);
// Links images (PTX NUL-terminated, cubins, fatbinaries) into one cubin; the driver
// writes its messages to the request's log buffers.
status link(const std::vector<const std::vector<uint8_t> *> &parts, const jit_request &jit, std::vector<uint8_t> &out);
status module_get_function(function_t *out, module_t m, const char *name);
// A global variable of a module: its device address and size; err::not_found where the
// module has none of that name.
status module_get_global(void **out, size_t *size, module_t m, const char *name);
// Every function of a module; err::not_supported where the driver cannot list them.
status module_function_names(module_t m, std::vector<std::string> &names);
// Parameter sizes in order; err::not_supported where the driver cannot tell.
status function_param_sizes(function_t f, std::vector<size_t> &sizes);
int function_attribute(function_t f, func_attr a);
status function_set_max_dynamic_shared(function_t f, int bytes);
status launch(function_t f, const size_t grid[3], const size_t block[3], unsigned shared, stream_t s, void **params,
              bool cooperative);
status occupancy_max_blocks(int *blocks, function_t f, int threads, size_t shared);

} // namespace drv
} // namespace ordo::stream_backend
