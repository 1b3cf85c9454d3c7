// SPDX-License-Identifier: Apache-2.0
// What the stream backend reads from program images by itself (image.cpp): the
// kernel names and parameter sizes a driver without those queries (HIP) relies on.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "image.hpp"

namespace {

using ordo::stream_backend::classify_image;
using ordo::stream_backend::image_kind;

std::vector<uint8_t> bytes(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

const char *kPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry fill(
	.param .u64 .ptr .global .align 4 fill_param_0,
	.param .u32 fill_param_1
)
{
	ret;
}
.visible .entry empty()
{
	ret;
}
.visible .entry fill_with_offset(
	.param .u64 fill_with_offset_param_0,
	.param .u32 fill_with_offset_param_1,
	.param .align 8 .b8 fill_with_offset_param_2[24]
)
{
	ret;
}
.visible .func helper(.param .b32 x)
{
	ret;
}
)";

TEST(StreamBackendImage, ClassifiesByTheFirstBytes) {
  auto ptx = bytes(kPtx);
  EXPECT_EQ(image_kind::ptx, classify_image(ptx.data(), ptx.size()));
  const uint8_t elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  EXPECT_EQ(image_kind::elf, classify_image(elf, sizeof elf));
  const uint8_t spirv[] = {0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0};
  EXPECT_EQ(image_kind::spirv, classify_image(spirv, sizeof spirv));
  auto bundle = bytes("__CLANG_OFFLOAD_BUNDLE__\x02\x00");
  EXPECT_EQ(image_kind::offload_bundle, classify_image(bundle.data(), bundle.size()));
  const uint8_t fatbin[] = {0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0};
  EXPECT_EQ(image_kind::fatbin, classify_image(fatbin, sizeof fatbin));
  auto text = bytes("not a program");
  EXPECT_EQ(image_kind::unknown, classify_image(text.data(), text.size()));
  EXPECT_EQ(image_kind::unknown, classify_image(nullptr, 0));
}

TEST(StreamBackendImage, PtxEntriesAndTheirParameters) {
  auto ptx = bytes(kPtx);
  std::vector<std::string> names;
  ASSERT_TRUE(ordo::stream_backend::ptx_kernel_names(ptx, names));
  EXPECT_EQ((std::vector<std::string>{"fill", "empty", "fill_with_offset"}), names); // .func is no kernel

  std::vector<size_t> sizes;
  ASSERT_TRUE(ordo::stream_backend::ptx_param_sizes(ptx, "fill", sizes));
  EXPECT_EQ((std::vector<size_t>{8, 4}), sizes);
  ASSERT_TRUE(ordo::stream_backend::ptx_param_sizes(ptx, "empty", sizes));
  EXPECT_TRUE(sizes.empty());
  ASSERT_TRUE(ordo::stream_backend::ptx_param_sizes(ptx, "fill_with_offset", sizes));
  EXPECT_EQ((std::vector<size_t>{8, 4, 24}), sizes);
  // A prefix of another entry's name is not that entry.
  EXPECT_FALSE(ordo::stream_backend::ptx_param_sizes(ptx, "fil", sizes));
  EXPECT_FALSE(ordo::stream_backend::ptx_param_sizes(ptx, "helper", sizes));
}

// A minimal ELF64 image: a symbol table and its string table, nothing else.
std::vector<uint8_t> elf_with_symbols(const std::vector<Elf64_Sym> &syms, const std::string &strtab) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3; // null, .symtab, .strtab
  const size_t sym_off = sizeof(Elf64_Ehdr);
  const size_t str_off = sym_off + syms.size() * sizeof(Elf64_Sym);
  eh.e_shoff = str_off + strtab.size();
  Elf64_Shdr sh[3]{};
  sh[1].sh_type = SHT_SYMTAB;
  sh[1].sh_offset = sym_off;
  sh[1].sh_size = syms.size() * sizeof(Elf64_Sym);
  sh[1].sh_link = 2;
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = str_off;
  sh[2].sh_size = strtab.size();
  std::vector<uint8_t> out(eh.e_shoff + sizeof sh);
  std::memcpy(out.data(), &eh, sizeof eh);
  std::memcpy(out.data() + sym_off, syms.data(), sh[1].sh_size);
  std::memcpy(out.data() + str_off, strtab.data(), strtab.size());
  std::memcpy(out.data() + eh.e_shoff, sh, sizeof sh);
  return out;
}

Elf64_Sym symbol(uint32_t name, unsigned bind, unsigned type, unsigned char other = 0) {
  Elf64_Sym s{};
  s.st_name = name;
  s.st_info = ELF64_ST_INFO(bind, type);
  s.st_other = other;
  return s;
}

TEST(StreamBackendImage, ElfKernelNames) {
  // A cubin: kernels are global functions marked as entries (st_other 0x10).
  const std::string cubin_names = std::string("\0saxpy\0device_fn\0local_fn\0", 26);
  auto cubin = elf_with_symbols({symbol(0, STB_LOCAL, STT_NOTYPE), symbol(1, STB_GLOBAL, STT_FUNC, 0x10),
                                 symbol(7, STB_GLOBAL, STT_FUNC), symbol(17, STB_LOCAL, STT_FUNC, 0x10)},
                                cubin_names);
  std::vector<std::string> names;
  ASSERT_TRUE(ordo::stream_backend::elf_kernel_names(cubin, names));
  EXPECT_EQ((std::vector<std::string>{"saxpy"}), names);

  // An AMD code object: each kernel has a global "<name>.kd" descriptor.
  const std::string amd_names = std::string("\0fill\0fill.kd\0helper\0", 21);
  auto amd = elf_with_symbols({symbol(0, STB_LOCAL, STT_NOTYPE), symbol(1, STB_GLOBAL, STT_FUNC),
                               symbol(6, STB_GLOBAL, STT_OBJECT), symbol(14, STB_GLOBAL, STT_FUNC)},
                              amd_names);
  ASSERT_TRUE(ordo::stream_backend::elf_kernel_names(amd, names));
  EXPECT_EQ((std::vector<std::string>{"fill"}), names);

  // Truncated or foreign images are refused, not misread.
  std::vector<uint8_t> truncated(cubin.begin(), cubin.begin() + 80);
  EXPECT_FALSE(ordo::stream_backend::elf_kernel_names(truncated, names));
  EXPECT_FALSE(ordo::stream_backend::elf_kernel_names(bytes(kPtx), names));
}

} // namespace
