// Launch grids that respect maxComputeWorkGroupCount.
#pragma once

#include <array>
#include <cstdint>

#include "module/target_limits.h"

namespace vkc::codegen {

// A 1-D problem of `invocations` threads in workgroups of `workgroup_size`, folded into x and y
// when the group count exceeds maxComputeWorkGroupCount[0]. Kernels recover the linear workgroup
// index as gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x and must bounds-check, since
// the folded grid may have a partial last row. Throws vkc::Error when even x*y cannot cover it.
std::array<uint32_t, 3> linear_grid(uint64_t invocations, uint32_t workgroup_size,
                                    const TargetLimits& target, const std::string& what);

// Largest power-of-two workgroup size <= preferred that the target allows in x.
uint32_t fit_workgroup_size_x(uint32_t preferred, const TargetLimits& target);

}  // namespace vkc::codegen
