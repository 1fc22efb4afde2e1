// Named target profiles (targets/*.json, embedded at build time) and the `host` pseudo-target.
#pragma once

#include <string>
#include <vector>

#include "module/target_limits.h"

namespace vkc::codegen {

struct TargetProfile {
  TargetLimits limits;
  std::vector<std::string> aliases;
  std::vector<std::string> sources;  // where each number came from
};

// Profile names in a stable order (lavapipe, nvidia, amd-rdna3, amd-cdna3, intel-xe, vulkan-min).
std::vector<std::string> known_targets();
// By name or alias. `host` is not a profile: the CLI resolves it through the runtime. Unknown name:
// vkc::Error "unknown target 'x' (known: lavapipe, nvidia, ...)".
const TargetProfile& find_target(const std::string& name);
// Parses one profile file's JSON text (exposed for tests).
TargetProfile parse_target_profile(const std::string& json_text, const std::string& what);

}  // namespace vkc::codegen
