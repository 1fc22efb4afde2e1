// Shape rules for constants and elementwise ops (unary, cast, binary, select, quantize,
// dequantize), plus the helpers every rule shares (axis normalization, numpy broadcasting).
#include <algorithm>

#include "ir/op_rules.h"
#include "ir/shape_rules.h"

namespace vkc::ir::rules {

int64_t normalize_axis(const Op& op, int64_t axis, int64_t rank, const std::string& what) {
  if (rank == 0) fail(op, what, " is ", axis, ", but the input has rank 0 (no axes)");
  if (axis < -rank || axis >= rank)
    fail(op, what, " is ", axis, ", expected in [", -rank, ", ", rank - 1, "] for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

Shape broadcast_operands(const Op& op, const std::vector<int>& operand_indices) {
  int64_t rank = 0;
  for (int i : operand_indices) rank = std::max(rank, operand_type(op, i).rank());
  Shape out(size_t(rank), 1);
  // For each output dim, the operand that fixed its size (-1: none yet / all 1 so far).
  std::vector<int> decided_by(size_t(rank), -1);
  for (int i : operand_indices) {
    const Shape& s = operand_type(op, i).shape;
    int64_t offset = rank - int64_t(s.size());
    for (size_t d = 0; d < s.size(); ++d) {
      size_t o = size_t(offset) + d;
      if (s[d] == 1) continue;
      if (decided_by[o] < 0 || out[o] == 1) {
        out[o] = s[d];
        decided_by[o] = i;
      } else if (out[o] != s[d]) {
        int j = decided_by[o];
        int64_t dj = int64_t(o) - (rank - operand_type(op, j).rank());
        fail(op, op.operand_label(j), " dim ", dj, " is ", out[o], ", ", op.operand_label(i),
             " dim ", d, " is ", s[d], "; they do not broadcast");
      }
    }
  }
  return out;
}

void require_dtype(const Op& op, int i, bool (*pred)(DType), const char* expected) {
  DType t = operand_type(op, i).dtype;
  if (!pred(t)) fail(op, op.operand_label(i), " has element type ", dtype_name(t), ", expected ", expected);
}

namespace {

bool float_or_signed_int(DType t) { return is_float(t) || (is_integer(t) && is_signed(t)); }
bool quantized_int(DType t) { return t == DType::i8 || t == DType::u8; }
bool dequantizable(DType t) { return t == DType::i8 || t == DType::u8 || t == DType::i32; }

std::string dtype_list() {
  std::string s;
  for (DType t : kAllDTypes) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
  return s;
}

// Scale (and zero point) of quantize/dequantize: per tensor (rank 0 or [1]) or per channel (rank 1
// with x.shape[axis] entries).
void check_quant_params(const Op& op) {
  const TensorType& x = operand_type(op, 0);
  const TensorType& scale = operand_type(op, 1);
  bool per_tensor = scale.rank() == 0 || (scale.rank() == 1 && scale.shape[0] == 1);
  if (!per_tensor) {
    if (scale.rank() != 1)
      fail(op, "scale has shape ", shape_str(scale.shape), ", expected rank 0 or rank 1");
    int64_t axis = normalize_axis(op, op.attr_int("axis"), x.rank(), "axis");
    if (scale.shape[0] != x.shape[size_t(axis)])
      fail(op, "scale dim 0 is ", scale.shape[0], ", input dim ", axis, " (axis) is ",
           x.shape[size_t(axis)]);
  }
  if (op.num_operands() == 3) {
    const TensorType& zp = operand_type(op, 2);
    if (zp.shape != scale.shape)
      fail(op, "zero_point has shape ", shape_str(zp.shape), ", scale has shape ",
           shape_str(scale.shape));
  }
}

}  // namespace

std::vector<TensorType> infer_constant(const Op& op) {
  const TensorPtr& t = op.attr_tensor("value");
  return {TensorType{t->dtype(), t->shape()}};
}

std::vector<TensorType> infer_unary(const Op& op) {
  if (op_rules(op.kind).math.signed_ints)
    require_dtype(op, 0, float_or_signed_int, "a float or signed integer type");
  else  // the transcendental ones
    require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  if (op.kind == OpKind::Gelu) {
    const std::string& a = op.attr_string("approximate");
    if (a != "none" && a != "tanh")
      fail(op, "attribute 'approximate' is '", a, "', expected 'none' or 'tanh'");
  }
  return {operand_type(op, 0)};
}

std::vector<TensorType> infer_cast(const Op& op) {
  const std::string& to = op.attr_string("to");
  std::optional<DType> t = parse_dtype(to);
  if (!t) fail(op, "attribute 'to' is '", to, "', expected one of ", dtype_list());
  return {TensorType{*t, operand_type(op, 0).shape}};
}

std::vector<TensorType> infer_binary(const Op& op) {
  DType a = operand_type(op, 0).dtype, b = operand_type(op, 1).dtype;
  if (a != b)
    fail(op, op.operand_label(0), " has element type ", dtype_name(a), ", ", op.operand_label(1),
         " has ", dtype_name(b), "; they must match");
  if (a == DType::boolean)
    fail(op, op.operand_label(0), " has element type bool, expected a numeric type");
  return {TensorType{a, broadcast_operands(op, {0, 1})}};
}

std::vector<TensorType> infer_select(const Op& op) {
  if (operand_type(op, 0).dtype != DType::boolean)
    fail(op, "condition has element type ", dtype_name(operand_type(op, 0).dtype), ", expected bool");
  DType a = operand_type(op, 1).dtype, b = operand_type(op, 2).dtype;
  if (a != b)
    fail(op, "true_value has element type ", dtype_name(a), ", false_value has ", dtype_name(b),
         "; they must match");
  return {TensorType{a, broadcast_operands(op, {0, 1, 2})}};
}

std::vector<TensorType> infer_quantize(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  require_dtype(op, 1, is_float, "a float type (f32 or f16)");
  check_quant_params(op);
  const std::string& to = op.attr_string("to");
  std::optional<DType> target = parse_dtype(to);
  if (!target || !quantized_int(*target))
    fail(op, "attribute 'to' is '", to, "', expected 'i8' or 'u8'");
  if (op.num_operands() == 3) {
    require_dtype(op, 2, quantized_int, "i8 or u8");
    DType zp = operand_type(op, 2).dtype;
    // The zero point decides the result type (ONNX); an explicit, different `to` is a conflict.
    if (op.has_attr("to") && zp != *target)
      fail(op, "zero_point has element type ", dtype_name(zp), ", attribute 'to' is '", to, "'");
    target = zp;
  }
  return {TensorType{*target, operand_type(op, 0).shape}};
}

std::vector<TensorType> infer_dequantize(const Op& op) {
  require_dtype(op, 0, dequantizable, "i8, u8 or i32");
  require_dtype(op, 1, is_float, "a float type (f32 or f16)");
  check_quant_params(op);
  if (op.num_operands() == 3 && operand_type(op, 2).dtype != operand_type(op, 0).dtype)
    fail(op, "zero_point has element type ", dtype_name(operand_type(op, 2).dtype),
         ", input has ", dtype_name(operand_type(op, 0).dtype), "; they must match");
  return {TensorType{DType::f32, operand_type(op, 0).shape}};
}

}  // namespace vkc::ir::rules
