#include "module/module_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/content_hash.h"
#include "support/error.h"
#include "support/file_io.h"
#include "support/version.h"

namespace vkc {

namespace {

constexpr size_t kHeaderBytes = 32;
constexpr size_t kEntryFixedBytes = 24;
// Far above any real module; bounds the work done on a hostile index.
constexpr uint32_t kMaxSections = 1u << 20;
constexpr const char* kManifestSection = "manifest.json";

uint64_t align8(uint64_t n) { return (n + 7) / 8 * 8; }

void put_u32(std::vector<uint8_t>& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = uint8_t(v >> (8 * i));
}
void put_u64(std::vector<uint8_t>& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const std::vector<uint8_t>& in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(in[at + i]) << (8 * i);
  return v;
}
uint64_t get_u64(const std::vector<uint8_t>& in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(in[at + i]) << (8 * i);
  return v;
}

struct Section {
  std::string name;
  const uint8_t* data;
  size_t size;
};

}  // namespace

uint64_t module_file_checksum(const uint8_t* data, size_t size, uint32_t version) {
  if (version == 1) return content_hash(data, size);
  const ContentDigest d = content_digest(data, size);
  return d.lo ^ d.hi;
}

std::vector<uint8_t> pack_module_file(const ModuleImage& module, const ModuleExtras& extras) {
  const Manifest m = manifest_with_spirv_hashes(module);
  std::string manifest = manifest_to_json(m);
  std::vector<Section> sections{{kManifestSection, reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size()}};
  for (const auto& [name, words] : module.spirv)
    sections.push_back({name, reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4});
  sections.push_back({m.constants_file, module.constants.data(), module.constants.size()});
  for (const auto& [name, text] : extras) {
    check(name != kManifestSection && name != m.constants_file && !module.spirv.count(name),
          "module file: extra file '", name, "' clashes with a module file of the same name");
    sections.push_back({name, reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  }

  uint64_t index_bytes = 0;
  for (const Section& s : sections) index_bytes += kEntryFixedBytes + align8(s.name.size());
  uint64_t total = kHeaderBytes + index_bytes;
  std::vector<uint64_t> offsets;
  for (const Section& s : sections) {
    offsets.push_back(total);
    total += align8(s.size);
  }
  std::vector<uint8_t> out(total, 0);
  std::memcpy(out.data(), kModuleFileMagic, 8);
  put_u32(out, 8, kModuleFileVersion);
  put_u32(out, 12, uint32_t(sections.size()));
  put_u64(out, 16, total);
  size_t at = kHeaderBytes;
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    put_u64(out, at, offsets[i]);
    put_u64(out, at + 8, s.size);
    put_u32(out, at + 16, uint32_t(s.name.size()));
    std::memcpy(out.data() + at + kEntryFixedBytes, s.name.data(), s.name.size());
    at += kEntryFixedBytes + align8(s.name.size());
    if (s.size) std::memcpy(out.data() + offsets[i], s.data, s.size);
  }
  put_u64(out, 24, module_file_checksum(out.data() + kHeaderBytes, out.size() - kHeaderBytes));
  return out;
}

namespace {

// The container's sections by name, in file order, after checking magic, version, size, index
// bounds and checksum.
struct Container {
  std::map<std::string, std::pair<uint64_t, uint64_t>> sections;  // name -> (offset, size)
  std::vector<std::string> order;
};

Container read_container(const std::vector<uint8_t>& bytes, const std::string& what) {
  check(bytes.size() >= kHeaderBytes && std::memcmp(bytes.data(), kModuleFileMagic, 8) == 0, what,
        ": not a vkc module file (bad magic; expected a .vkcm written by vk-compile)");
  const uint32_t version = get_u32(bytes, 8);
  if (version < kOldestModuleFileVersion || version > kModuleFileVersion)
    throw FormatVersionError(cat(what, ": module file version ", version, " is not supported: written by ",
                                 version > kModuleFileVersion ? "a newer" : "an older", " vkc (this vkc ",
                                 vkc_version(), " reads versions ", kOldestModuleFileVersion, " to ", kModuleFileVersion,
                                 "): recompile it from its model with vk-compile MODEL -o ", what));
  const uint32_t count = get_u32(bytes, 12);
  const uint64_t declared = get_u64(bytes, 16);
  check(declared == bytes.size(), what, ": truncated or padded module file (", bytes.size(),
        " bytes, the header says ", declared, ")");
  check(count >= 1 && count <= kMaxSections, what, ": implausible section count ", count);

  Container c;
  uint64_t at = kHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) {
    check(at + kEntryFixedBytes <= bytes.size(), what, ": index entry ", i, " lies outside the file");
    const uint64_t offset = get_u64(bytes, at), size = get_u64(bytes, at + 8);
    const uint32_t name_len = get_u32(bytes, at + 16);
    check(name_len >= 1 && name_len <= 4096 && at + kEntryFixedBytes + name_len <= bytes.size(), what,
          ": index entry ", i, " has a name outside the file");
    std::string name(reinterpret_cast<const char*>(bytes.data() + at + kEntryFixedBytes), name_len);
    at += kEntryFixedBytes + align8(name_len);
    check(offset <= bytes.size() && size <= bytes.size() - offset, what, ": section '", name, "' (bytes [",
          offset, ", +", size, ")) lies outside the file of ", bytes.size(), " bytes");
    check(c.sections.emplace(name, std::make_pair(offset, size)).second, what, ": section '", name,
          "' appears twice");
    c.order.push_back(name);
  }
  check(get_u64(bytes, 24) == module_file_checksum(bytes.data() + kHeaderBytes, bytes.size() - kHeaderBytes, version),
        what,
        ": checksum mismatch (the file is corrupted)");
  check(c.order.front() == kManifestSection, what, ": the first section must be manifest.json, found '",
        c.order.front(), "'");
  return c;
}

}  // namespace

namespace {

// Unpacks `bytes`. With `reusable` (the same vector, owned by the caller and not needed after) the
// constants, almost all of a real module, are moved to the front of the file's own buffer, which
// becomes image.constants, instead of being copied into a new one: no second buffer of their size
// to allocate and fault in.
ModuleImage unpack(const std::vector<uint8_t>& bytes, std::vector<uint8_t>* reusable, const std::string& what,
                   ModuleExtras* extras) {
  const Container container = read_container(bytes, what);
  const auto& sections = container.sections;
  const auto& order = container.order;

  auto range = [&](const std::string& name) {
    auto it = sections.find(name);
    check(it != sections.end(), what, ": section '", name, "' is missing");
    return it->second;  // (offset, size)
  };
  auto section = [&](const std::string& name) {
    const auto [offset, size] = range(name);
    return std::vector<uint8_t>(bytes.data() + offset, bytes.data() + offset + size);
  };
  std::vector<uint8_t> manifest = section(kManifestSection);
  ModuleImage image;
  image.manifest = manifest_from_json(std::string(manifest.begin(), manifest.end()), what + ":manifest.json", what);
  const Manifest& m = image.manifest;
  const auto [constants_at, constants_size] = range(m.constants_file);
  check(constants_size == m.constants_bytes, what, ":", m.constants_file, ": ", constants_size,
        " bytes, the manifest says ", m.constants_bytes);
  std::set<std::string> used{kManifestSection, m.constants_file};
  for (const DispatchDesc& d : m.dispatches) {
    if (!used.insert(d.spv).second) continue;
    std::vector<uint32_t> words = load_spirv(section(d.spv), d, what + ":" + d.spv);
    image.spirv.emplace(d.spv, std::move(words));
  }
  if (extras) {
    for (const std::string& name : order) {
      if (used.count(name)) continue;
      const auto [offset, size] = range(name);
      (*extras)[name] = std::string(reinterpret_cast<const char*>(bytes.data() + offset), size);
    }
  }
  // Last: every other section has been read out of `bytes` by now. Reusing the buffer keeps its
  // capacity, the whole file; where that is more than an eighth above the constants (a .vkcm
  // carrying a large source.bin) they are copied after all rather than hold the rest.
  if (reusable && bytes.size() - constants_size <= constants_size / 8) {
    std::memmove(reusable->data(), reusable->data() + constants_at, constants_size);
    reusable->resize(constants_size);
    image.constants = std::move(*reusable);
  } else {
    image.constants.assign(bytes.data() + constants_at, bytes.data() + constants_at + constants_size);
  }
  return image;
}

}  // namespace

ModuleImage unpack_module_file(const std::vector<uint8_t>& bytes, const std::string& what, ModuleExtras* extras) {
  return unpack(bytes, nullptr, what, extras);
}

void write_module_file(const std::string& path, const ModuleImage& module, const ModuleExtras& extras) {
  std::vector<uint8_t> bytes = pack_module_file(module, extras);
  write_file(path, bytes.data(), bytes.size());
}

ModuleImage read_module_file(const std::string& path, ModuleExtras* extras) {
  std::vector<uint8_t> bytes = read_file(path);
  return unpack(bytes, &bytes, path, extras);
}

std::map<std::string, std::string> read_module_file_sections(const std::string& path,
                                                             const std::vector<std::string>& names) {
  const std::vector<uint8_t> bytes = read_file(path);
  const Container container = read_container(bytes, path);
  std::map<std::string, std::string> found;
  for (const std::string& name : names) {
    auto it = container.sections.find(name);
    if (it == container.sections.end()) continue;
    const char* p = reinterpret_cast<const char*>(bytes.data() + it->second.first);
    found.emplace(name, std::string(p, p + it->second.second));
  }
  return found;
}

bool has_module_file_extension(const std::string& path) {
  const std::string ext = ".vkcm";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

bool is_module_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in.gcount() == 8 && std::memcmp(magic, kModuleFileMagic, 8) == 0;
}

}  // namespace vkc
