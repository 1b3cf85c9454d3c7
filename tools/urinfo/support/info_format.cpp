// SPDX-License-Identifier: Apache-2.0
// Lookups over the generated tables and the text form of queried values.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "info_tables.hpp"

namespace urinfo {

const InfoQuery *InfoTable::find(uint32_t id) const {
  for (const InfoQuery &q : *this)
    if (q.id == id) return &q;
  return nullptr;
}

const EnumType *find_enum(const std::string &name) {
  const EnumType *types = enum_types_begin();
  for (size_t i = 0; i < enum_type_count(); ++i)
    if (name == types[i].name) return &types[i];
  return nullptr;
}

const InfoTable *find_info_table(const std::string &name) {
  const InfoTable *tables = info_tables_begin();
  for (size_t i = 0; i < info_table_count(); ++i)
    if (name == tables[i].name) return &tables[i];
  return nullptr;
}

const InfoTable &info_table(const std::string &name) {
  const InfoTable *t = find_info_table(name);
  if (!t) {
    std::fprintf(stderr, "urinfo: no generated query table for %s\n", name.c_str());
    std::abort();
  }
  return *t;
}

std::string enumerator_name(const std::string &enum_name, int64_t value) {
  if (const EnumType *e = find_enum(enum_name))
    for (size_t i = 0; i < e->count; ++i)
      if (e->etors[i].value == value) return e->etors[i].name;
  return std::to_string(value);
}

std::string result_name(ur_result_t result) { return enumerator_name("ur_result_t", static_cast<int64_t>(result)); }

bool is_known_enumerator(const std::string &enum_name, int64_t value) {
  if (const EnumType *e = find_enum(enum_name))
    for (size_t i = 0; i < e->count; ++i)
      if (e->etors[i].value == value) return true;
  return false;
}

uint64_t unknown_flag_bits(const std::string &flags_name, uint64_t bits) {
  const EnumType *e = find_enum(flags_name);
  if (!e) return bits;
  for (size_t i = 0; i < e->count; ++i) bits &= ~static_cast<uint64_t>(e->etors[i].value);
  return bits;
}

std::string flags_text(const std::string &flags_name, uint64_t bits) {
  if (bits == 0) return "0";
  std::string out;
  auto add = [&](const std::string &s) {
    if (!out.empty()) out += " | ";
    out += s;
  };
  if (const EnumType *e = find_enum(flags_name)) {
    for (size_t i = 0; i < e->count; ++i) {
      uint64_t bit = static_cast<uint64_t>(e->etors[i].value);
      if (bit != 0 && (bits & bit) == bit) add(e->etors[i].name);
    }
  }
  uint64_t unknown = unknown_flag_bits(flags_name, bits);
  if (unknown) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, unknown);
    add(buf);
  }
  return out;
}

namespace {

uint64_t read_unsigned(const unsigned char *p, size_t n) {
  switch (n) {
  case 1: return *p;
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    uint64_t v = 0;
    std::memcpy(&v, p, n < 8 ? n : 8);
    return v;
  }
  }
}

int64_t read_signed(const unsigned char *p, size_t n) {
  switch (n) {
  case 1: return static_cast<int8_t>(*p);
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

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string element_text(const InfoQuery &q, const unsigned char *p) {
  switch (q.kind) {
  case ValueKind::Unsigned: return std::to_string(read_unsigned(p, q.elem_size));
  case ValueKind::Signed: return std::to_string(read_signed(p, q.elem_size));
  case ValueKind::Bool: return read_unsigned(p, q.elem_size) ? "true" : "false";
  case ValueKind::Enum: return enumerator_name(q.enum_name, read_signed(p, q.elem_size));
  case ValueKind::Flags: return flags_text(q.enum_name, read_unsigned(p, q.elem_size));
  case ValueKind::Handle:
  case ValueKind::Pointer: return hex(read_unsigned(p, q.elem_size));
  case ValueKind::Struct: {
    std::string s = "<";
    for (size_t i = 0; i < q.elem_size; ++i) {
      char b[4];
      std::snprintf(b, sizeof b, "%02x", p[i]);
      s += b;
    }
    return s + ">";
  }
  case ValueKind::String: break;
  }
  return "?";
}

} // namespace

std::string format_value(const InfoQuery &q, const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  // An empty answer has no bytes to read (data may be null): show it by its shape.
  if (size == 0) return q.kind == ValueKind::String ? "\"\"" : q.count == 1 ? "<empty>" : "{}";
  if (q.kind == ValueKind::String) {
    // Stop at the terminator the spec requires, but never read past `size`.
    size_t n = strnlen(reinterpret_cast<const char *>(p), size);
    return "\"" + std::string(reinterpret_cast<const char *>(p), n) + "\"";
  }
  if (q.elem_size == 0) return "";
  size_t n = size / q.elem_size;
  if (q.count == 1) return n ? element_text(q, p) : "<empty>";
  // A byte array (a UUID, say) reads best as one hex string.
  if (q.kind == ValueKind::Unsigned && q.elem_size == 1) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      char b[4];
      std::snprintf(b, sizeof b, "%02x", p[i]);
      s += b;
    }
    return s.empty() ? "{}" : s;
  }
  std::string s = "{";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += element_text(q, p + i * q.elem_size);
  }
  return s + "}";
}

} // namespace urinfo
