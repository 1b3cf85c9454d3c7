// The set of live user handles, so that every entry point can refuse an unknown,
// released or wrong-kind handle instead of dereferencing it.
#pragma once
#include <cstdint>

#include "ordo/object.hpp"

namespace nc {

using ordo::handle_kind;

// The kinds the registry keeps, each in the three alignment bits of a handle word.
constexpr bool registry_tracks(handle_kind k) {
  return k == handle_kind::context || k == handle_kind::queue || k == handle_kind::event ||
         k == handle_kind::program || k == handle_kind::kernel || k == handle_kind::mem ||
         k == handle_kind::physical_mem || k == handle_kind::usm_pool;
}

class HandleRegistry {
public:
  void add(const void *h, handle_kind kind);
  void remove(const void *h);
  bool contains(const void *h, handle_kind kind) const;
};

HandleRegistry &registry();

} // namespace nc
