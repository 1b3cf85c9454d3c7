// SPDX-License-Identifier: Apache-2.0
// What a program image tells by itself (image.cpp).
#pragma once
#include <string>
#include <vector>

#include "driver_api.hpp"

namespace ordo::stream_backend {

// The ".entry" names of a PTX module.
bool ptx_kernel_names(const std::vector<uint8_t> &image, std::vector<std::string> &names);
// The parameter sizes of one PTX entry; false when the image has no such entry or
// a parameter it cannot read.
bool ptx_param_sizes(const std::vector<uint8_t> &image, const std::string &kernel, std::vector<size_t> &sizes);
// Kernel names from an ELF image's symbol table (cubin entries, AMD kernel descriptors).
bool elf_kernel_names(const std::vector<uint8_t> &image, std::vector<std::string> &names);

} // namespace ordo::stream_backend
