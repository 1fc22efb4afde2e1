// Which Vulkan environment (and so which SPIR-V version) kernels are emitted for.
#pragma once

#include <string>

#include "module/target_limits.h"

namespace vkc::codegen {

// The Vulkan minor version kernels target: the target's, capped at 1.2 (SPIR-V 1.5). Vulkan 1.3's
// SPIR-V 1.6 makes glslang express the workgroup size with LocalSizeId, which every device must
// then support through the maintenance4 feature, and vkc kernels use nothing 1.6 adds. Modules
// for 1.3 targets therefore run on any Vulkan 1.2 device that meets their other limits.
int kernel_vulkan_minor(const TargetLimits& target);

}  // namespace vkc::codegen
