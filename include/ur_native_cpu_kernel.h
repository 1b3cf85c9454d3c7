// SPDX-License-Identifier: Apache-2.0
/*
 * Ordo native CPU kernel ABI (hand-written, not generated).
 *
 * A native CPU program binary is an ELF shared object built by the host compiler.
 * It exports two symbols:
 *   - ordo_nc_abi_version, a const uint32_t holding the ORDO_NC_ABI_VERSION it was
 *     built against. The adapter reads it before calling anything in the binary and
 *     refuses a binary without it, or with another version, so that a binary built
 *     against another revision of this header is never called with the wrong types.
 *     Including this header (without ORDO_NC_TYPES_ONLY) defines it, from C or C++.
 *   - ordo_nc_get_kernel_table(), which fills in a table of kernel descriptors.
 *
 * A kernel runs one WORK-GROUP per call: the adapter calls `run_group` once for
 * each work-group, and the kernel loops over the work-items of that group itself.
 * Per-item overhead is therefore a loop iteration, not a function call, and a
 * work-group barrier is simply the boundary between two loops over the items.
 *
 * Arguments: `args[i]` points to the value of argument i:
 *   - a by-value argument: to a copy of its bytes;
 *   - a pointer (USM) argument: to a `void *` holding the pointer;
 *   - a local-memory argument: to a `void *` holding this work-group's block
 *     (at least the requested size, aligned to ORDO_NC_LOCAL_ALIGN bytes).
 *
 * Return 0 from `run_group` on success; any other value fails the launch: its event
 * ends in UR_EVENT_STATUS_ERROR and the work-groups not yet started are skipped.
 *
 * From C++, write a kernel as an ordinary function and register it with
 * ORDO_NC_KERNEL (one call per work-item) or ORDO_NC_GROUP_KERNEL (one call per
 * work-group, for kernels that need barriers); the macros build the table. Then:
 *     g++ -std=c++17 -O2 -shared -fPIC -I<ordo>/include kernels.cpp -o kernels.so
 * See docs/native-cpu.md.
 */
#ifndef UR_NATIVE_CPU_KERNEL_H_INCLUDED
#define UR_NATIVE_CPU_KERNEL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* Version of this ABI; a binary built for another version is refused.
 * 2: binaries export ordo_nc_abi_version (version-1 binaries did not). */
#define ORDO_NC_ABI_VERSION 2u
/* Name of the uint32_t constant every program binary exports: its ABI version. */
#define ORDO_NC_ABI_VERSION_SYMBOL "ordo_nc_abi_version"
/* Name of the function every program binary exports. */
#define ORDO_NC_KERNEL_TABLE_SYMBOL "ordo_nc_get_kernel_table"
/* Alignment of every local-memory block handed to a kernel. */
#define ORDO_NC_LOCAL_ALIGN 64u

/* What is the same for every work-group of one launch. Dimensions past work_dim
 * have size 1 and offset 0, so a kernel may always loop over three dimensions. */
typedef struct ordo_nc_range {
  uint32_t work_dim; /* 1, 2 or 3 */
  uint32_t reserved;
  size_t global_size[3];   /* work-items in each dimension */
  size_t local_size[3];    /* work-items per work-group in each dimension */
  size_t global_offset[3]; /* added to every global id */
  size_t num_groups[3];    /* global_size / local_size */
} ordo_nc_range;

/* One work-group. */
typedef struct ordo_nc_group {
  const ordo_nc_range *range;
  size_t group_id[3];
  void *work_group_memory;       /* dynamic work-group memory (launch property), or NULL */
  size_t work_group_memory_size; /* its size in bytes, 0 when absent */
} ordo_nc_group;

/* Kinds of kernel argument, for the optional checks the adapter does at launch. */
typedef enum ordo_nc_arg_kind {
  ORDO_NC_ARG_ANY = 0,     /* not checked */
  ORDO_NC_ARG_VALUE = 1,   /* bytes copied at launch; `size` must match when non-zero */
  ORDO_NC_ARG_POINTER = 2, /* a USM (or any host) pointer */
  ORDO_NC_ARG_LOCAL = 3    /* local memory: the launch gives a size, each group gets a block */
} ordo_nc_arg_kind;

typedef struct ordo_nc_arg_desc {
  uint32_t kind; /* ordo_nc_arg_kind */
  uint32_t size; /* bytes of a VALUE argument; 0 = not checked */
} ordo_nc_arg_desc;

/* Runs one work-group. Returns 0 on success. */
typedef int32_t (*ordo_nc_group_fn)(const ordo_nc_group *group, void *const *args);

typedef struct ordo_nc_kernel_desc {
  const char *name; /* the name given to urKernelCreate */
  ordo_nc_group_fn run_group;
  uint32_t num_args;
  uint32_t flags;               /* reserved, 0 */
  const ordo_nc_arg_desc *args; /* num_args entries, or NULL for no checks */
  size_t reqd_local_size[3];    /* required work-group size, or all 0 for any */
} ordo_nc_kernel_desc;

typedef struct ordo_nc_kernel_table {
  uint32_t abi_version; /* ORDO_NC_ABI_VERSION */
  uint32_t num_kernels;
  const ordo_nc_kernel_desc *const *kernels;
} ordo_nc_kernel_table;

/* The one symbol a program binary must export (name: ORDO_NC_KERNEL_TABLE_SYMBOL):
 * fills *table. The descriptors it points to must stay valid while the binary is loaded. */
typedef void (*ordo_nc_kernel_table_fn)(ordo_nc_kernel_table *table);

#if defined(__cplusplus)
} /* extern "C" */
#endif

/* The ABI version of every binary that includes this header to define kernels. Weak,
 * so that each translation unit may carry it and the linker keeps one; a host that
 * only needs the types (the adapter) defines ORDO_NC_TYPES_ONLY and gets none. */
#if !defined(ORDO_NC_TYPES_ONLY)
#if defined(__cplusplus)
extern "C"
#endif
    __attribute__((weak, used, visibility("default"))) const uint32_t ordo_nc_abi_version = ORDO_NC_ABI_VERSION;
#endif

/* ------------------------------------------------------------------------------
 * C++ helpers for writing kernels (C++17). A host that only needs the types above
 * defines ORDO_NC_TYPES_ONLY before including this header.
 * ---------------------------------------------------------------------------- */
#if defined(__cplusplus) && !defined(ORDO_NC_TYPES_ONLY)

#include <type_traits>
#include <utility>

namespace ordo_nc {

/* A pointer to local (work-group) memory; use it as a kernel parameter type. */
template <class T> struct local_ptr {
  T *ptr;
  T &operator[](size_t i) const { return ptr[i]; }
  T *get() const { return ptr; }
  operator T *() const { return ptr; }
};

/* One work-item, as seen by an ORDO_NC_KERNEL function or a for_each_item body. */
struct item {
  const ordo_nc_group *group;
  size_t global[3];
  size_t local[3];

  size_t global_id(int d) const { return global[d]; }
  size_t local_id(int d) const { return local[d]; }
  size_t group_id(int d) const { return group->group_id[d]; }
  size_t global_range(int d) const { return group->range->global_size[d]; }
  size_t local_range(int d) const { return group->range->local_size[d]; }
  size_t group_range(int d) const { return group->range->num_groups[d]; }
  size_t global_offset(int d) const { return group->range->global_offset[d]; }
  /* Row-major linear ids, dimension 0 fastest, offset excluded. */
  size_t global_linear_id() const {
    const ordo_nc_range *r = group->range;
    return ((global[2] - r->global_offset[2]) * r->global_size[1] + (global[1] - r->global_offset[1])) *
               r->global_size[0] +
           (global[0] - r->global_offset[0]);
  }
  size_t local_linear_id() const {
    const ordo_nc_range *r = group->range;
    return (local[2] * r->local_size[1] + local[1]) * r->local_size[0] + local[0];
  }
};

/* One work-group, as seen by an ORDO_NC_GROUP_KERNEL function. Each call of
 * for_each_item is one phase; the end of a phase is a work-group barrier. */
struct group {
  const ordo_nc_group *raw;

  size_t group_id(int d) const { return raw->group_id[d]; }
  size_t local_range(int d) const { return raw->range->local_size[d]; }
  size_t group_range(int d) const { return raw->range->num_groups[d]; }
  size_t local_linear_range() const {
    const size_t *l = raw->range->local_size;
    return l[0] * l[1] * l[2];
  }
  size_t group_linear_id() const {
    const size_t *n = raw->range->num_groups;
    return (raw->group_id[2] * n[1] + raw->group_id[1]) * n[0] + raw->group_id[0];
  }
  void *work_group_memory() const { return raw->work_group_memory; }
  size_t work_group_memory_size() const { return raw->work_group_memory_size; }

  template <class F> void for_each_item(F &&f) const {
    const ordo_nc_range *r = raw->range;
    item it;
    it.group = raw;
    size_t base[3];
    for (int d = 0; d < 3; ++d) base[d] = r->global_offset[d] + raw->group_id[d] * r->local_size[d];
    for (size_t z = 0; z < r->local_size[2]; ++z) {
      it.local[2] = z;
      it.global[2] = base[2] + z;
      for (size_t y = 0; y < r->local_size[1]; ++y) {
        it.local[1] = y;
        it.global[1] = base[1] + y;
        for (size_t x = 0; x < r->local_size[0]; ++x) {
          it.local[0] = x;
          it.global[0] = base[0] + x;
          f(static_cast<const item &>(it));
        }
      }
    }
  }
};

namespace detail {

template <class T> struct arg_traits {
  static_assert(std::is_trivially_copyable<T>::value, "kernel arguments must be trivially copyable");
  static constexpr ordo_nc_arg_desc desc() { return {ORDO_NC_ARG_VALUE, sizeof(T)}; }
  static T get(void *p) { return *static_cast<T *>(p); }
};
template <class T> struct arg_traits<T *> {
  static constexpr ordo_nc_arg_desc desc() { return {ORDO_NC_ARG_POINTER, sizeof(void *)}; }
  static T *get(void *p) { return *static_cast<T **>(p); }
};
template <class T> struct arg_traits<local_ptr<T>> {
  static constexpr ordo_nc_arg_desc desc() { return {ORDO_NC_ARG_LOCAL, 0}; }
  static local_ptr<T> get(void *p) { return local_ptr<T>{*static_cast<T **>(p)}; }
};

template <class... A> struct arg_list {
  static constexpr uint32_t count = sizeof...(A);
  /* One spare entry keeps the array non-empty for kernels without arguments. */
  static constexpr ordo_nc_arg_desc descs[sizeof...(A) + 1] = {arg_traits<std::decay_t<A>>::desc()...,
                                                               {ORDO_NC_ARG_ANY, 0}};
};

template <class R> inline int32_t status_of(R &&r) { return static_cast<int32_t>(r); }

template <class Fn> struct signature;
/* Per-item kernels: void|int32_t f(const ordo_nc::item &, args...) */
template <class R, class... A> struct signature<R (*)(const item &, A...)> {
  using args = arg_list<A...>;
  using ret = R;
  static constexpr bool per_item = true;
};
/* Per-group kernels: void|int32_t f(const ordo_nc::group &, args...) */
template <class R, class... A> struct signature<R (*)(const group &, A...)> {
  using args = arg_list<A...>;
  using ret = R;
  static constexpr bool per_item = false;
};

template <auto F, class... A, size_t... I>
inline int32_t invoke_group(const ordo_nc_group *g, void *const *args, std::index_sequence<I...>,
                            void (*)(const group &, A...)) {
  (void)args;
  F(group{g}, arg_traits<std::decay_t<A>>::get(args[I])...);
  return 0;
}
template <auto F, class... A, size_t... I>
inline int32_t invoke_group(const ordo_nc_group *g, void *const *args, std::index_sequence<I...>,
                            int32_t (*)(const group &, A...)) {
  (void)args;
  return F(group{g}, arg_traits<std::decay_t<A>>::get(args[I])...);
}

/* Unpacks the arguments once per work-group, then loops over the items. A non-zero
 * status from an item stops the group and fails the launch. */
template <auto F, class R, class... A, size_t... I>
inline int32_t invoke_items(const ordo_nc_group *g, void *const *args, std::index_sequence<I...>,
                            R (*)(const item &, A...)) {
  (void)args;
  int32_t status = 0;
  auto run = [&](std::decay_t<A>... unpacked) {
    const ordo_nc_range *r = g->range;
    item it;
    it.group = g;
    size_t base[3];
    for (int d = 0; d < 3; ++d) base[d] = r->global_offset[d] + g->group_id[d] * r->local_size[d];
    for (size_t z = 0; z < r->local_size[2]; ++z) {
      it.local[2] = z;
      it.global[2] = base[2] + z;
      for (size_t y = 0; y < r->local_size[1]; ++y) {
        it.local[1] = y;
        it.global[1] = base[1] + y;
        for (size_t x = 0; x < r->local_size[0]; ++x) {
          it.local[0] = x;
          it.global[0] = base[0] + x;
          if constexpr (std::is_void<R>::value) {
            F(static_cast<const item &>(it), unpacked...);
          } else {
            status = status_of(F(static_cast<const item &>(it), unpacked...));
            if (status != 0) return;
          }
        }
      }
    }
  };
  run(arg_traits<std::decay_t<A>>::get(args[I])...);
  return status;
}

template <auto F> struct launcher {
  using sig = signature<decltype(F)>;
  static int32_t run(const ordo_nc_group *g, void *const *args) {
    if constexpr (sig::per_item)
      return invoke_items<F>(g, args, std::make_index_sequence<sig::args::count>{}, F);
    else
      return invoke_group<F>(g, args, std::make_index_sequence<sig::args::count>{}, F);
  }
};

} // namespace detail
} // namespace ordo_nc

/* The descriptors of every kernel in this binary are collected in one ELF section;
 * the linker provides its bounds. */
extern "C" {
extern const ordo_nc_kernel_desc *const __start_ordo_nc_kernels[] __attribute__((weak, visibility("hidden")));
extern const ordo_nc_kernel_desc *const __stop_ordo_nc_kernels[] __attribute__((weak, visibility("hidden")));

/* Weak so that every translation unit may carry it; the linker keeps one. It
 * keeps no state of its own: it only describes the section. */
__attribute__((weak, used, visibility("default"))) void ordo_nc_get_kernel_table(ordo_nc_kernel_table *table) {
  table->abi_version = ORDO_NC_ABI_VERSION;
  table->num_kernels =
      __start_ordo_nc_kernels ? static_cast<uint32_t>(__stop_ordo_nc_kernels - __start_ordo_nc_kernels) : 0u;
  table->kernels = __start_ordo_nc_kernels;
}
}

#define ORDO_NC_REGISTER_(fn, name_str, rx, ry, rz)                                                                    \
  extern "C" __attribute__((visibility("default")))                                                                    \
  int32_t ordo_nc_kernel_##fn(const ordo_nc_group *group, void *const *args) {                                         \
    return ::ordo_nc::detail::launcher<&fn>::run(group, args);                                                         \
  }                                                                                                                    \
  static const ordo_nc_kernel_desc ordo_nc_desc_##fn = {name_str,                                                      \
                                                        &ordo_nc_kernel_##fn,                                          \
                                                        ::ordo_nc::detail::signature<decltype(&fn)>::args::count,      \
                                                        0,                                                             \
                                                        ::ordo_nc::detail::signature<decltype(&fn)>::args::descs,      \
                                                        {rx, ry, rz}};                                                 \
  static const ordo_nc_kernel_desc *ordo_nc_entry_##fn __attribute__((section("ordo_nc_kernels"), used)) =             \
      &ordo_nc_desc_##fn

/* Registers `fn` (void or int32_t fn(const ordo_nc::item &, args...)) as kernel "fn". */
#define ORDO_NC_KERNEL(fn) ORDO_NC_REGISTER_(fn, #fn, 0, 0, 0)
/* Registers `fn` (void or int32_t fn(const ordo_nc::group &, args...)) as kernel "fn". */
#define ORDO_NC_GROUP_KERNEL(fn) ORDO_NC_REGISTER_(fn, #fn, 0, 0, 0)
/* Either form, with a required work-group size (x, y, z). */
#define ORDO_NC_KERNEL_REQD_SIZE(fn, x, y, z) ORDO_NC_REGISTER_(fn, #fn, x, y, z)

#endif /* __cplusplus && !ORDO_NC_TYPES_ONLY */

#endif /* UR_NATIVE_CPU_KERNEL_H_INCLUDED */
