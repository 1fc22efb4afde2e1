#include "codegen/grid.h"

#include <algorithm>

#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {

std::array<uint32_t, 3> linear_grid(uint64_t invocations, uint32_t workgroup_size,
                                    const TargetLimits& target, const std::string& what) {
  uint64_t groups = std::max<uint64_t>(1, ceil_div(invocations, workgroup_size));
  uint64_t max_x = target.max_compute_work_group_count[0];
  uint64_t max_y = target.max_compute_work_group_count[1];
  if (groups <= max_x) return {uint32_t(groups), 1, 1};
  uint64_t y = ceil_div(groups, max_x);
  check(y <= max_y, what, ": ", groups, " workgroups exceed the target's grid limit ", max_x, "x",
        max_y);
  uint64_t x = ceil_div(groups, y);  // balance rows so the folded grid wastes little
  return {uint32_t(x), uint32_t(y), 1};
}

uint32_t fit_workgroup_size_x(uint32_t preferred, const TargetLimits& target) {
  uint32_t cap = std::min(target.max_compute_work_group_size[0], target.max_compute_work_group_invocations);
  uint32_t size = 1;
  while (size * 2 <= preferred && size * 2 <= cap) size *= 2;
  return size;
}

}  // namespace vkc::codegen
