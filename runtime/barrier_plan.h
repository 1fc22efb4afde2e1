// Which dispatches need a compute->compute barrier before them, from the byte ranges
// (storage_range.h) each one reads and writes. Plain manifest logic with no Vulkan calls, so it is
// unit-tested directly.
#pragma once

#include <vector>

#include "module/manifest.h"

namespace vkc::rt {

// barrier[i]: dispatch i touches bytes that a dispatch since the last barrier wrote (RAW, WAW), or
// writes bytes that one read (WAR), so a compute->compute barrier must precede it.
std::vector<bool> plan_barriers(const Manifest& manifest);

}  // namespace vkc::rt
