// SPDX-License-Identifier: Apache-2.0
// Adapter discovery and loading (docs/loader.md, "Discovery").
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ur_ddi.h"

namespace ordo {
namespace loader {

// One adapter library the loader opened and took its tables from.
struct LoadedAdapter {
  std::string path;        // as opened (a full path, or a bare name for the system search)
  void *library = nullptr; // dlopen handle, closed on destruction
  ur_dditable_t ddi{};     // its 26 tables, from its urGet*ProcAddrTable getters
  // The handle the probe's urAdapterGet returned: the loader's own reference, held from
  // loading to unloading so that the adapter goes through one get/release cycle per
  // loader life (an adapter may tear its state down on its last release and not come
  // back). Released on destruction, before the library is closed.
  ur_adapter_handle_t held = nullptr;

  LoadedAdapter() = default;
  LoadedAdapter(const LoadedAdapter &) = delete;
  LoadedAdapter &operator=(const LoadedAdapter &) = delete;
  ~LoadedAdapter();
};

using AdapterList = std::vector<std::unique_ptr<LoadedAdapter>>;

// The adapter file names searched for, in order.
const std::vector<std::string> &known_adapter_names();
const char *mock_adapter_name();

// Finds and loads adapters: UR_ADAPTERS_FORCE_LOAD alone when set; otherwise each known
// name from UR_ADAPTERS_SEARCH_PATH, the loader's directory, then the system search.
// With `mock_only`, only the mock adapter is looked for (same search order).
// Every library that cannot be used is skipped with one log line saying why.
AdapterList discover_adapters(bool mock_only);

// Opens one library and takes its tables; on failure returns null and says why.
std::unique_ptr<LoadedAdapter> load_adapter(const std::string &path, const AdapterList &already, std::string &why);

// Directory holding libur_loader.so.0 itself ("" if unknown).
std::string loader_directory();

} // namespace loader
} // namespace ordo
