// QuantizeLinear / DequantizeLinear: per-tensor or per-axis scale and zero point.
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
  n.set_output(0, n.emit(K::Dequantize, operands, {{"axis", axis}}));
}

}  // namespace

void register_quant_importers(std::map<std::string, OpImporter>& r) {
  r["QuantizeLinear"] = import_quantize;
  r["DequantizeLinear"] = import_dequantize;
}

}  // namespace vkc::onnx
