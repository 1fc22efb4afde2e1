// SPIRV-Tools optimization and validation, and facts read back from emitted SPIR-V.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "module/target_limits.h"

namespace vkc::codegen {

// Runs the performance passes for the target environment; returns the optimized module.
std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words, const TargetLimits& target,
                                     const std::string& kernel_name);
// Validates for the target environment (vulkan1.1/1.2/1.3). Failure is a compiler bug: throws
// vkc::Error "internal: kernel 'NAME' failed SPIR-V validation: <validator message>".
void validate_spirv(const std::vector<uint32_t>& words, const TargetLimits& target,
                    const std::string& kernel_name);

// Bytes of all Workgroup-storage-class variables (std430-like natural sizes: scalars, vectors,
// arrays, structs with their declared offsets/strides when decorated, else packed with natural
// alignment), measured from the module itself. Array lengths given by specialization constants are
// evaluated with `spec_values` overrides (id -> value) or their defaults.
uint32_t measure_workgroup_memory(const std::vector<uint32_t>& words,
                                  const std::vector<std::pair<uint32_t, uint32_t>>& spec_values = {});
// The LocalSize of the first compute entry point (or LocalSizeId resolved with spec values).
std::array<uint32_t, 3> read_local_size(const std::vector<uint32_t>& words,
                                        const std::vector<std::pair<uint32_t, uint32_t>>& spec_values = {});

}  // namespace vkc::codegen
