// SPDX-License-Identifier: Apache-2.0
// ordo-bad-input (docs/bad-input.md): runs batches of randomly bad UR calls, each batch
// in a forked child that initialises the loader itself (adapters start threads, which a
// fork would not carry), on every device ONEAPI_DEVICE_SELECTOR lets through. The parent
// reports a child's crash, sanitizer exit or hang with the seed and the call in progress,
// and prints the totals.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "bad_input.hpp"
#include "info_tables.hpp"

namespace bad_input {
namespace {

const char kUsage[] = "usage: ordo-bad-input [--seed N] [--calls N] [--batch-calls N] [--timeout S] [--no-fork]\n"
                      "                      [--released] [--no-kernels] [--skip op,op] [--avoid k,k] [--verbose]\n"
                      "                      [--trace] [--finish-each]\n"
                      "  --seed N         first batch's seed (ORDO_BAD_INPUT_SEED; default 1); batch i uses N+i\n"
                      "  --calls N        calls per device in all (ORDO_BAD_INPUT_CALLS; default 2000)\n"
                      "  --batch-calls N  calls per device in one forked child (ORDO_BAD_INPUT_BATCH; default 1000)\n"
                      "  --timeout S      seconds a batch may take before it counts as a hang (default 120)\n"
                      "  --no-fork        run the batches in this process (for a debugger)\n"
                      "  --released       use released handles too (on by itself with UR_LAYER_FULL_VALIDATION\n"
                      "                   in UR_ENABLE_LAYERS: without it, using one is undefined in UR)\n"
                      "  --no-kernels     do not load the test-kernel program\n"
                      "  --skip op,op     leave these calls out (ORDO_BAD_INPUT_SKIP; names in --list)\n"
                      "  --avoid k,k      do not make these kinds of bad input (ORDO_BAD_INPUT_AVOID): freed_ptr\n"
                      "                   (freed USM pointers in enqueues), foreign_ptr (USM of the other context),\n"
                      "                   host_ptr (host memory that is not USM), foreign_event (an event of the\n"
                      "                   other context in wait lists), overflow_2d (overflowing 2-D USM regions),\n"
                      "                   free_pending (urUSMFree of memory a pending command uses)\n"
                      "  --trace          print each call to stderr before it is made, then its result\n"
                      "  --finish-each    finish the batch's queues after each call, so that a crash in a\n"
                      "                   command's execution is reported at the call that enqueued it\n"
                      "  --list           print the calls and exit\n"
                      "A batch is reproduced alone by --seed <its seed> --calls <calls it ran> --batch-calls <same>.\n";

uint64_t env_number(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool parse(int argc, char **argv, Options &opt) {
  opt.seed = env_number("ORDO_BAD_INPUT_SEED", 1);
  opt.calls = env_number("ORDO_BAD_INPUT_CALLS", 2000);
  opt.batch_calls = env_number("ORDO_BAD_INPUT_BATCH", 1000);
  if (const char *s = std::getenv("ORDO_BAD_INPUT_SKIP")) opt.skip_ops = split(s);
  if (const char *s = std::getenv("ORDO_BAD_INPUT_AVOID")) opt.avoid = split(s);
  const char *layers = std::getenv("UR_ENABLE_LAYERS");
  opt.released_handles = layers && std::strstr(layers, "UR_LAYER_FULL_VALIDATION");
  const char *kdir = std::getenv("ORDO_KERNEL_DIR");
  opt.kernel_dir = kdir && *kdir ? kdir : ORDO_KERNEL_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--seed")
      opt.seed = std::strtoull(value(), nullptr, 0);
    else if (a == "--calls")
      opt.calls = std::strtoull(value(), nullptr, 0);
    else if (a == "--batch-calls")
      opt.batch_calls = std::strtoull(value(), nullptr, 0);
    else if (a == "--timeout")
      opt.batch_timeout_s = static_cast<unsigned>(std::strtoul(value(), nullptr, 0));
    else if (a == "--no-fork")
      opt.fork_batches = false;
    else if (a == "--released")
      opt.released_handles = true;
    else if (a == "--no-kernels")
      opt.kernels = false;
    else if (a == "--skip")
      opt.skip_ops = split(value());
    else if (a == "--avoid")
      opt.avoid = split(value());
    else if (a == "--verbose")
      opt.verbose = true;
    else if (a == "--trace")
      opt.trace = true;
    else if (a == "--finish-each")
      opt.finish_each = true;
    else if (a == "--list") {
      for (const Op &op : ops()) std::printf("%s\n", op.name);
      std::exit(0);
    } else {
      std::fputs(kUsage, stderr);
      return false;
    }
  }
  if (opt.batch_calls == 0) opt.batch_calls = 1;
  return true;
}

// ---- the child: one batch ----

void run_batch(const Options &opt, uint64_t seed, uint64_t calls, Shared &shared) {
  std::memset(&shared, 0, sizeof shared);
  shared.seed = seed;
  if (urLoaderInit(0, nullptr) != UR_RESULT_SUCCESS) {
    std::snprintf(shared.setup_note, sizeof shared.setup_note, "urLoaderInit failed");
    return;
  }
  urinfo::Discovery found = urinfo::discover();
  std::vector<Op> table;
  unsigned total_weight = 0;
  for (const Op &op : ops()) {
    bool skipped = false;
    for (const std::string &s : opt.skip_ops) skipped |= s == op.name;
    if (skipped) continue;
    table.push_back(op);
    total_weight += op.weight;
  }
  Rng rng(seed);
  for (size_t d = 0; d < found.devices.size() && d < kMaxDevices && total_weight; ++d) {
    DeviceTally &tally = shared.device_tally[d];
    std::snprintf(tally.label, sizeof tally.label, "%s", found.devices[d].label().c_str());
    std::snprintf(shared.device, sizeof shared.device, "%s", tally.label);
    shared.device_count = static_cast<uint32_t>(d + 1);
    World w;
    std::snprintf(shared.current, sizeof shared.current, "setting up the batch's objects");
    std::string why = setup_world(w, found.devices[d], opt, rng);
    if (!why.empty()) {
      std::snprintf(shared.setup_note, sizeof shared.setup_note, "%s: %s", tally.label, why.c_str());
      teardown_world(w);
      continue;
    }
    Call call(w, rng, opt, shared, tally);
    for (uint64_t i = 0; i < calls;) {
      unsigned pick = static_cast<unsigned>(rng.below(total_weight));
      const Op *op = &table[0];
      for (const Op &o : table) {
        if (pick < o.weight) {
          op = &o;
          break;
        }
        pick -= o.weight;
      }
      uint64_t before = tally.calls;
      op->run(call);
      // Still under the call's description: a command that crashes when it runs is
      // reported at the call that enqueued it.
      if (opt.finish_each)
        for (ur_queue_handle_t q : {w.queues[0], w.queues[1], w.other_queue})
          if (q) urQueueFinish(q);
      i += tally.calls > before ? tally.calls - before : 1; // an op with nothing to do still counts
    }
    std::snprintf(shared.current, sizeof shared.current, "tearing down the batch's objects");
    teardown_world(w);
  }
  urinfo::release(found);
  std::snprintf(shared.current, sizeof shared.current, "urLoaderTearDown");
  urLoaderTearDown();
  std::snprintf(shared.current, sizeof shared.current, "exiting");
}

// ---- the parent ----

struct Totals {
  std::map<std::string, DeviceTally> devices;
  std::map<std::string, std::string> failures; // signature -> first text
  std::map<std::string, uint64_t> failure_counts;
  std::vector<std::string> crashes;
  std::set<std::string> notes;
  uint64_t batches = 0;
};

void add(Totals &t, const Shared &s) {
  for (uint32_t d = 0; d < s.device_count && d < kMaxDevices; ++d) {
    const DeviceTally &x = s.device_tally[d];
    DeviceTally &y = t.devices[x.label];
    std::snprintf(y.label, sizeof y.label, "%s", x.label);
    y.calls += x.calls;
    y.invalid += x.invalid;
    y.refused_as_spec += x.refused_as_spec;
    y.accepted_invalid += x.accepted_invalid;
    y.wrong_code += x.wrong_code;
    y.known += x.known;
    y.unspecified += x.unspecified;
    y.valid += x.valid;
    y.valid_refused += x.valid_refused;
    for (size_t i = 0; i < kCodeSlots; ++i) y.by_code[i] += x.by_code[i];
  }
  for (uint32_t i = 0; i < s.failure_count; ++i) {
    t.failures.emplace(s.failures[i].signature, s.failures[i].text);
    ++t.failure_counts[s.failures[i].signature];
  }
  if (s.setup_note[0]) t.notes.insert(s.setup_note);
}

std::string describe_status(int status, unsigned timeout_s) {
  char b[128];
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGALRM) {
      std::snprintf(b, sizeof b, "hung (no end after %u s)", timeout_s);
    } else {
      std::snprintf(b, sizeof b, "killed by signal %d (%s)", sig, strsignal(sig));
    }
  } else {
    std::snprintf(b, sizeof b, "exited with status %d (a sanitizer report or an abort: see its output above)",
                  WEXITSTATUS(status));
  }
  return b;
}

int print_summary(const Options &opt, const Totals &t) {
  uint64_t failures = 0;
  std::printf("\n== ordo-bad-input summary: %" PRIu64 " batches from seed %" PRIu64 "%s\n", t.batches, opt.seed,
              opt.released_handles ? ", released handles on" : "");
  for (const std::string &n : t.notes) std::printf("note: %s\n", n.c_str());
  if (t.devices.empty()) std::printf("no device ran a call\n");
  for (const auto &kv : t.devices) {
    const DeviceTally &d = kv.second;
    std::printf("device %s: %" PRIu64 " calls: %" PRIu64 " with invalid input (%" PRIu64
                " refused as the spec says, %" PRIu64 " accepted, %" PRIu64 " refused with another code, %" PRIu64
                " known), %" PRIu64 " valid (%" PRIu64 " refused), %" PRIu64 " open\n",
                d.label, d.calls, d.invalid, d.refused_as_spec, d.accepted_invalid, d.wrong_code, d.known, d.valid,
                d.valid_refused, d.unspecified);
    std::printf("  results:");
    for (size_t i = 0; i < kCodeSlots; ++i) {
      if (!d.by_code[i]) continue;
      ur_result_t code = slot_code(i);
      std::printf(" %s=%" PRIu64, code == UR_RESULT_FORCE_UINT32 ? "other" : result_text(code).c_str(), d.by_code[i]);
    }
    std::printf("\n");
    failures += d.accepted_invalid + d.wrong_code;
  }
  if (!t.failures.empty()) {
    std::printf("failures, one line per kind (the first seen, with its seed and call):\n");
    for (const auto &kv : t.failures)
      std::printf("  [%" PRIu64 "x] %s\n", t.failure_counts.at(kv.first), kv.second.c_str());
  }
  for (const std::string &c : t.crashes) std::printf("CRASH: %s\n", c.c_str());
  bool ok = failures == 0 && t.crashes.empty() && !t.devices.empty();
  std::printf("== %s: %zu crash(es), %" PRIu64 " failed call(s)\n", ok ? "PASS" : "FAIL", t.crashes.size(), failures);
  return ok ? 0 : 1;
}

} // namespace
} // namespace bad_input

int main(int argc, char **argv) {
  using namespace bad_input;
  Options opt;
  if (!parse(argc, argv, opt)) return 2;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return 2;
  }
  Shared &shared = *static_cast<Shared *>(mem);
  Totals totals;
  std::printf("ordo-bad-input: %" PRIu64 " calls per device in batches of %" PRIu64 ", seeds from %" PRIu64
              "; ONEAPI_DEVICE_SELECTOR=%s; UR_ENABLE_LAYERS=%s; released handles %s\n",
              opt.calls, opt.batch_calls, opt.seed, std::getenv("ONEAPI_DEVICE_SELECTOR") ?: "(unset)",
              std::getenv("UR_ENABLE_LAYERS") ?: "(unset)", opt.released_handles ? "on" : "off");
  uint64_t done = 0;
  for (uint64_t batch = 0; done < opt.calls; ++batch) {
    uint64_t seed = opt.seed + batch;
    uint64_t calls = std::min(opt.batch_calls, opt.calls - done);
    done += calls;
    ++totals.batches;
    if (opt.verbose) std::printf("batch seed %" PRIu64 ": %" PRIu64 " calls per device\n", seed, calls);
    if (!opt.fork_batches) {
      run_batch(opt, seed, calls, shared);
      add(totals, shared);
      continue;
    }
    std::fflush(nullptr);
    pid_t child = fork();
    if (child < 0) {
      std::perror("fork");
      return 2;
    }
    if (child == 0) {
      alarm(opt.batch_timeout_s);
      run_batch(opt, seed, calls, shared);
      std::fflush(nullptr);
      std::exit(0); // exit, not _exit: LeakSanitizer runs at exit
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    add(totals, shared);
    for (uint32_t i = 0; i < shared.failure_count; ++i)
      if (opt.verbose) std::printf("  failure: %s\n", shared.failures[i].text);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    char line[1600];
    std::snprintf(line, sizeof line,
                  "seed %" PRIu64 " (batch of %" PRIu64 " calls per device) %s at call %" PRIu64
                  " on %s: %s; reproduce: "
                  "ordo-bad-input --seed %" PRIu64 " --calls %" PRIu64 " --batch-calls %" PRIu64 "%s",
                  seed, calls, describe_status(status, opt.batch_timeout_s).c_str(), shared.call_index,
                  shared.device[0] ? shared.device : "(setup)", shared.current, seed, calls, calls,
                  opt.released_handles ? " --released" : "");
    std::printf("CRASH: %s\n", line);
    totals.crashes.push_back(line);
  }
  return print_summary(opt, totals);
}
