// Which dispatches need a compute->compute barrier before them, from the byte ranges
// (storage_range.h) each one reads and writes, and the order to record them in. Plain manifest
// logic with no Vulkan calls, so it is unit-tested directly.
#pragma once

#include <vector>

#include "module/manifest.h"

namespace vkc::rt {

// barrier[i]: dispatch i touches bytes that a dispatch since the last barrier wrote (RAW, WAW), or
// writes bytes that one read (WAR), so a compute->compute barrier must precede it.
std::vector<bool> plan_barriers(const Manifest& manifest);

// The order to record the dispatches in: between two barriers (`barrier` from plan_barriers) the
// dispatches touch no bytes another one writes, so any order is correct; the ones with more
// workgroup memory go first, the rest in manifest order. Why: on the H200 (NVIDIA 580) a kernel
// with workgroup memory recorded after one without, that fills every SM, waited for the SMs to
// drain: ShuffleNet-V2's channel-shuffle gather beside the next block's 1x1 conv cost 0.3 ms of
// 1.7 at batch 32 (1.39 ms conv first), GoogLeNet's branches gained 1-4%, nothing lost (session 41).
std::vector<size_t> plan_record_order(const Manifest& manifest, const std::vector<bool>& barrier);

}  // namespace vkc::rt
