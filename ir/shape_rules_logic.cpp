// Shape rules of the comparison and logic ops (bool results), the float tests and prelu (issue 23;
// mod and fmod are plain binary ops). Binary ops broadcast like numpy (broadcast_operands), prelu
// only towards its input.
#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

bool numeric(DType t) { return t != DType::boolean; }
bool is_bool(DType t) { return t == DType::boolean; }

void require_same_dtype(const Op& op) {
  DType a = operand_type(op, 0).dtype, b = operand_type(op, 1).dtype;
  if (a != b)
    fail(op, op.operand_label(0), " has element type ", dtype_name(a), ", ", op.operand_label(1),
         " has ", dtype_name(b), "; they must match");
}

}  // namespace

// Any element type for equal (bool included), any numeric one for the orderings; both operands
// the same type. The result is bool.
std::vector<TensorType> infer_compare(const Op& op) {
  require_same_dtype(op);
  if (op.kind != OpKind::Equal) require_dtype(op, 0, numeric, "a numeric type");
  return {TensorType{DType::boolean, broadcast_operands(op, {0, 1})}};
}

std::vector<TensorType> infer_logic(const Op& op) {
  for (int i = 0; i < op.num_operands(); ++i) require_dtype(op, i, is_bool, "bool");
  if (op.num_operands() == 1) return {operand_type(op, 0)};
  return {TensorType{DType::boolean, broadcast_operands(op, {0, 1})}};
}

std::vector<TensorType> infer_float_test(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  return {TensorType{DType::boolean, operand_type(op, 0).shape}};
}

// sign takes every numeric type (ONNX Sign includes the unsigned ones).
std::vector<TensorType> infer_sign(const Op& op) {
  require_dtype(op, 0, numeric, "a numeric type");
  return {operand_type(op, 0)};
}

// The slope broadcasts to the input (ONNX "unidirectional"): the result has the input's shape.
std::vector<TensorType> infer_prelu(const Op& op) {
  require_same_dtype(op);
  require_dtype(op, 0, [](DType t) { return is_float(t) || (is_integer(t) && is_signed(t)); },
                "a float or signed integer type");
  const Shape& x = operand_type(op, 0).shape;
  const Shape& s = operand_type(op, 1).shape;
  if (s.size() > x.size())
    fail(op, "slope has rank ", s.size(), ", input has rank ", x.size(),
         "; the slope must broadcast to the input");
  for (size_t d = 0; d < s.size(); ++d) {
    size_t xd = x.size() - s.size() + d;
    if (s[d] != 1 && s[d] != x[xd])
      fail(op, "slope dim ", d, " is ", s[d], ", input dim ", xd, " is ", x[xd],
           "; the slope must broadcast to the input");
  }
  return {operand_type(op, 0)};
}

}  // namespace vkc::ir::rules
