#include "ir/slice_geometry.h"

#include <algorithm>

namespace vkc::ir {

std::vector<SlicedAxis> sliced_axes(const Op& op, const Shape& in) {
  const std::vector<int64_t>& starts = op.attr_ints("starts");
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t k = 0; k < axes.size(); ++k) axes[k] = int64_t(k);
  axes = op.attr_ints_or("axes", axes);
  steps = op.attr_ints_or("steps", steps);
  std::vector<SlicedAxis> result;
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t a = size_t(axes[k] < 0 ? axes[k] + int64_t(in.size()) : axes[k]);
    const int64_t dim = in[a], step = steps[k];
    const int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    result.push_back({a,
                      dim == 0   ? 0
                      : step > 0 ? std::clamp<int64_t>(start, 0, dim)
                                 : std::clamp<int64_t>(start, 0, dim - 1),
                      step});
  }
  return result;
}

}  // namespace vkc::ir
