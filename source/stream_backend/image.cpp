// SPDX-License-Identifier: Apache-2.0
// Program images: what kind an image is, and the kernel names and parameter sizes
// an image tells by itself, for drivers that cannot list them (HIP: docs/hip.md).
#include "image.hpp"

#include <algorithm>
#include <cstring>
#include <elf.h>

namespace ordo::stream_backend {

image_kind classify_image(const uint8_t *data, size_t size) {
  if (size >= 4 && data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' && data[3] == 'F') return image_kind::elf;
  uint32_t magic = 0;
  if (size >= 4) std::memcpy(&magic, data, 4);
  if (magic == 0xba55ed50u) return image_kind::fatbin;
  if (magic == 0x07230203u) return image_kind::spirv;
  static const char bundle[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (size >= sizeof(bundle) - 1 && std::memcmp(data, bundle, sizeof(bundle) - 1) == 0)
    return image_kind::offload_bundle;
  // PTX is text naming its ISA version and target.
  std::string head(reinterpret_cast<const char *>(data), std::min<size_t>(size, 4096));
  if (head.find(".version") != std::string::npos && head.find(".target") != std::string::npos) return image_kind::ptx;
  return image_kind::unknown;
}

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// Bytes of a PTX scalar type token (".u32", ".b8", ".f64", ...), 0 if it is none.
size_t ptx_type_size(const std::string &t) {
  if (t.size() < 3 || t[0] != '.' || std::strchr("usbf", t[1]) == nullptr) return 0;
  const std::string bits = t.substr(2);
  if (bits == "8") return 1;
  if (bits == "16") return 2;
  if (bits == "32") return 4;
  if (bits == "64") return 8;
  return 0;
}

// Positions just after each ".entry" keyword.
std::vector<size_t> entries(const std::string &ptx) {
  std::vector<size_t> at;
  for (size_t p = ptx.find(".entry"); p != std::string::npos; p = ptx.find(".entry", p + 6))
    if (p + 6 < ptx.size() && (ptx[p + 6] == ' ' || ptx[p + 6] == '\t')) at.push_back(p + 6);
  return at;
}

std::string name_at(const std::string &ptx, size_t &p) {
  while (p < ptx.size() && (ptx[p] == ' ' || ptx[p] == '\t')) ++p;
  size_t start = p;
  while (p < ptx.size() && is_name_char(ptx[p])) ++p;
  return ptx.substr(start, p - start);
}

} // namespace

bool ptx_kernel_names(const std::vector<uint8_t> &image, std::vector<std::string> &names) {
  const std::string ptx(image.begin(), image.end());
  for (size_t p : entries(ptx)) {
    std::string name = name_at(ptx, p);
    if (!name.empty()) names.push_back(name);
  }
  return true;
}

bool ptx_param_sizes(const std::vector<uint8_t> &image, const std::string &kernel, std::vector<size_t> &sizes) {
  const std::string ptx(image.begin(), image.end());
  for (size_t p : entries(ptx)) {
    if (name_at(ptx, p) != kernel) continue;
    while (p < ptx.size() && (ptx[p] == ' ' || ptx[p] == '\t' || ptx[p] == '\n' || ptx[p] == '\r')) ++p;
    sizes.clear();
    if (p >= ptx.size() || ptx[p] != '(') return true; // no parameter list
    const size_t close = ptx.find(')', p);
    if (close == std::string::npos) return false;
    // Each parameter: ".param [qualifiers] .<type> name[count]", comma separated.
    std::string list = ptx.substr(p + 1, close - p - 1);
    size_t from = 0;
    while (from < list.size()) {
      size_t comma = list.find(',', from);
      std::string decl = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      from = comma == std::string::npos ? list.size() : comma + 1;
      if (decl.find(".param") == std::string::npos) continue;
      size_t type = 0, count = 1;
      for (size_t t = 0; t < decl.size();) {
        while (t < decl.size() && std::strchr(" \t\r\n", decl[t])) ++t;
        size_t end = t;
        while (end < decl.size() && !std::strchr(" \t\r\n", decl[end])) ++end;
        std::string token = decl.substr(t, end - t);
        if (!type) type = ptx_type_size(token);
        size_t bracket = token.find('[');
        if (bracket != std::string::npos) count = std::strtoul(token.c_str() + bracket + 1, nullptr, 10);
        t = end;
      }
      if (!type) return false;
      sizes.push_back(type * count);
    }
    return true;
  }
  return false;
}

bool elf_kernel_names(const std::vector<uint8_t> &image, std::vector<std::string> &names) {
  if (image.size() < sizeof(Elf64_Ehdr)) return false;
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > image.size())
    return false;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, image.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof(sh));
    return sh;
  };
  std::vector<std::string> entry_funcs, descriptors;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum) continue;
    Elf64_Shdr strtab = section(sh.sh_link);
    if (sh.sh_offset + sh.sh_size > image.size() || strtab.sh_offset + strtab.sh_size > image.size()) return false;
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, image.data() + sh.sh_offset + off, sizeof(sym));
      if (sym.st_name >= strtab.sh_size || ELF64_ST_BIND(sym.st_info) != STB_GLOBAL) continue;
      const char *base = reinterpret_cast<const char *>(image.data() + strtab.sh_offset);
      std::string name(base + sym.st_name, strnlen(base + sym.st_name, strtab.sh_size - sym.st_name));
      // AMD code objects: each kernel has a "<name>.kd" descriptor. Cubins: kernels are
      // functions marked as entries in st_other (0x10).
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".kd") == 0)
        descriptors.push_back(name.substr(0, name.size() - 3));
      else if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (sym.st_other & 0x10))
        entry_funcs.push_back(name);
    }
  }
  names = descriptors.empty() ? entry_funcs : descriptors;
  return true;
}

} // namespace ordo::stream_backend
