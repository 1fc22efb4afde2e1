#include "module/target_profiles.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/error.h"

namespace vkc::embedded {
const std::vector<std::pair<std::string, std::string>>& target_files();
}

namespace vkc {
namespace {

// The order users see in messages and `--list-targets`: the machine we test on first, then the
// vendors, then the spec floor. Files not listed here still load and follow in name order.
const char* const kPreferredOrder[] = {"lavapipe", "nvidia", "amd-rdna3", "amd-rdna4", "amd-cdna3", "intel-xe", "intel-alchemist",
                                       "intel-xe2", "vulkan-min"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

struct Registry {
  std::vector<TargetProfile> profiles;  // in known_targets() order
  std::map<std::string, size_t> by_name;  // lower-case name or alias -> index
};

const Registry& registry() {
  // Built once on first use; the embedded data never changes, so later readers need no lock.
  static const Registry reg = [] {
    std::vector<TargetProfile> loaded;
    for (const auto& [file, text] : embedded::target_files())
      loaded.push_back(parse_target_profile(text, "targets/" + file));
    auto rank = [](const TargetProfile& p) {
      auto it = std::find(std::begin(kPreferredOrder), std::end(kPreferredOrder), p.limits.name);
      return std::pair(it - std::begin(kPreferredOrder), p.limits.name);
    };
    std::sort(loaded.begin(), loaded.end(),
              [&](const TargetProfile& a, const TargetProfile& b) { return rank(a) < rank(b); });
    Registry r;
    r.profiles = std::move(loaded);
    for (size_t i = 0; i < r.profiles.size(); ++i) {
      const TargetProfile& p = r.profiles[i];
      std::vector<std::string> keys{p.limits.name};
      keys.insert(keys.end(), p.aliases.begin(), p.aliases.end());
      for (const std::string& key : keys) {
        // A name claimed twice would make resolution depend on file order; refuse it at startup.
        bool fresh = r.by_name.emplace(lower(key), i).second;
        check(fresh, "internal: target name or alias '", key, "' is used by two profiles");
      }
    }
    return r;
  }();
  return reg;
}

}  // namespace

TargetProfile parse_target_profile(const std::string& json_text, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message is one line ("[json.exception.parse_error.101] parse error at line ...").
    throw Error(cat(what, ": invalid JSON: ", e.what()));
  }
  check(j.is_object(), what, ": a target profile must be a JSON object");
  TargetProfile p;
  try {
    from_json(j, p.limits);  // tolerates the "aliases" and "sources" keys
  } catch (const Error& e) {
    throw Error(cat(what, ": ", e.what()));
  }
  check(!p.limits.name.empty(), what, ": target profile has no \"name\"");
  check(p.limits.name != "host", what, ": 'host' is reserved for the live device");
  if (j.contains("aliases")) {
    const auto& a = j.at("aliases");
    check(a.is_array(), what, ": \"aliases\" must be an array of strings");
    for (const auto& v : a) {
      check(v.is_string(), what, ": \"aliases\" must be an array of strings");
      p.aliases.push_back(v.get<std::string>());
    }
  }
  if (j.contains("sources")) {
    // Written as {"limit": "where it comes from"} in the files; kept as "limit: where" lines.
    const auto& s = j.at("sources");
    check(s.is_object(), what, ": \"sources\" must be an object of strings");
    for (auto it = s.begin(); it != s.end(); ++it) {
      check(it.value().is_string(), what, ": \"sources\" must be an object of strings");
      p.sources.push_back(cat(it.key(), ": ", it.value().get<std::string>()));
    }
  }
  return p;
}

std::vector<std::string> known_targets() {
  std::vector<std::string> names;
  for (const TargetProfile& p : registry().profiles) names.push_back(p.limits.name);
  return names;
}

const TargetProfile& find_target(const std::string& name) {
  const Registry& r = registry();
  auto it = r.by_name.find(lower(name));
  if (it != r.by_name.end()) return r.profiles[it->second];
  std::string known;
  for (const TargetProfile& p : r.profiles) known += p.limits.name + ", ";
  throw Error(cat("unknown target '", name, "' (known: ", known, "host)"));
}

}  // namespace vkc
