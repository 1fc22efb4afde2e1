// The single-file module (.vkcm): the content of a module directory in one file, for shipping.
//
//   offset 0   8 bytes  magic "VKCM\r\n\x1a\n" (text-mode transfers and truncated headers show up)
//          8   u32      container version (kModuleFileVersion)
//         12   u32      section count
//         16   u64      total file size in bytes (a truncated file fails here)
//         24   u64      module_file_checksum() of every byte after this 32-byte header
//         32   index    one entry per section: u64 offset, u64 size, u32 name length, u32 zero,
//                       then the name bytes, zero-padded to a multiple of 8
//              data     the sections, each starting at a multiple of 8
//
// All integers are little-endian. The first section is "manifest.json"; then one section per
// SPIR-V file named as in the manifest, the constants under the manifest's constants_file, and
// optional extra files (vk-compile adds "source.vkir"). docs/module-format.md has the details.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "module/manifest.h"

namespace vkc {

// Version 2 changed only the checksum (FNV-1a in version 1, a byte-serial 1 GB/s that was a
// tenth of a large model's cache hit); version 1 files still load, checked the old way.
inline constexpr uint32_t kModuleFileVersion = 2;
inline constexpr uint32_t kOldestModuleFileVersion = 1;
inline constexpr char kModuleFileMagic[8] = {'V', 'K', 'C', 'M', '\r', '\n', '\x1a', '\n'};

// The source graph (printed IR) that vk-compile, Module::save and the module cache put beside a
// module: what recompiling and the reference interpreter start from.
inline constexpr const char* kSourceGraphFile = "source.vkir";

// Files carried besides the module proper, by name (e.g. "source.vkir").
using ModuleExtras = std::map<std::string, std::string>;

// The header's checksum of the bytes after the header, as a container of `version` computes it.
uint64_t module_file_checksum(const uint8_t* data, size_t size, uint32_t version = kModuleFileVersion);

std::vector<uint8_t> pack_module_file(const ModuleImage& module, const ModuleExtras& extras = {});
// Validates the container (magic, version, size, index bounds, checksum) and then the manifest;
// throws vkc::Error naming `what` and the problem. Extra sections go to `extras` when non-null.
ModuleImage unpack_module_file(const std::vector<uint8_t>& bytes, const std::string& what,
                               ModuleExtras* extras = nullptr);

void write_module_file(const std::string& path, const ModuleImage& module, const ModuleExtras& extras = {});
ModuleImage read_module_file(const std::string& path, ModuleExtras* extras = nullptr);

// Sections of a .vkcm by name (those present; one read of the file), checking only the container,
// not the manifest: how the source graph of a module written in another format version is
// recovered.
std::map<std::string, std::string> read_module_file_sections(const std::string& path,
                                                             const std::vector<std::string>& names);

// True when `path` names a single-file module by its extension (".vkcm"): how the writers choose
// between a file and a directory, and one way a loader recognises a file.
bool has_module_file_extension(const std::string& path);

// True when `path` is a regular file that starts with the .vkcm magic.
bool is_module_file(const std::string& path);

}  // namespace vkc
