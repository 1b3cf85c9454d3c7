// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the conformance tests: names, queues, USM, kernel arguments, and
// the generic *GetInfo check.
#include <cctype>
#include <cstring>
#include <set>

#include "conformance.hpp"

namespace conf {

bool result_in(ur_result_t r, std::initializer_list<ur_result_t> allowed) {
  for (ur_result_t a : allowed)
    if (a == r) return true;
  return false;
}

std::string results_text(std::initializer_list<ur_result_t> allowed) {
  std::string s;
  for (ur_result_t a : allowed) s += (s.empty() ? "" : ", ") + urinfo::result_name(a);
  return s;
}

std::string sanitize(const std::string &in) {
  std::string out;
  for (char c : in) {
    bool ok = std::isalnum(static_cast<unsigned char>(c));
    if (ok)
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "unnamed" : out;
}

std::string device_param_name(const urinfo::FoundDevice &d) {
  return sanitize(d.backend_name) + "_" + std::to_string(d.backend_index) + "_" + sanitize(d.name);
}

std::vector<const urinfo::InfoQuery *> queries_of(const char *info_enum) {
  std::vector<const urinfo::InfoQuery *> out;
  for (const urinfo::InfoQuery &q : urinfo::info_table(info_enum)) out.push_back(&q);
  return out;
}

bool device_has_queue_flag(ur_device_handle_t device, ur_queue_flag_t flag) {
  ur_queue_flags_t flags = 0;
  if (info(device, UR_DEVICE_INFO_QUEUE_PROPERTIES, flags) != UR_RESULT_SUCCESS) return false;
  return (flags & flag) != 0;
}

ur_result_t make_queue(ur_context_handle_t context, ur_device_handle_t device, ur_queue_flags_t flags,
                       ur_queue_handle_t *queue) {
  ur_queue_properties_t props{UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, nullptr, flags};
  return urQueueCreate(context, device, flags ? &props : nullptr, queue);
}

bool usm_supported(ur_device_handle_t device, ur_usm_type_t kind) {
  ur_device_info_t q = kind == UR_USM_TYPE_HOST     ? UR_DEVICE_INFO_USM_HOST_SUPPORT
                       : kind == UR_USM_TYPE_DEVICE ? UR_DEVICE_INFO_USM_DEVICE_SUPPORT
                                                    : UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT;
  ur_device_usm_access_capability_flags_t caps = 0;
  if (info(device, q, caps) != UR_RESULT_SUCCESS) return false;
  return (caps & UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS) != 0;
}

ur_result_t usm_alloc(ur_context_handle_t context, ur_device_handle_t device, ur_usm_type_t kind, size_t size,
                      void **ptr, uint32_t align) {
  ur_usm_desc_t desc{UR_STRUCTURE_TYPE_USM_DESC, nullptr, 0, align};
  const ur_usm_desc_t *d = align ? &desc : nullptr;
  switch (kind) {
  case UR_USM_TYPE_HOST: return urUSMHostAlloc(context, d, nullptr, size, ptr);
  case UR_USM_TYPE_DEVICE: return urUSMDeviceAlloc(context, device, d, nullptr, size, ptr);
  default: return urUSMSharedAlloc(context, device, d, nullptr, size, ptr);
  }
}

const char *usm_kind_name(ur_usm_type_t kind) {
  switch (kind) {
  case UR_USM_TYPE_HOST: return "host";
  case UR_USM_TYPE_DEVICE: return "device";
  case UR_USM_TYPE_SHARED: return "shared";
  default: return "unknown";
  }
}

namespace {
template <class H, class E, class F> uint32_t count_of(H h, E query, F get) {
  uint32_t n = 0;
  if (get(h, query, sizeof n, &n, nullptr) != UR_RESULT_SUCCESS) return 0;
  return n;
}
} // namespace

uint32_t reference_count(ur_context_handle_t h) {
  return count_of(h, UR_CONTEXT_INFO_REFERENCE_COUNT, urContextGetInfo);
}
uint32_t reference_count(ur_queue_handle_t h) { return count_of(h, UR_QUEUE_INFO_REFERENCE_COUNT, urQueueGetInfo); }
uint32_t reference_count(ur_event_handle_t h) { return count_of(h, UR_EVENT_INFO_REFERENCE_COUNT, urEventGetInfo); }
uint32_t reference_count(ur_program_handle_t h) {
  return count_of(h, UR_PROGRAM_INFO_REFERENCE_COUNT, urProgramGetInfo);
}
uint32_t reference_count(ur_kernel_handle_t h) { return count_of(h, UR_KERNEL_INFO_REFERENCE_COUNT, urKernelGetInfo); }
uint32_t reference_count(ur_device_handle_t h) { return count_of(h, UR_DEVICE_INFO_REFERENCE_COUNT, urDeviceGetInfo); }
uint32_t reference_count(ur_adapter_handle_t h) {
  return count_of(h, UR_ADAPTER_INFO_REFERENCE_COUNT, urAdapterGetInfo);
}

ur_event_status_t event_status(ur_event_handle_t e) {
  ur_event_status_t s = UR_EVENT_STATUS_FORCE_UINT32;
  urEventGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
  return s;
}

ur_exp_kernel_arg_properties_t arg_pointer(uint32_t index, const void *ptr) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_POINTER;
  a.index = index;
  a.size = sizeof(void *);
  a.value.pointer = ptr;
  return a;
}

ur_exp_kernel_arg_properties_t arg_value(uint32_t index, size_t size, const void *value) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_VALUE;
  a.index = index;
  a.size = size;
  a.value.value = value;
  return a;
}

ur_exp_kernel_arg_properties_t arg_local(uint32_t index, size_t size) {
  ur_exp_kernel_arg_properties_t a{};
  a.stype = UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES;
  a.type = UR_EXP_KERNEL_ARG_TYPE_LOCAL;
  a.index = index;
  a.size = size;
  a.value.value = nullptr;
  return a;
}

// ---- the generic *GetInfo check ---------------------------------------------------

namespace {

int64_t element_signed(const unsigned char *p, size_t n) {
  switch (n) {
  case 1: return static_cast<int8_t>(p[0]);
  case 2: {
    int16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    int64_t v = 0;
    std::memcpy(&v, p, n < 8 ? n : 8);
    return v;
  }
  }
}

uint64_t element_unsigned(const unsigned char *p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n < 8 ? n : 8);
  if (n < 8) v &= (uint64_t(1) << (8 * n)) - 1;
  return v;
}

// What the query's type says about the value's bytes.
void check_value(const urinfo::InfoQuery &q, const std::vector<unsigned char> &v, bool null_handle_ok, bool raw_bytes) {
  if (raw_bytes) return;
  if (q.kind == urinfo::ValueKind::String) {
    ASSERT_FALSE(v.empty()) << q.name << ": a string is at least its terminator";
    EXPECT_EQ('\0', static_cast<char>(v.back())) << q.name << ": string not terminated";
    EXPECT_EQ(v.size() - 1, strnlen(reinterpret_cast<const char *>(v.data()), v.size()))
        << q.name << ": size must be the string's length + 1";
    return;
  }
  const size_t n = v.size() / q.elem_size;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char *p = v.data() + i * q.elem_size;
    switch (q.kind) {
    case urinfo::ValueKind::Bool:
      EXPECT_LE(element_unsigned(p, q.elem_size), 1u) << q.name << "[" << i << "]: a ur_bool_t is 0 or 1";
      break;
    case urinfo::ValueKind::Enum:
      EXPECT_TRUE(urinfo::is_known_enumerator(q.enum_name, element_signed(p, q.elem_size)))
          << q.name << "[" << i << "] = " << element_signed(p, q.elem_size) << " is no " << q.enum_name;
      break;
    case urinfo::ValueKind::Flags:
      EXPECT_EQ(0u, urinfo::unknown_flag_bits(q.enum_name, element_unsigned(p, q.elem_size)))
          << q.name << "[" << i << "] has bits no " << q.enum_name
          << " names: " << urinfo::flags_text(q.enum_name, element_unsigned(p, q.elem_size));
      break;
    case urinfo::ValueKind::Handle:
      if (!null_handle_ok) {
        EXPECT_NE(0u, element_unsigned(p, q.elem_size)) << q.name << "[" << i << "]: null handle";
      }
      break;
    default: break;
    }
  }
}

} // namespace

void check_info_query(const urinfo::InfoQuery &q, const InfoCall &call, const InfoCheckOptions &options,
                      std::vector<unsigned char> *value_out, ur_result_t *result_out) {
  size_t size = 0;
  ur_result_t r = call(q.id, 0, nullptr, &size);
  if (result_out) *result_out = r;
  for (ur_result_t allowed : options.also_allowed)
    if (r == allowed) return;
  ASSERT_EQ(UR_RESULT_SUCCESS, r) << q.name << ": size query";

  // The size must fit the type.
  const bool is_string = q.kind == urinfo::ValueKind::String && !options.raw_bytes;
  if (is_string) {
    ASSERT_GE(size, 1u) << q.name << ": a string query reports at least the terminator";
  } else if (q.kind == urinfo::ValueKind::String) {
    // bytes: any size
  } else if (q.fixed_size()) {
    ASSERT_EQ(q.fixed_bytes(), size) << q.name << " is " << q.type;
  } else {
    ASSERT_EQ(0u, size % q.elem_size) << q.name << " is " << q.type << ": size must be a multiple of " << q.elem_size;
  }
  if (size == 0) return; // an empty array: nothing more to read

  // Exact size; a larger buffer; then one byte short.
  std::vector<unsigned char> value(size, 0xA5);
  size_t size_ret = 0;
  ASSERT_EQ(UR_RESULT_SUCCESS, call(q.id, size, value.data(), &size_ret)) << q.name;
  EXPECT_EQ(size, size_ret) << q.name << ": size reported with the value";

  std::vector<unsigned char> larger(size + 16, 0xA5);
  size_ret = 0;
  ASSERT_EQ(UR_RESULT_SUCCESS, call(q.id, larger.size(), larger.data(), &size_ret)) << q.name << ": larger buffer";
  EXPECT_EQ(size, size_ret) << q.name << ": the size is the value's, not the buffer's";

  std::vector<unsigned char> small(size - 1 ? size - 1 : 1, 0x5A);
  ur_result_t rs = call(q.id, size - 1, small.data(), nullptr);
  if (size - 1 == 0) {
    // propSize 0 with a buffer: the parameter rules answer INVALID_SIZE (INVALID_VALUE
    // for the few calls whose rule says so).
    EXPECT_TRUE(result_in(rs, {UR_RESULT_ERROR_INVALID_SIZE, UR_RESULT_ERROR_INVALID_VALUE}))
        << q.name << ": propSize 0 gave " << urinfo::result_name(rs);
  } else {
    EXPECT_EQ(UR_RESULT_ERROR_INVALID_SIZE, rs) << q.name << ": buffer one byte short";
    for (size_t i = 0; i < size - 1; ++i)
      if (small[i] != 0x5A) {
        ADD_FAILURE() << q.name << ": a buffer that is too small was written to";
        break;
      }
  }

  check_value(q, value, options.null_handle_ok, options.raw_bytes);
  if (value_out) *value_out = value;
}

} // namespace conf
