// SPDX-License-Identifier: Apache-2.0
#include "ordo_elf/elf_module.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "ordo/logger.hpp"

namespace ordo::native_cpu {

namespace {

// The reader's log is UR_LOG_NATIVE_CPU, the native CPU adapter's (it reads that
// adapter's kernel ABI), through a Logger of its own: the CPU Level Zero test driver
// uses the reader too, and has no adapter log.
ordo::Logger &module_log() {
  static ordo::Logger *log = new ordo::Logger("native_cpu"); // outlives static destructors
  return *log;
}

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "native CPU programs: unknown host machine"
#endif

// Checks that the bytes are a 64-bit little-endian shared object for this machine
// whose program headers lie inside the image, before the dynamic loader sees it.
bool check_elf(const uint8_t *data, size_t size, std::string *why) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0) {
    *why = "not an ELF file";
    return false;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    *why = "not a 64-bit little-endian ELF file";
    return false;
  }
  if (eh.e_type != ET_DYN) {
    *why = "not a shared object (build it with -shared -fPIC)";
    return false;
  }
  if (eh.e_machine != kHostMachine) {
    *why = "built for another machine";
    return false;
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phoff > size ||
      (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum) {
    *why = "program headers outside the file";
    return false;
  }
  return true;
}

bool write_all(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

std::shared_ptr<ElfModule> ElfModule::load(const uint8_t *data, size_t size, ur_result_t *error, std::string *message) {
  *error = UR_RESULT_ERROR_INVALID_NATIVE_BINARY;
  std::string why;
  if (!check_elf(data, size, &why)) {
    *message = "not a native CPU program: " + why;
    return nullptr;
  }
  std::shared_ptr<ElfModule> m(new ElfModule);
  m->binary_.assign(data, data + size);

  m->fd_ = memfd_create("ordo-native-cpu-program", MFD_CLOEXEC);
  if (m->fd_ < 0 || !write_all(m->fd_, data, size)) {
    *error = UR_RESULT_ERROR_OUT_OF_RESOURCES;
    *message = "could not write the program to a memfd";
    return nullptr;
  }
  std::string path = "/proc/self/fd/" + std::to_string(m->fd_);
  m->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle_) {
    const char *e = dlerror();
    *message = std::string("dlopen failed: ") + (e ? e : "unknown error");
    return nullptr;
  }

  // Nothing in the binary is called before its ABI version is known to be ours: a
  // binary built against another revision of the header may have a table getter of
  // another signature.
  void *getter = m->symbol(ORDO_NC_KERNEL_TABLE_SYMBOL, nullptr);
  if (!getter) {
    *message = "not a native CPU program: the shared object does not export " ORDO_NC_KERNEL_TABLE_SYMBOL;
    return nullptr;
  }
  if (!m->check_abi_version(message)) {
    *error = UR_RESULT_ERROR_INVALID_BINARY;
    return nullptr;
  }
  ordo_nc_kernel_table t{};
  reinterpret_cast<ordo_nc_kernel_table_fn>(getter)(&t);
  const ordo_nc_kernel_table *table = &t;
  if (table->abi_version != ORDO_NC_ABI_VERSION) {
    *error = UR_RESULT_ERROR_INVALID_BINARY;
    *message = "the kernel table says ABI version " + std::to_string(table->abi_version) + " but " +
               ORDO_NC_ABI_VERSION_SYMBOL " says " + std::to_string(ORDO_NC_ABI_VERSION);
    return nullptr;
  }
  if (table->num_kernels && !table->kernels) {
    *message = "the kernel table lists " + std::to_string(table->num_kernels) + " kernel(s) but no array";
    return nullptr;
  }
  std::set<std::string> names;
  for (uint32_t i = 0; i < table->num_kernels; ++i) {
    const ordo_nc_kernel_desc *k = table->kernels[i];
    if (!k || !k->name || !k->run_group) {
      *message = "kernel table entry " + std::to_string(i) + " is incomplete";
      return nullptr;
    }
    if (!names.insert(k->name).second) {
      *message = std::string("kernel '") + k->name + "' is defined twice";
      return nullptr;
    }
    m->kernels_.push_back(k);
  }
  *error = UR_RESULT_SUCCESS;
  return m;
}

bool ElfModule::check_abi_version(std::string *message) const {
  const std::string rebuild = "; this adapter implements native CPU kernel ABI version " +
                              std::to_string(ORDO_NC_ABI_VERSION) +
                              ": rebuild the binary against its include/ur_native_cpu_kernel.h";
  size_t size = 0;
  const void *addr = symbol(ORDO_NC_ABI_VERSION_SYMBOL, &size);
  if (!addr) {
    *message = "the binary does not export " ORDO_NC_ABI_VERSION_SYMBOL
               " (built against an older include/ur_native_cpu_kernel.h, or with ORDO_NC_TYPES_ONLY)" +
               rebuild;
    return false;
  }
  if (size != sizeof(uint32_t)) {
    *message = ORDO_NC_ABI_VERSION_SYMBOL " is " + std::to_string(size) + " bytes, not a uint32_t" + rebuild;
    return false;
  }
  uint32_t version = 0;
  std::memcpy(&version, addr, sizeof version);
  if (version != ORDO_NC_ABI_VERSION) {
    *message = "the binary was built for native CPU kernel ABI version " + std::to_string(version) + rebuild;
    return false;
  }
  return true;
}

ElfModule::~ElfModule() {
  if (handle_) {
    dlclose(handle_);
    // The /proc/self/fd/N name stays reserved while the object is loaded: a module
    // that cannot be unloaded (for instance one with STB_GNU_UNIQUE symbols) keeps
    // its descriptor, so that dlopen never mistakes a new program for it.
    std::string path = "/proc/self/fd/" + std::to_string(fd_);
    if (void *still = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(still);
      ORDO_LOG(module_log(), debug, "program %s stays loaded; keeping its descriptor", path.c_str());
      return;
    }
  }
  if (fd_ >= 0) ::close(fd_);
}

const ordo_nc_kernel_desc *ElfModule::find_kernel(const char *name) const {
  for (const ordo_nc_kernel_desc *k : kernels_)
    if (std::strcmp(k->name, name) == 0) return k;
  return nullptr;
}

void *ElfModule::symbol(const char *name, size_t *size) const {
  void *addr = dlsym(handle_, name);
  if (!addr) return nullptr;
  // dlsym also searches the module's dependencies (libc, ...): keep only our own.
  Dl_info info;
  void *sym_entry = nullptr; // an ElfW(Sym) *
  struct link_map *self = nullptr;
  if (!dladdr1(addr, &info, &sym_entry, RTLD_DL_SYMENT) || dlinfo(handle_, RTLD_DI_LINKMAP, &self) != 0 || !self ||
      !info.dli_fname || std::strcmp(info.dli_fname, self->l_name) != 0)
    return nullptr;
  if (size) *size = sym_entry ? static_cast<const ElfW(Sym) *>(sym_entry)->st_size : 0;
  return addr;
}

} // namespace ordo::native_cpu
