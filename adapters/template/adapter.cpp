// SPDX-License-Identifier: Apache-2.0
// The adapter handle, its log and the dispatch table: libur_adapter_template.so.0.
// Replace: the logger's name (UR_LOG_<NAME>) and, as you implement more of the API, the
// install_* lines of build_table(). Keep the order of its end: the slots you implement,
// then what is derived from them, then fill_unsupported() last: it puts every function
// of the table behind the exception boundary (no exception leaves an entry point) and,
// with table_tail::param_checks, runs the spec's parameter checks before each, so bad
// input gets the validation layer's codes with no layer (docs/adapter-guide.md, "The
// exception boundary").
#include <cstring>

#include "common.hpp"
#include "ordo/ddi_fill.hpp"

namespace ordo::template_adapter {

Logger &logger() {
  static Logger *log = new Logger("template"); // never destroyed: entry points may log at exit
  return *log;
}

Adapter *the_adapter() {
  static Adapter *adapter = new Adapter(); // the one adapter handle, for the process
  return adapter;
}

} // namespace ordo::template_adapter

namespace {

namespace ta = ordo::template_adapter;

// Every slot the adapter implements; fill_unsupported() gives every other slot the
// generated stub that answers UR_RESULT_ERROR_UNSUPPORTED_FEATURE (no slot is ever null).
ur_dditable_t build_table() {
  ur_dditable_t t;
  std::memset(&t, 0, sizeof(t));
  ta::install_adapter_entry_points(t); // urAdapter*, urPlatform*, the logger callback
  ta::install_device_entry_points(t);  // urDevice*
  ta::install_context_entry_points(t); // urContext*
  ta::install_usm_entry_points(t);     // urUSM{Host,Device,Shared}Alloc, urUSMFree, urUSMGetMemAllocInfo
  ta::install_queue_entry_points(t);   // urQueue*, no commands yet
  // A backend with commands adds here: urEvent*, urEnqueue*, then
  // ordo::derived::install_entry_points(t) and the command-buffer layer (see
  // adapters/level_zero/adapter.cpp for the order).
  ordo::table_tail tail;
  tail.param_checks = true; // ctest param_checks_template and conformance_template hold it
  ordo::fill_unsupported(t, tail);
  return t;
}

} // namespace

const ur_dditable_t &ordo::adapter_ddi() {
  static const ur_dditable_t table = build_table();
  return table;
}
