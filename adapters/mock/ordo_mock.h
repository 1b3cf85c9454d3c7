// SPDX-License-Identifier: Apache-2.0
/* The mock adapter's test interface: replace any of its DDI slots by function name.
 *
 * The loader opens libur_adapter_mock.so.0 privately, so a test finds these two entry
 * points in the copy that owns a handle it holds (ordo_mock::api_of below). Replacing
 * slots is meant for a test's setup: it is not synchronised with calls that other
 * threads are making at the same moment.
 */
#ifndef ORDO_MOCK_H
#define ORDO_MOCK_H

#include "ur_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Puts `replacement` (a function with the slot's signature) in the slot of `function`
 * (e.g. "urQueueFlush"); the previous occupant goes to *pPrevious when pPrevious is not
 * NULL. A NULL replacement restores the mock's own function. Returns
 * UR_RESULT_ERROR_INVALID_VALUE, changing nothing, for a name that has no slot, and
 * UR_RESULT_ERROR_INVALID_NULL_POINTER for a NULL name. The replacement runs behind the
 * slot's exception boundary, as every adapter function does (ordo::fill_unsupported):
 * std::bad_alloc thrown from it reaches the caller as UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
 * anything else as UR_RESULT_ERROR_UNKNOWN. *pPrevious is the function behind the
 * boundary, callable directly. */
typedef ur_result_t (*ordo_mock_replace_t)(const char *function, void *replacement, void **pPrevious);
/* Restores every slot to the mock's own function. */
typedef void (*ordo_mock_restore_all_t)(void);
/* How many times, since this copy of the mock was loaded, its adapter went from 0
 * references to 1 (*pInits) and from 1 to 0 (*pTeardowns); either pointer may be NULL.
 * The counts live in the library: a test that reads them after urLoaderTearDown keeps the
 * library loaded with its own dlopen. */
typedef void (*ordo_mock_adapter_cycles_t)(uint32_t *pInits, uint32_t *pTeardowns);

#ifdef __cplusplus
} /* extern "C" */

#include <dlfcn.h>

namespace ordo_mock {

struct Api {
  ordo_mock_replace_t replace = nullptr;
  ordo_mock_restore_all_t restore_all = nullptr;
  ordo_mock_adapter_cycles_t adapter_cycles = nullptr;
  explicit operator bool() const { return replace && restore_all; }
};

// The entry points of the mock library that created `handle` (any handle of it),
// found from the dispatch table in the handle's first word. Empty if it is not a mock's.
inline Api api_of(const void *handle) {
  Api api;
  if (!handle) return api;
  const void *table = *static_cast<const void *const *>(handle);
  Dl_info info;
  if (!dladdr(table, &info) || !info.dli_fname) return api;
  void *lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return api;
  api.replace = reinterpret_cast<ordo_mock_replace_t>(dlsym(lib, "ordoMockReplace"));
  api.restore_all = reinterpret_cast<ordo_mock_restore_all_t>(dlsym(lib, "ordoMockRestoreAll"));
  api.adapter_cycles = reinterpret_cast<ordo_mock_adapter_cycles_t>(dlsym(lib, "ordoMockAdapterCycles"));
  dlclose(lib); // only drops the reference taken just now; the loader keeps it loaded
  return api;
}

// Typed form: replaces `function` of the mock owning `handle`, returns the previous one.
template <class F> F replace(const void *handle, const char *function, F replacement) {
  void *previous = nullptr;
  Api api = api_of(handle);
  if (!api || api.replace(function, reinterpret_cast<void *>(replacement), &previous) != UR_RESULT_SUCCESS)
    return nullptr;
  return reinterpret_cast<F>(previous);
}

} // namespace ordo_mock
#endif /* __cplusplus */

#endif /* ORDO_MOCK_H */
