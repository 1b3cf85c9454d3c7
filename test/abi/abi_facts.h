// SPDX-License-Identifier: Apache-2.0
// Tables of ABI facts (generated into abi_facts.gen.cpp) that abi_test.cpp checks.
#pragma once
#include <cstddef>

namespace ordo_abi {
struct Layout {
  const char *name;
  size_t size, want_size, align, want_align;
};
struct Member {
  const char *name;
  size_t offset, want_offset;
  int index;
};
struct Enumerator {
  const char *name;
  long long value, want;
};

extern const Layout kLayouts[];
extern const size_t kLayoutCount;
extern const Member kMembers[];
extern const size_t kMemberCount;
extern const Enumerator kEnumerators[];
extern const size_t kEnumeratorCount;
extern const size_t kFunctionCount;
} // namespace ordo_abi
