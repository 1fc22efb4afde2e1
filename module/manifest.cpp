#include "module/manifest.h"

#include <filesystem>
#include <fstream>
#include <bit>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "module/json_exact.h"
#include "module/tensor_lookup.h"
#include "support/content_hash.h"
#include "support/error.h"
#include "support/file_io.h"
#include "support/version.h"

namespace vkc {

using nlohmann::json;

const char* tensor_role_name(TensorRole r) {
  switch (r) {
    case TensorRole::Input: return "input";
    case TensorRole::Output: return "output";
    case TensorRole::Constant: return "constant";
    case TensorRole::Intermediate: return "intermediate";
  }
  return "?";
}

const TensorDesc* Manifest::find_tensor(const std::string& name) const {
  for (const TensorDesc& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorDesc& Manifest::tensor(const std::string& name) const {
  const TensorDesc* t = find_tensor(name);
  check(t != nullptr, "module has no tensor named '", name, "'");
  return *t;
}

const TensorDesc& Manifest::storage_of(const std::string& name) const {
  return follow_views(*this, name, tensors.size());  // module/tensor_lookup.h
}

std::string format_version_refusal(std::optional<int> version, const std::string& written_by,
                                   const std::string& what, const std::string& module) {
  const std::string path = module.empty() ? "MODULE" : module;
  std::string by = written_by.empty() ? "" : cat("vkc ", written_by, " wrote it, ");
  const std::string reads = kOldestModuleFormatVersion == kModuleFormatVersion
                                ? cat(kModuleFormatVersion)
                                : cat(kOldestModuleFormatVersion, " to ", kModuleFormatVersion);
  std::string which = !version ? cat("has no format_version (not a vkc module, or written by a vkc older than ",
                                     "format versions; this vkc reads format ", reads, ")")
                      : cat("written by ", *version > kModuleFormatVersion ? "a newer" : "an older", " vkc (format ",
                            *version, ", this vkc reads ", reads, "; ", by, "this is vkc ", vkc_version(), ")");
  return cat(what, ": ", which, ": recompile it from its model with vk-compile MODEL -o ", path,
             ", or from the source graph it carries with vk-run ", path, " --recompile");
}

std::string manifest_to_json(const Manifest& m) {
  json j;
  j["format_version"] = m.format_version;
  j["vkc_version"] = vkc_version();
  j["target"] = m.target;
  j["source"] = m.source;
  // Written only when not the default, so fp32 modules read as they did before the field existed.
  if (m.precision != Precision::fp32) j["precision"] = precision_name(m.precision);
  j["arena_bytes"] = m.arena_bytes;
  j["constants_bytes"] = m.constants_bytes;
  j["constants_file"] = m.constants_file;
  j["inputs"] = m.inputs;
  j["outputs"] = m.outputs;
  json tensors = json::array();
  for (const TensorDesc& t : m.tensors) {
    json jt{{"name", t.name},
            {"dtype", std::string(dtype_name(t.dtype))},
            {"shape", t.shape},
            {"role", tensor_role_name(t.role)},
            {"size_bytes", t.size_bytes()}};
    if (!t.view_of.empty()) {
      jt["view_of"] = t.view_of;
      if (t.view_offset != 0) jt["view_offset"] = t.view_offset;
    } else if (t.role == TensorRole::Constant || t.role == TensorRole::Intermediate) jt["offset"] = t.offset;
    tensors.push_back(jt);
  }
  j["tensors"] = tensors;
  json dispatches = json::array();
  for (const DispatchDesc& d : m.dispatches) {
    json jb = json::array();
    for (const BindingDesc& b : d.bindings)
      jb.push_back({{"binding", b.binding}, {"tensor", b.tensor}, {"writes", b.writes}});
    json js = json::array();
    for (const SpecConstant& s : d.spec_constants) js.push_back({{"id", s.id}, {"value", s.value}});
    dispatches.push_back({{"name", d.name},
                          {"kernel", d.kernel},
                          {"strategy", d.strategy},
                          {"ops", d.ops},
                          {"spv", d.spv},
                          {"entry_point", d.entry_point},
                          {"bindings", jb},
                          {"push_constants", d.push_constants},
                          {"spec_constants", js},
                          {"workgroup_size", d.workgroup_size},
                          {"workgroup_count", d.workgroup_count},
                          {"workgroup_memory_bytes", d.workgroup_memory_bytes},
                          {"tiles", d.tiles},
                          {"flops", d.flops},
                          {"bytes", d.bytes},
                          {"notes", d.notes}});
    // Only when known: in-memory modules get their hashes when written (manifest_with_spirv_hashes).
    if (!d.spv_hash.empty()) dispatches.back()["spv_hash"] = d.spv_hash;
    if (!d.spirv.version.empty())
      dispatches.back()["requires"] = {{"subgroup_sizes", d.subgroup_sizes},
                                       {"spirv_version", d.spirv.version},
                                       {"capabilities", d.spirv.capabilities},
                                       {"extensions", d.spirv.extensions}};
    if (d.required_subgroup_size != 0)
      dispatches.back()["requires"]["required_subgroup_size"] = d.required_subgroup_size;
  }
  j["dispatches"] = dispatches;
  return j.dump(1) + "\n";
}

namespace {

// Reads j[key] as T exactly (module/json_exact.h), with an error naming the JSON path on absence,
// wrong type or a number T cannot hold.
template <typename T>
T field(const json& j, const char* key, const std::string& path, bool required = true,
        T fallback = T{}) {
  if (!j.is_object()) throw Error(cat(path, ": expected an object"));
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) throw Error(cat(path, ".", key, ": missing"));
    return fallback;
  }
  T out{};
  bool ok = false;
  try {
    ok = get_exact(*it, out);
  } catch (const json::exception&) {
  }
  if (!ok) throw Error(cat(path, ".", key, ": wrong type or out of range"));
  return out;
}

// A file name that stays inside the module directory: no separators, no "..", not empty.
void check_local_file(const std::string& name, const std::string& path) {
  check(!name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
            name.find('\\') == std::string::npos && name.find('\0') == std::string::npos,
        path, ": '", name, "' must be a plain file name inside the module directory");
}

}  // namespace

Manifest manifest_from_json(const std::string& text, const std::string& what, const std::string& module) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(cat(what, ": not valid JSON (byte ", e.byte, ")"));
  } catch (const json::exception& e) {
    // parse() also throws out_of_range for numbers no C++ type holds (1e999999): still bad JSON.
    throw Error(cat(what, ": not valid JSON (", e.what(), ")"));
  }
  Manifest m;
  const std::string root = what;
  // The version first: a module of another format may differ in any other field. Its writer's
  // vkc_version is only quoted (cut short: the message stays one readable line).
  auto written_by = [&] {
    auto v = j.is_object() ? j.find("vkc_version") : j.end();
    return v != j.end() && v->is_string() ? v->get<std::string>().substr(0, 40) : std::string();
  };
  if (j.is_object() && !j.contains("format_version"))
    throw FormatVersionError(format_version_refusal(std::nullopt, written_by(), what, module));
  m.format_version = field<int>(j, "format_version", root);  // also refuses a non-object
  // Format 1 (before dispatches recorded `requires`) still loads: its usage is read from its .spv.
  if (m.format_version < kOldestModuleFormatVersion || m.format_version > kModuleFormatVersion)
    throw FormatVersionError(format_version_refusal(m.format_version, written_by(), what, module));
  m.vkc_version = field<std::string>(j, "vkc_version", root, false);
  try {
    from_json(field<json>(j, "target", root), m.target);
  } catch (const Error& e) {
    throw Error(cat(what, ".target: ", e.what()));
  }
  m.source = field<std::string>(j, "source", root, false);
  if (j.contains("precision"))
    m.precision = parse_precision(field<std::string>(j, "precision", root), root + ".precision");
  m.arena_bytes = field<uint64_t>(j, "arena_bytes", root);
  m.constants_bytes = field<uint64_t>(j, "constants_bytes", root);
  m.constants_file = field<std::string>(j, "constants_file", root);
  check_local_file(m.constants_file, root + ".constants_file");
  m.inputs = field<std::vector<std::string>>(j, "inputs", root);
  m.outputs = field<std::vector<std::string>>(j, "outputs", root);

  json tensors = field<json>(j, "tensors", root);
  check(tensors.is_array(), root, ".tensors: expected an array");
  std::set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string p = cat(root, ".tensors[", i, "]");
    const json& jt = tensors[i];
    TensorDesc t;
    t.name = field<std::string>(jt, "name", p);
    check(names.insert(t.name).second, p, ": duplicate tensor name '", t.name, "'");
    auto dt = parse_dtype(field<std::string>(jt, "dtype", p));
    check(dt.has_value(), p, ".dtype: unknown element type");
    t.dtype = *dt;
    t.shape = field<Shape>(jt, "shape", p);
    check(t.shape.size() <= 8, p, ".shape: rank ", t.shape.size(), " is above 8");
    try {
      shape_numel(t.shape);
    } catch (const Error& e) {
      throw Error(cat(p, ".shape: ", e.what()));
    }
    std::string role = field<std::string>(jt, "role", p);
    if (role == "input") t.role = TensorRole::Input;
    else if (role == "output") t.role = TensorRole::Output;
    else if (role == "constant") t.role = TensorRole::Constant;
    else if (role == "intermediate") t.role = TensorRole::Intermediate;
    else throw Error(cat(p, ".role: unknown role '", role, "'"));
    t.view_of = field<std::string>(jt, "view_of", p, false);
    t.offset = field<uint64_t>(jt, "offset", p, false);
    t.view_offset = field<uint64_t>(jt, "view_offset", p, false);
    check(t.view_offset == 0 || !t.view_of.empty(), p, ".view_offset: only a view has one");
    if (t.view_of.empty()) {
      uint64_t limit = t.role == TensorRole::Constant ? m.constants_bytes
                       : t.role == TensorRole::Intermediate ? m.arena_bytes
                                                            : UINT64_MAX;
      check(t.offset <= limit && t.size_bytes() <= limit - t.offset, p, ": bytes [", t.offset, ", ",
            t.offset + t.size_bytes(), ") lie outside the ", tensor_role_name(t.role),
            " storage of ", limit, " bytes");
    }
    m.tensors.push_back(std::move(t));
  }
  const TensorLookup lookup(m);  // m.tensors is final from here
  for (const TensorDesc& t : m.tensors) {
    if (t.view_of.empty()) continue;
    lookup.storage_of(t.name);  // throws on unknown names and cycles
    const TensorDesc& of = lookup.tensor(t.view_of);
    check(t.view_offset <= of.size_bytes() && t.size_bytes() <= of.size_bytes() - t.view_offset, root,
          ": view '", t.name, "' (", t.size_bytes(), " bytes at offset ", t.view_offset,
          ") does not lie inside '", of.name, "' (", of.size_bytes(), " bytes)");
  }
  for (const std::string& n : m.inputs)
    check(lookup.find(n) && lookup.find(n)->role == TensorRole::Input, root, ".inputs: '", n,
          "' is not an input tensor");
  for (const std::string& n : m.outputs) check(lookup.find(n), root, ".outputs: unknown tensor '", n, "'");

  json dispatches = field<json>(j, "dispatches", root);
  check(dispatches.is_array(), root, ".dispatches: expected an array");
  for (size_t i = 0; i < dispatches.size(); ++i) {
    std::string p = cat(root, ".dispatches[", i, "]");
    const json& jd = dispatches[i];
    DispatchDesc d;
    d.name = field<std::string>(jd, "name", p);
    d.kernel = field<std::string>(jd, "kernel", p, false);
    d.strategy = field<std::string>(jd, "strategy", p, false);
    d.ops = field<std::vector<std::string>>(jd, "ops", p, false);
    d.spv = field<std::string>(jd, "spv", p);
    check_local_file(d.spv, p + ".spv");
    d.spv_hash = field<std::string>(jd, "spv_hash", p, false);
    check(d.spv_hash.empty() || (d.spv_hash.size() == 16 && d.spv_hash.find_first_not_of(
                                     "0123456789abcdef") == std::string::npos),
          p, ".spv_hash: expected 16 lowercase hex digits");
    d.entry_point = field<std::string>(jd, "entry_point", p, false, std::string("main"));
    json jb = field<json>(jd, "bindings", p);
    check(jb.is_array(), p, ".bindings: expected an array");
    for (size_t b = 0; b < jb.size(); ++b) {
      std::string pb = cat(p, ".bindings[", b, "]");
      BindingDesc bd;
      bd.binding = field<uint32_t>(jb[b], "binding", pb);
      bd.tensor = field<std::string>(jb[b], "tensor", pb);
      bd.writes = field<bool>(jb[b], "writes", pb, false);
      check(lookup.find(bd.tensor) != nullptr, pb, ".tensor: unknown tensor '", bd.tensor, "'");
      d.bindings.push_back(bd);
    }
    d.push_constants = field<std::vector<uint32_t>>(jd, "push_constants", p, false);
    json js = field<json>(jd, "spec_constants", p, false, json::array());
    check(js.is_array(), p, ".spec_constants: expected an array");
    for (size_t s = 0; s < js.size(); ++s) {
      std::string ps = cat(p, ".spec_constants[", s, "]");
      d.spec_constants.push_back({field<uint32_t>(js[s], "id", ps), field<uint32_t>(js[s], "value", ps)});
    }
    d.workgroup_size = field<std::array<uint32_t, 3>>(jd, "workgroup_size", p);
    d.workgroup_count = field<std::array<uint32_t, 3>>(jd, "workgroup_count", p);
    d.workgroup_memory_bytes = field<uint32_t>(jd, "workgroup_memory_bytes", p);
    d.tiles = field<std::map<std::string, int64_t>>(jd, "tiles", p, false);
    d.flops = field<double>(jd, "flops", p, false);
    d.bytes = field<double>(jd, "bytes", p, false);
    d.notes = field<std::string>(jd, "notes", p, false);
    for (int a = 0; a < 3; ++a) {
      check(d.workgroup_size[a] >= 1, p, ".workgroup_size[", a, "] must be at least 1");
    }
    if (jd.contains("requires")) {
      const json& jr = field<json>(jd, "requires", p);
      const std::string pr = p + ".requires";
      d.subgroup_sizes = field<std::array<uint32_t, 2>>(jr, "subgroup_sizes", pr);
      check(d.subgroup_sizes[0] <= d.subgroup_sizes[1], pr, ".subgroup_sizes: ", d.subgroup_sizes[0], " is above ",
            d.subgroup_sizes[1]);
      d.spirv.version = field<std::string>(jr, "spirv_version", pr);
      check(d.spirv.version.size() == 3 && d.spirv.version[0] == '1' && d.spirv.version[1] == '.' &&
                d.spirv.version[2] >= '0' && d.spirv.version[2] <= '6',
            pr, ".spirv_version: expected 1.0 to 1.6, found '", d.spirv.version, "'");
      d.spirv.capabilities = field<std::vector<std::string>>(jr, "capabilities", pr);
      d.spirv.extensions = field<std::vector<std::string>>(jr, "extensions", pr);
      d.required_subgroup_size = field<uint32_t>(jr, "required_subgroup_size", pr, false);
      check(d.required_subgroup_size == 0 ||
                (d.subgroup_sizes[0] == d.required_subgroup_size && d.subgroup_sizes[1] == d.required_subgroup_size),
            pr, ".required_subgroup_size: ", d.required_subgroup_size, " is not the one size subgroup_sizes allows");
      check(d.required_subgroup_size == 0 || std::has_single_bit(d.required_subgroup_size), pr,
            ".required_subgroup_size: ", d.required_subgroup_size, " is not a power of two");
    }
    m.dispatches.push_back(std::move(d));
  }
  return m;
}

Manifest manifest_with_spirv_hashes(const ModuleImage& module) {
  Manifest m = module.manifest;
  for (DispatchDesc& d : m.dispatches) {
    auto it = module.spirv.find(d.spv);
    if (it != module.spirv.end()) d.spv_hash = hash_hex(content_hash(it->second.data(), it->second.size() * 4));
  }
  return m;
}

// Manifests without spv_hash (written before it existed) are still read rather than refused: the
// header and instruction checks below still catch a cut-off or foreign file, a .vkcm has its own
// whole-file checksum, and refusing would make every user recompile modules that are fine.
std::vector<uint32_t> load_spirv(const std::vector<uint8_t>& bytes, const DispatchDesc& d,
                                 const std::string& what) {
  constexpr uint32_t kMagic = 0x07230203u;
  constexpr size_t kHeaderWords = 5;  // magic, version, generator, id bound, schema
  const char* recompile = "; recompile the module";
  check(bytes.size() % 4 == 0 && bytes.size() >= kHeaderWords * 4, what, ": not a SPIR-V module (",
        bytes.size(), " bytes, expected a 20-byte header and whole 32-bit words)", recompile);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  check(words[0] == kMagic, what, ": not a SPIR-V module (bad magic number)", recompile);
  const uint32_t version = words[1];
  const uint32_t major = (version >> 16) & 0xff, minor = (version >> 8) & 0xff;
  check((version & 0xff0000ffu) == 0 && major == 1 && minor <= 6, what, ": SPIR-V version word 0x",
        hash_hex(version).substr(8), " is not 1.0 to 1.6", recompile);
  check(words[4] == 0, what, ": SPIR-V schema word is ", words[4], ", expected 0", recompile);
  // Each instruction's first word holds its word count in the high 16 bits; a file cut short
  // mid-instruction, or one with garbage after the header, fails this walk.
  for (size_t at = kHeaderWords; at < words.size();) {
    const size_t count = words[at] >> 16;
    check(count >= 1 && count <= words.size() - at, what, ": truncated or corrupt SPIR-V: the instruction at word ",
          at, " has word count ", count, ", the file has ", words.size(), " words", recompile);
    at += count;
  }
  if (!d.spv_hash.empty()) {
    std::string actual = hash_hex(content_hash(bytes.data(), bytes.size()));
    check(actual == d.spv_hash, what, ": content hash ", actual, " does not match the manifest's ", d.spv_hash,
          " (the file changed after compiling)", recompile);
  }
  return words;
}

void write_module_dir(const std::string& dir, const ModuleImage& module) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  check(!ec, "cannot create module directory '", dir, "': ", ec.message());
  for (const auto& [name, words] : module.spirv) {
    check_local_file(name, "spv");
    write_file(dir + "/" + name, reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4);
  }
  write_file(dir + "/" + module.manifest.constants_file, module.constants.data(), module.constants.size());
  std::string text = manifest_to_json(manifest_with_spirv_hashes(module));
  write_file(dir + "/manifest.json", reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

ModuleImage read_module_dir(const std::string& dir) {
  ModuleImage image;
  std::vector<uint8_t> text = read_file(dir + "/manifest.json");
  image.manifest = manifest_from_json(std::string(text.begin(), text.end()), dir + "/manifest.json", dir);
  const Manifest& m = image.manifest;
  image.constants = read_file(dir + "/" + m.constants_file);
  check(image.constants.size() == m.constants_bytes, dir, "/", m.constants_file, ": ",
        image.constants.size(), " bytes, the manifest says ", m.constants_bytes);
  for (const DispatchDesc& d : m.dispatches) {
    if (image.spirv.count(d.spv)) continue;
    std::vector<uint32_t> words = load_spirv(read_file(dir + "/" + d.spv), d, dir + "/" + d.spv);
    image.spirv.emplace(d.spv, std::move(words));
  }
  return image;
}

}  // namespace vkc
