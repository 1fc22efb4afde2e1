// QuantizeLinear / DequantizeLinear: per-tensor or per-axis scale and zero point; QLinearConv and
// QLinearMatMul as the integer product and ORT's requantization (docs/int8.md).
#include "onnx/import_context.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

// The IR wants the zero point shaped like the scale.
ir::Value* zero_point_like_scale(NodeContext& n, ir::Value* zp, ir::Value* scale) {
  if (zp->type.shape == scale->type.shape) return zp;
  if (zp->type.numel() != scale->type.numel()) n.unsupported("zero point and scale differ in size");
  return n.reshape(zp, scale->type.shape);
}

// ONNX ignores `axis` for a per-tensor scale (its default 1 may not even exist in the input).
int64_t quant_axis(NodeContext& n, const ir::Value* x, const ir::Value* scale) {
  int64_t axis = n.attrs.get_int("axis", 1);
  if (scale->type.numel() == 1 && scale->type.rank() <= 1) return 0;
  return normalize_axis(axis, x->type.rank(), "axis");
}

void check_block_size(NodeContext& n) {
  if (n.attrs.get_int("block_size", 0) != 0) n.unsupported("blocked quantization is not supported");
}

void import_quantize(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* scale = n.input(1);
  check_block_size(n);
  if (n.attrs.get_int("saturate", 1) != 1) n.unsupported("saturate 0 is not supported");
  int64_t axis = quant_axis(n, x, scale);
  std::vector<ir::Value*> operands{x, scale};
  // Without a zero point ONNX produces uint8.
  ir::AttrMap attrs{{"axis", axis}, {"to", std::string("u8")}};
  if (int64_t od = n.attrs.get_int("output_dtype", 0); od != 0) {
    std::optional<DType> d = dtype_from_onnx(int32_t(od));
    if (!d || (*d != DType::u8 && *d != DType::i8)) n.unsupported("output_dtype must be int8 or uint8");
    attrs["to"] = std::string(dtype_name(*d));
  }
  if (n.has_input(2)) {
    ir::Value* zp = zero_point_like_scale(n, n.input(2), scale);
    attrs["to"] = std::string(dtype_name(zp->type.dtype));
    operands.push_back(zp);
  }
  n.set_output(0, n.emit(K::Quantize, operands, attrs));
}

void import_dequantize(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* scale = n.input(1);
  check_block_size(n);
  int64_t axis = quant_axis(n, x, scale);
  std::vector<ir::Value*> operands{x, scale};
  if (n.has_input(2)) operands.push_back(zero_point_like_scale(n, n.input(2), scale));
  // A constant weight's (or bias's) dequantize stays an op: the QDQ pass (ir/passes/qdq_integer.cpp)
  // needs its integer data for an integer conv or matmul; constant folding folds it otherwise.
  n.set_output(0, n.emit_unfolded(K::Dequantize, operands, {{"axis", axis}}));
}

// ORT's requantization of an i32 sum (docs/int8.md): dequantize(acc, M) then quantize(., 1, y_zp),
// M = f32(f32(x_scale * w_scale) / y_scale) (folded on the host when the scales are constants).
ir::Value* requantize(NodeContext& n, ir::Value* acc, ir::Value* m, ir::Value* y_zp, int64_t axis) {
  if (m->type.rank() > 1) n.unsupported("scales must be per tensor or 1-D per channel");
  ir::Value* dq = n.emit(K::Dequantize, {acc, m}, {{"axis", axis}});
  ir::Value* scale_one = n.constant([&] {
    HostTensor one(DType::f32, y_zp->type.shape);
    for (int64_t i = 0; i < one.numel(); ++i) one.set_f64(i, 1.0);
    return one;
  }());
  return n.emit(K::Quantize, {dq, scale_one, y_zp},
                {{"axis", axis}, {"to", std::string(dtype_name(y_zp->type.dtype))}});
}

ir::Value* requant_scale(NodeContext& n, ir::Value* a_scale, ir::Value* b_scale, ir::Value* y_scale) {
  ir::Value* ab = n.emit(K::Mul, {a_scale, b_scale});
  if (ab->type.rank() == 1 && ab->type.shape[0] == 1) ab = n.reshape(ab, Shape{});
  return n.emit(K::Div, {ab, y_scale->type.numel() == 1 ? n.reshape(y_scale, Shape{}) : y_scale});
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B]): conv_integer + requantize.
void import_qlinear_conv(NodeContext& n) {
  ir::Value* x = n.input(0);
  ir::Value* w = n.input(3);
  std::vector<ir::Value*> operands{x, w, n.input(2), n.input(5)};
  if (n.has_input(8)) operands.push_back(n.input(8));
  ir::AttrMap attrs = conv_attrs(n, x, w);
  ir::Value* acc = n.emit(K::ConvInteger, operands, attrs);
  ir::Value* m = requant_scale(n, n.input(1), n.input(4), n.input(6));
  n.set_output(0, requantize(n, acc, m, n.input(7), 1));
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): matmul_integer + requantize.
void import_qlinear_matmul(NodeContext& n) {
  ir::Value* a = n.input(0);
  ir::Value* b = n.input(3);
  if (a->type.rank() < 2 || b->type.rank() < 2) n.unsupported("1-D operands are not supported");
  ir::Value* acc = n.emit(K::MatMulInteger, {a, b, n.input(2), n.input(5)});
  ir::Value* m = requant_scale(n, n.input(1), n.input(4), n.input(6));
  n.set_output(0, requantize(n, acc, m, n.input(7), acc->type.rank() - 1));
}

}  // namespace

ir::Value* integer_zero_point(NodeContext& n, DType t) {
  if (t != DType::i8 && t != DType::u8) n.unsupported(cat("operand type ", dtype_name(t), " is not int8 or uint8"));
  return n.constant(HostTensor(t, Shape{}));  // zero-filled
}

void register_quant_importers(std::map<std::string, OpImporter>& r) {
  r["QuantizeLinear"] = import_quantize;
  r["DequantizeLinear"] = import_dequantize;
  r["QLinearConv"] = import_qlinear_conv;
  r["QLinearMatMul"] = import_qlinear_matmul;
}

}  // namespace vkc::onnx
