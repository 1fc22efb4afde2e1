// GLSL -> SPIR-V through the glslang library (in process, no subprocess).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "module/target_limits.h"

namespace vkc::codegen {

// Compiles a compute shader for the target's Vulkan version. A compile error is a compiler bug:
// throws vkc::Error "internal: kernel 'NAME' failed to compile: <first glslang error line>".
std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& kernel_name,
                                   const TargetLimits& target);

}  // namespace vkc::codegen
