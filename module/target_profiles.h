// Named target profiles: the TargetLimits of the GPUs vkc plans for, read from targets/*.json
// (embedded at build time). Plain data like the rest of the module layer, so the compiler, the
// CLIs and the tests all name targets the same way without needing a GPU.
#pragma once

#include <string>
#include <vector>

#include "module/target_limits.h"

namespace vkc {

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

}  // namespace vkc
