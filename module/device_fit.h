// Whether a compiled module fits a device, judged by what its dispatches use.
//
// A module compiled for one profile runs on any device that has what its dispatches use: the
// profile's larger limits and its tuning hints (tile sizes, vendor, compute units) are no
// requirement. rt::Program checks this before any GPU work; vkc::Module::unmet_limits reports it.
#pragma once

#include <string>
#include <vector>

#include "module/manifest.h"

namespace vkc {

// The per-dispatch facts the check compares, gathered from the manifest (and, for a manifest
// written before format version 2, from the .spv itself).
struct DispatchUsage {
  uint64_t invocations = 1;            // workgroup_size[0] * [1] * [2]
  uint64_t largest_binding_bytes = 0;  // the largest storage-buffer range one binding binds
  std::string largest_binding;         // the tensor bound there
  uint32_t push_constant_bytes = 0;
  std::array<uint32_t, 2> subgroup_sizes{0, 0};
  SpirvUsage spirv;
};
DispatchUsage dispatch_usage(const ModuleImage& module, const DispatchDesc& d);

// One line per use that exceeds `device`, naming the dispatch, what it uses, the device's limit
// and the Vulkan name of that limit, e.g. "dispatch 'd3_conv_tiled' uses 49152 bytes of workgroup
// memory, the device has 32768 (maxComputeSharedMemorySize)". Empty: the module fits.
std::vector<std::string> unmet_usage(const ModuleImage& module, const TargetLimits& device);

// Why a device cannot run a pipeline created with subgroup size `size`
// (DispatchDesc::required_subgroup_size), "" when it can: `size` lies in the device's
// [min_subgroup_size, max_subgroup_size], and where that range holds more than one size the
// device can pin one for compute (TargetLimits::subgroup_size_control).
std::string subgroup_pin_misfit(uint32_t size, const TargetLimits& device);

// The module's requirements summed over its dispatches, for `vk-compile --report`: derived from
// the same per-dispatch facts, never recorded separately.
std::string requirements_summary(const Manifest& manifest);

}  // namespace vkc
