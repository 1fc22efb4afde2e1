// Ops whose results are known at import time because every shape is static: Constant, Shape,
// Size, ConstantOfShape (Gather on constants folds too: onnx/op_importers_indexing.cpp). Exporters
// emit Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains for what is really a static
// reshape; with these producing constants, the rest of the chain folds in NodeContext::emit.
#include <cstring>

#include "onnx/import_context.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

void import_constant(NodeContext& n) {
  if (n.attrs.has("value")) return n.set_output(0, n.constant(n.attrs.get_tensor("value")));
  if (n.attrs.has("value_float"))
    return n.set_output(0, n.constant(make_f32({}, {float(n.attrs.get_float("value_float", 0))})));
  if (n.attrs.has("value_int"))
    return n.set_output(0, n.constant(make_i64({}, {n.attrs.get_int("value_int", 0)})));
  if (n.attrs.has("value_floats")) {
    std::vector<double> v = n.attrs.get_floats("value_floats");
    return n.set_output(0, n.constant(make_f32({int64_t(v.size())}, std::vector<float>(v.begin(), v.end()))));
  }
  if (n.attrs.has("value_ints")) {
    std::vector<int64_t> v = n.attrs.get_ints("value_ints");
    return n.set_output(0, n.constant(make_i64({int64_t(v.size())}, v)));
  }
  n.unsupported("only tensor, float(s) and int(s) values are supported");
}

// Shape with the opset-15 start/end window (clamped like Slice).
void import_shape(NodeContext& n) {
  const Shape& s = n.input(0)->type.shape;
  int64_t rank = int64_t(s.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
  int64_t start = clamp(n.attrs.get_int("start", 0)), end = clamp(n.attrs.get_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(s[size_t(i)]);
  n.set_output(0, n.constant(make_i64({int64_t(dims.size())}, dims)));
}

void import_size(NodeContext& n) {
  n.set_output(0, n.constant(make_i64({}, {n.input(0)->type.numel()})));
}

void import_constant_of_shape(NodeContext& n) {
  std::vector<int64_t> shape = n.constant_ints(0, "shape");
  HostTensor fill = n.attrs.has("value") ? n.attrs.get_tensor("value") : make_f32({1}, {0.0f});
  if (fill.numel() != 1) n.unsupported("value must hold one element");
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > kMaxTensorBytes / d)) n.unsupported("shape is too large");
    count *= d;
  }
  if (count > kMaxTensorBytes / int64_t(dtype_size(fill.dtype()))) n.unsupported("shape is too large");
  HostTensor out(fill.dtype(), shape);
  size_t e = dtype_size(fill.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(out.data() + size_t(i) * e, fill.data(), e);
  n.set_output(0, n.constant(std::move(out)));
}

}  // namespace

void register_folding_importers(std::map<std::string, OpImporter>& r) {
  r["Constant"] = import_constant;
  r["Shape"] = import_shape;
  r["Size"] = import_size;
  r["ConstantOfShape"] = import_constant_of_shape;
}

}  // namespace vkc::onnx
