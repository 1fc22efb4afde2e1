// Shape rules for the integer products conv_integer and matmul_integer (ONNX ConvInteger,
// MatMulInteger): i8 or u8 operands, each with its zero point of the same element type, an i32
// result. The lhs / input zero point is per tensor; the rhs / filter zero point per tensor or per
// output channel (matmul: per column of the rhs).
#include <optional>

#include "ir/conv_geometry.h"
#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

bool int8_type(DType t) { return t == DType::i8 || t == DType::u8; }

// Zero point `zp` of operand `of`: its element type, and one element or `channels` (rank 1).
void check_zero_point(const Op& op, int zp, int of, int64_t channels, const char* per) {
  const TensorType& z = operand_type(op, zp);
  if (z.dtype != operand_type(op, of).dtype)
    fail(op, op.operand_label(zp), " has element type ", dtype_name(z.dtype), ", ", op.operand_label(of),
         " has ", dtype_name(operand_type(op, of).dtype), "; they must match");
  bool scalar = z.rank() == 0 || (z.rank() == 1 && z.shape[0] == 1);
  bool per_channel = channels > 0 && z.rank() == 1 && z.shape[0] == channels;
  if (!scalar && !per_channel)
    fail(op, op.operand_label(zp), " has shape ", shape_str(z.shape),
         channels > 0 ? cat(", expected [] or [1] or [", channels, "] (", per, ")") : std::string(", expected [] or [1]"));
}

// The result type: i32, or with requantize_to the 8-bit type of the fused requantization, whose
// scales are one per tensor or one per output channel / column.
DType result_type(const Op& op, int64_t channels) {
  if (!op.has_attr("requantize_to")) {
    if (op.has_attr("requantize_scale")) fail(op, "attribute 'requantize_scale' needs 'requantize_to'");
    return DType::i32;
  }
  std::optional<DType> to = parse_dtype(op.attr_string("requantize_to"));
  if (!to || !int8_type(*to))
    fail(op, "attribute 'requantize_to' is '", op.attr_string("requantize_to"), "', expected i8 or u8");
  if (!op.has_attr("requantize_scale")) fail(op, "attribute 'requantize_to' needs 'requantize_scale'");
  size_t n = op.attr_floats("requantize_scale").size();
  if (n != 1 && int64_t(n) != channels)
    fail(op, "attribute 'requantize_scale' has ", n, " entries, expected 1 or ", channels);
  int64_t zp = op.attr_int("requantize_zero_point");
  if (zp < (*to == DType::i8 ? -128 : 0) || zp > (*to == DType::i8 ? 127 : 255))
    fail(op, "attribute 'requantize_zero_point' is ", zp, ", outside ", dtype_name(*to));
  return *to;
}

}  // namespace

std::vector<TensorType> infer_conv_integer(const Op& op) {
  ConvGeometry g = conv_geometry(op);
  require_dtype(op, 0, int8_type, "i8 or u8");
  require_dtype(op, 1, int8_type, "i8 or u8");
  check_zero_point(op, 2, 0, 0, "");
  check_zero_point(op, 3, 1, g.out_channels, "one per output channel");
  if (op.num_operands() == 5) {
    const TensorType& bias = operand_type(op, 4);
    if (bias.dtype != DType::i32)
      fail(op, "bias has element type ", dtype_name(bias.dtype), ", expected i32");
    if (bias.rank() != 1 || bias.shape[0] != g.out_channels)
      fail(op, "bias has shape ", shape_str(bias.shape), ", expected [", g.out_channels, "] (output channels)");
  }
  return {TensorType{result_type(op, g.out_channels), g.output_shape()}};
}

std::vector<TensorType> infer_matmul_integer(const Op& op) {
  require_dtype(op, 0, int8_type, "i8 or u8");
  require_dtype(op, 1, int8_type, "i8 or u8");
  for (int i = 0; i < 2; ++i)
    if (operand_type(op, i).rank() < 2)
      fail(op, op.operand_label(i), " has rank ", operand_type(op, i).rank(), ", expected rank >= 2");
  Shape shape = matmul_shape(op);
  check_zero_point(op, 2, 0, 0, "");
  check_zero_point(op, 3, 1, shape.back(), "one per column of rhs");
  return {TensorType{result_type(op, shape.back()), shape}};
}

}  // namespace vkc::ir::rules
