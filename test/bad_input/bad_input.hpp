// SPDX-License-Identifier: Apache-2.0
// ordo-bad-input: a randomized caller of the public UR API with bad input
// (docs/bad-input.md). Shared pieces of the tool: the random source, what one call
// expects, the objects a batch works on, and the tallies the child hands the parent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "discovery.hpp"
#include "ur_api.h"

namespace bad_input {

// ---- what the child writes and the parent reads (one MAP_SHARED page set) ----

constexpr size_t kCodeSlots = 136; // result codes 0..127, the four EXP codes, UNKNOWN, other
constexpr size_t kMaxDevices = 4;
constexpr size_t kMaxFailures = 48;

size_t code_slot(ur_result_t r);
ur_result_t slot_code(size_t slot); // UR_RESULT_FORCE_UINT32 for the "other" slot

struct DeviceTally {
  char label[128];
  uint64_t calls;
  uint64_t invalid;             // calls with at least one argument the spec makes invalid
  uint64_t refused_as_spec;     // ... refused with a code the spec allows
  uint64_t accepted_invalid;    // ... answered SUCCESS (a failure)
  uint64_t wrong_code;          // ... refused with another code (a failure)
  uint64_t known;               // failures matching the tool's known list
  uint64_t unspecified;         // calls whose result the spec leaves open (only "no crash")
  uint64_t valid;               // calls with valid arguments
  uint64_t valid_refused;       // ... that were refused anyway (not a failure: resources, support)
  uint64_t by_code[kCodeSlots]; // every result seen
};

struct Failure {
  char signature[200]; // call and broken rule, without values: for de-duplication
  char text[560];      // the whole call with its values and result
};

struct Shared {
  uint64_t seed;
  uint64_t call_index; // of the call in progress
  char device[128];    // device of the call in progress
  char current[1024];  // the call in progress, written before it is made
  uint32_t device_count;
  DeviceTally device_tally[kMaxDevices];
  uint32_t failure_count; // stored ones (at most kMaxFailures)
  uint64_t failures_seen;
  Failure failures[kMaxFailures];
  char setup_note[512]; // why a device was skipped, if one was
};

// ---- one batch's configuration (the parent's options) ----

struct Options {
  uint64_t seed = 1;
  uint64_t calls = 2000;       // per device, over all batches
  uint64_t batch_calls = 1000; // per device per forked child
  unsigned batch_timeout_s = 120;
  bool fork_batches = true;
  bool released_handles = false; // use released handles (needs UR_LAYER_FULL_VALIDATION)
  bool kernels = true;           // load the test-kernel program for launches
  bool verbose = false;
  bool trace = false;       // print each call to stderr before it is made (to shrink a crash)
  bool finish_each = false; // finish the batch's queues after each call (to pin a crash to it)
  std::string kernel_dir;
  std::vector<std::string> skip_ops; // op names not to run (ORDO_BAD_INPUT_SKIP)
  std::vector<std::string> avoid;    // kinds of bad input not to make (ORDO_BAD_INPUT_AVOID)

  bool avoids(const char *kind) const {
    for (const std::string &a : avoid)
      if (a == kind) return true;
    return false;
  }
};

// ---- the random source ----

class Rng {
public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t next() { return gen_(); }
  size_t below(size_t n) { return n ? static_cast<size_t>(gen_() % n) : 0; }
  bool percent(unsigned p) { return below(100) < p; }
  size_t range(size_t lo, size_t hi) { return lo + below(hi - lo + 1); }

private:
  std::mt19937_64 gen_;
};

// ---- the objects a batch works on, for one device ----

struct Alloc {
  void *ptr = nullptr;
  size_t size = 0;
  const char *kind = "";
};

struct Buffer {
  ur_mem_handle_t mem = nullptr;
  size_t size = 0;
  bool sub = false;
  ur_mem_handle_t parent = nullptr;
  size_t origin = 0; // a sub-buffer's first byte in its parent
};

struct Mapping {
  ur_mem_handle_t mem = nullptr;
  void *ptr = nullptr;
};

struct World {
  urinfo::FoundDevice found;
  ur_device_handle_t device = nullptr;
  ur_context_handle_t context = nullptr;
  ur_context_handle_t other_context = nullptr;      // same device: the source of foreign handles
  ur_queue_handle_t queues[2] = {nullptr, nullptr}; // in order, out of order
  ur_queue_handle_t other_queue = nullptr;
  std::vector<Alloc> allocs;
  Alloc other_alloc;
  std::vector<Alloc> freed; // allocations this batch freed with urUSMFree
  std::vector<Buffer> buffers;
  ur_mem_handle_t other_buffer = nullptr;
  std::deque<ur_event_handle_t> events;
  ur_event_handle_t other_event = nullptr;
  std::vector<Mapping> mappings;
  ur_program_handle_t program = nullptr;
  ur_kernel_handle_t kernel = nullptr; // "fill": (uint32_t *out, uint32_t value)
  ur_program_handle_t other_program = nullptr;
  ur_kernel_handle_t other_kernel = nullptr;
  bool usm_device = false, usm_host = false, usm_shared = false;
  uint64_t max_alloc = 0;
  bool pocl = false; // PoCL's platform: its own bugs are worked around (docs/bad-input.md)

  // Handles this batch released; used only with released_handles on, and only while
  // no live handle has the same address (a new object may reuse the memory).
  std::vector<ur_queue_handle_t> released_queues;
  std::vector<ur_context_handle_t> released_contexts;
  std::vector<ur_mem_handle_t> released_mems;
  std::vector<ur_event_handle_t> released_events;
  std::vector<ur_kernel_handle_t> released_kernels;
  // Events given a callback: released, such an event may stay nameable until its callbacks
  // have run (the validation layer lets it through, native CPU keeps it registered), so it
  // is never used as a released handle.
  std::vector<ur_event_handle_t> events_with_callbacks;

  std::vector<unsigned char> host; // host memory for reads and writes (kHostBytes)
};

constexpr size_t kHostBytes = 64 * 1024;
constexpr size_t kMaxBufferBytes = 16 * 1024;
constexpr size_t kMaxAllocBytes = 16 * 1024;

// world.cpp
std::string setup_world(World &w, const urinfo::FoundDevice &found, const Options &opt, Rng &rng);
void teardown_world(World &w);
void forget_released(World &w, const void *handle);          // a new handle at this address exists
void note_new_alloc(World &w, const void *ptr, size_t size); // freed ranges it covers are live again
void retire_event(World &w, ur_event_handle_t e, bool keep_as_released);

// What one call expects, and its description (written before the call is made).
class Call {
public:
  Call(World &w, Rng &rng, const Options &opt, Shared &shared, DeviceTally &tally)
      : w(w), rng(rng), opt(opt), shared_(shared), tally_(tally) {}

  // Starts a call of `function`; the description grows with each argument.
  void begin(const char *function);
  void arg(const std::string &text); // ", name=value"
  // An argument the spec makes invalid: the call must be refused with one of `codes`
  // (any of them, when several arguments are bad).
  void bad(const std::string &why, std::initializer_list<ur_result_t> codes);
  // An argument whose result the spec leaves open: only "no crash" is checked.
  void unspecified(const std::string &why);
  // Also accepted for invalid input (an adapter that lacks the function altogether).
  void also_accept(ur_result_t code) { extra_.push_back(code); }
  bool invalid() const { return invalid_; }
  bool is_unspecified() const { return unspecified_; }
  // Writes the description where the parent can read it if the call crashes.
  void publish();
  // Judges the result; returns true when the call succeeded.
  bool judge(ur_result_t r);

  World &w;
  Rng &rng;
  const Options &opt;

private:
  Shared &shared_;
  DeviceTally &tally_;
  std::string function_, desc_, why_;
  std::vector<ur_result_t> allowed_, extra_;
  bool invalid_ = false, unspecified_ = false;
};

// calls.cpp: the calls, by name.
struct Op {
  const char *name;
  unsigned weight;
  void (*run)(Call &c);
};
const std::vector<Op> &ops();

std::string result_text(ur_result_t r);
std::string hex(const void *p);
std::string size_text(uint64_t v); // SIZE_MAX-15, 2^63+8, plain decimal otherwise

} // namespace bad_input
