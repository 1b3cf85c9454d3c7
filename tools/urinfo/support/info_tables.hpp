// SPDX-License-Identifier: Apache-2.0
// The UR API's enumerations and *GetInfo queries as data, so that urinfo, the demo and
// the conformance suite can walk every query of an object and print any value by name.
// The tables themselves (info_tables.gen.cpp) are written by scripts/generate from
// scripts/spec/ur.json (scripts/gen/info_tables.py); this header and info_format.cpp
// are the hand-written part.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "ur_api.h"

namespace urinfo {

struct Enumerator {
  const char *name;
  int64_t value;
};

// One enumeration of the API; for a flags type (ur_queue_flags_t) its bits.
struct EnumType {
  const char *name;
  bool is_flags;
  const Enumerator *etors;
  size_t count;
};

// How a query's value is laid out and printed.
enum class ValueKind { Unsigned, Signed, Bool, String, Enum, Flags, Handle, Pointer, Struct };

struct InfoQuery {
  const char *name; // "UR_DEVICE_INFO_NAME"
  uint32_t id;      // its value
  const char *type; // the spec's type text: "size_t[]", "ur_queue_flags_t", ...
  ValueKind kind;
  size_t elem_size;      // size of one element
  uint32_t count;        // 1: scalar; N: fixed array T[N]; 0: open array (or a string)
  const char *enum_name; // the enumeration for Enum and Flags kinds, else nullptr

  bool fixed_size() const { return count != 0; }
  size_t fixed_bytes() const { return elem_size * count; }
};

// The queries of one *_info_t enumeration, in spec order.
struct InfoTable {
  const char *name; // "ur_device_info_t"
  const InfoQuery *queries;
  size_t count;

  const InfoQuery *begin() const { return queries; }
  const InfoQuery *end() const { return queries + count; }
  const InfoQuery *find(uint32_t id) const;
};

// Generated (info_tables.gen.cpp).
const EnumType *enum_types_begin();
size_t enum_type_count();
const InfoTable *info_tables_begin();
size_t info_table_count();

// Lookups (info_format.cpp). Both return nullptr for an unknown name.
const EnumType *find_enum(const std::string &name);
const InfoTable *find_info_table(const std::string &name);
// The table for a *_info_t enumeration that must exist; aborts with a message if not.
const InfoTable &info_table(const std::string &name);

// "UR_RESULT_ERROR_INVALID_SIZE"; the number in decimal for an unknown value.
std::string enumerator_name(const std::string &enum_name, int64_t value);
std::string result_name(ur_result_t result);
// "UR_QUEUE_FLAG_PROFILING_ENABLE | 0x100" (unknown bits in hex); "0" for none.
std::string flags_text(const std::string &flags_name, uint64_t bits);
// Bits of `bits` that no enumerator of the flags type names.
uint64_t unknown_flag_bits(const std::string &flags_name, uint64_t bits);
bool is_known_enumerator(const std::string &enum_name, int64_t value);

// A queried value as text: strings quoted, arrays in braces, enums and flags by name,
// handles and pointers in hex.
std::string format_value(const InfoQuery &query, const void *data, size_t size);

} // namespace urinfo
