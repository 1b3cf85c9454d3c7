// The set of live user handles, so that every entry point can refuse an unknown,
// released or wrong-kind handle instead of dereferencing it.
#pragma once
#include <cstdint>

namespace nc {

enum class Kind : uint8_t { Context, Queue, Event, Program, Kernel, Pool, Mem, PhysicalMem };

class HandleRegistry {
public:
  void add(const void *h, Kind kind);
  void remove(const void *h);
  bool contains(const void *h, Kind kind) const;
};

HandleRegistry &registry();

} // namespace nc
