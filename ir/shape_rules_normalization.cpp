// Shape rules of the normalizations and reductions group (issue 23): layer_norm, group_norm,
// cumsum, and the float-only reductions reduce_l2 and reduce_log_sum_exp (reduce_prod and
// reduce_l1 take every numeric type, like reduce_sum).
#include <cmath>

#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

bool numeric(DType t) { return t != DType::boolean; }

void require_epsilon(const Op& op) {
  double eps = op.attr_float("epsilon");
  if (!(eps >= 0) || !std::isfinite(eps)) fail(op, "attribute 'epsilon' is ", eps, ", expected a finite value >= 0");
}

// Operand i (scale or bias) must have exactly `expected` as its shape and the input's dtype.
void require_param(const Op& op, int i, const Shape& expected, const char* what) {
  const TensorType& t = operand_type(op, i);
  const TensorType& x = operand_type(op, 0);
  if (t.dtype != x.dtype)
    fail(op, "operand ", i, " (", what, ") is ", type_str(t), ", expected the input's element type ", dtype_name(x.dtype));
  if (t.shape != expected)
    fail(op, "operand ", i, " (", what, ") is ", type_str(t), ", expected shape ", TensorType{x.dtype, expected}.str());
}

}  // namespace

std::vector<TensorType> infer_reduce_float(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  return infer_reduce(op);
}

// x [d0..dn-1] normalized over dims [axis, n); scale and bias have exactly those dims.
std::vector<TensorType> infer_layer_norm(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  const TensorType& x = operand_type(op, 0);
  if (x.rank() < 1) fail(op, "input is ", type_str(x), ", expected rank >= 1");
  int64_t axis = normalize_axis(op, op.attr_int("axis"), x.rank(), "axis");
  require_epsilon(op);
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  if (op.num_operands() > 1) require_param(op, 1, normalized, "scale");
  if (op.num_operands() > 2) require_param(op, 2, normalized, "bias");
  return {x};
}

// x [N, C, spatial...]; each of num_groups groups of C / num_groups channels is normalized over
// its channels and the spatial dims; scale and bias are per channel [C].
std::vector<TensorType> infer_group_norm(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  const TensorType& x = operand_type(op, 0);
  if (x.rank() < 2) fail(op, "input is ", type_str(x), ", expected rank >= 2 ([N, C, ...])");
  int64_t groups = op.attr_int("num_groups"), channels = x.shape[1];
  if (groups < 1) fail(op, "attribute 'num_groups' is ", groups, ", expected >= 1");
  if (channels % groups != 0)
    fail(op, "input dim 1 (channels) is ", channels, ", not a multiple of attribute 'num_groups' ", groups);
  require_epsilon(op);
  require_param(op, 1, {channels}, "scale");
  require_param(op, 2, {channels}, "bias");
  return {x};
}

std::vector<TensorType> infer_cumsum(const Op& op) {
  require_dtype(op, 0, numeric, "a numeric type");
  const TensorType& x = operand_type(op, 0);
  if (x.rank() < 1) fail(op, "input is ", type_str(x), ", expected rank >= 1");
  normalize_axis(op, op.attr_int("axis"), x.rank(), "axis");
  return {x};
}

}  // namespace vkc::ir::rules
