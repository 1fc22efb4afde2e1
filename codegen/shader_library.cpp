#include "codegen/shader_library.h"

#include <map>
#include <utility>

#include "support/error.h"

namespace vkc::codegen::embedded {
const std::vector<std::pair<std::string, std::string>>& shader_files();
}

namespace vkc::codegen {
namespace {

// Templates by name without extension: kernels ask for "matmul", the file is matmul.comp (or a
// .glsl include-style fragment). Built once; the embedded data is immutable.
const std::map<std::string, std::string>& library() {
  static const std::map<std::string, std::string> lib = [] {
    std::map<std::string, std::string> out;
    for (const auto& [file, text] : embedded::shader_files()) {
      std::string stem = file;
      for (const char* ext : {".comp", ".glsl"})
        if (stem.size() > std::string(ext).size() && stem.ends_with(ext))
          stem.resize(stem.size() - std::string(ext).size());
      bool fresh = out.emplace(stem, text).second;
      check(fresh, "internal: shader templates '", file, "' and another share the name '", stem, "'");
    }
    return out;
  }();
  return lib;
}

std::string strip_extension(const std::string& name) {
  for (const char* ext : {".comp", ".glsl"})
    if (name.ends_with(ext)) return name.substr(0, name.size() - std::string(ext).size());
  return name;
}

}  // namespace

const std::string& shader_source(const std::string& name) {
  const auto& lib = library();
  auto it = lib.find(strip_extension(name));
  if (it == lib.end()) throw Error(cat("internal: no shader template ", name));
  return it->second;
}

std::vector<std::string> shader_names() {
  std::vector<std::string> names;
  for (const auto& entry : library()) names.push_back(entry.first);
  return names;
}

std::string instantiate_shader(const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& values) {
  return instantiate_template(name, shader_source(name), values);
}

std::string instantiate_template(const std::string& name, const std::string& text,
                                 const std::vector<std::pair<std::string, std::string>>& values) {
  // Substitutes in a single left-to-right pass over the template, so a value that itself contains
  // "${...}" is inserted literally and never re-expanded.
  std::map<std::string, std::string> value_of;
  for (const auto& [key, value] : values) {
    bool fresh = value_of.emplace(key, value).second;
    check(fresh, "internal: shader template '", name, "': key '", key, "' given twice");
  }
  std::map<std::string, bool> used;
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t open = text.find("${", pos);
    if (open == std::string::npos) {
      out.append(text, pos, std::string::npos);
      break;
    }
    size_t close = text.find('}', open + 2);
    if (close == std::string::npos)
      throw Error(cat("internal: shader template '", name, "': unterminated '${' at offset ", open));
    const std::string key = text.substr(open + 2, close - open - 2);
    auto it = value_of.find(key);
    if (it == value_of.end())
      throw Error(cat("internal: shader template '", name, "': no value for '${", key, "}'"));
    used[key] = true;
    out.append(text, pos, open - pos);
    out += it->second;
    pos = close + 1;
  }
  // A value nobody asked for means the caller and the template disagree about the parameters.
  for (const auto& [key, value] : values)
    if (!used.count(key))
      throw Error(cat("internal: shader template '", name, "': key '", key,
                      "' does not occur in the template"));
  return out;
}

}  // namespace vkc::codegen
