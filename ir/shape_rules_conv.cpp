// Shape rules for conv, conv_transpose, im2col and pooling; the arithmetic is in conv_geometry.
#include "ir/conv_geometry.h"
#include "ir/shape_rules.h"

namespace vkc::ir::rules {

std::vector<TensorType> infer_conv(const Op& op) {
  ConvGeometry g = conv_geometry(op);
  const TensorType& in = operand_type(op, 0);
  if (op.kind == OpKind::Im2Col) {
    int64_t p = 1;
    for (int64_t o : g.out_spatial) p *= o;
    int64_t k = im2col_columns(g).k;
    Shape shape = g.groups == 1 ? Shape{g.batch, p, k} : Shape{g.batch, g.groups, p, k};
    return {TensorType{in.dtype, shape}};
  }
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  for (int i = 1; i < op.num_operands(); ++i)
    if (operand_type(op, i).dtype != in.dtype)
      fail(op, op.operand_label(i), " has element type ", dtype_name(operand_type(op, i).dtype),
           ", input has ", dtype_name(in.dtype), "; they must match");
  if (op.num_operands() == 3) {
    const TensorType& bias = operand_type(op, 2);
    if (bias.rank() != 1 || bias.shape[0] != g.out_channels)
      fail(op, "bias has shape ", shape_str(bias.shape), ", expected [", g.out_channels,
           "] (output channels)");
  }
  return {TensorType{in.dtype, g.output_shape()}};
}

std::vector<TensorType> infer_pool(const Op& op) {
  if (op.kind == OpKind::AvgPool) {
    require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  } else {
    require_dtype(op, 0, [](DType t) { return t != DType::boolean; }, "a numeric type");
  }
  ConvGeometry g = pool_geometry(op);
  TensorType values{operand_type(op, 0).dtype, g.output_shape()};
  if (op.kind != OpKind::MaxPoolWithIndices) return {values};
  int64_t order = op.attr_int("storage_order");
  if (order != 0 && order != 1)
    fail(op, "attribute 'storage_order' is ", order, ", expected 0 (row major) or 1 (column major)");
  // Indices are flat offsets into the whole input, i64 as in ONNX.
  return {values, TensorType{DType::i64, g.output_shape()}};
}

}  // namespace vkc::ir::rules
