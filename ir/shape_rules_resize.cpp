// Shape rule for resize; the attribute checks and the arithmetic are in resize_geometry.
#include "ir/resize_geometry.h"
#include "ir/shape_rules.h"

namespace vkc::ir::rules {

std::vector<TensorType> infer_resize(const Op& op) {
  ResizeGeometry g = resize_geometry(op);
  // Nearest resizing copies elements, so any dtype works; interpolation needs float arithmetic.
  if (g.interpolation != ResizeInterpolation::Nearest)
    require_dtype(op, 0, is_float, "a float type (f32 or f16) for linear and cubic modes");
  return {TensorType{operand_type(op, 0).dtype, g.output_shape()}};
}

}  // namespace vkc::ir::rules
