// Ops whose results are known at import time because every shape is static: Constant, Shape,
// Size, ConstantOfShape, and Gather on constants (or with constant indices, as slices). Exporters
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

// Gather along `axis` with constant indices. On constant data it is evaluated here; on computed
// data each index becomes a slice (concatenated), then the axis is reshaped to the indices' shape.
void import_gather(NodeContext& n) {
  ir::Value* data = n.input(0);
  const HostTensor& idx = n.constant_input(1, "indices");
  int64_t rank = data->type.rank();
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 0), rank, "axis");
  int64_t dim = data->type.shape[size_t(axis)];
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t v = idx.get_i64(i);
    if (v < -dim || v >= dim) n.unsupported(cat("index ", v, " is out of range for dim ", dim));
    indices.push_back(v < 0 ? v + dim : v);
  }
  Shape out_shape(data->type.shape.begin(), data->type.shape.begin() + axis);
  out_shape.insert(out_shape.end(), idx.shape().begin(), idx.shape().end());
  out_shape.insert(out_shape.end(), data->type.shape.begin() + axis + 1, data->type.shape.end());
  if (const HostTensor* d = constant_data(data)) {
    HostTensor out(d->dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= d->shape()[size_t(i)];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= d->shape()[size_t(i)];
    size_t e = dtype_size(d->dtype()), row = size_t(inner) * e;
    size_t count = indices.size();
    for (int64_t o = 0; o < outer; ++o)
      for (size_t j = 0; j < count; ++j)
        std::memcpy(out.data() + (size_t(o) * count + j) * row,
                    d->data() + (size_t(o) * size_t(dim) + size_t(indices[j])) * row, row);
    return n.set_output(0, n.constant(std::move(out)));
  }
  if (indices.empty()) n.unsupported("empty indices on computed data are not supported");
  std::vector<ir::Value*> pieces;
  for (int64_t i : indices)
    pieces.push_back(n.emit(K::Slice, {data}, {{"starts", std::vector<int64_t>{i}},
                                               {"ends", std::vector<int64_t>{i + 1}},
                                               {"axes", std::vector<int64_t>{axis}}}));
  ir::Value* joined = pieces.size() == 1 ? pieces[0] : n.emit(K::Concat, pieces, {{"axis", axis}});
  n.set_output(0, n.reshape(joined, out_shape));
}

}  // namespace

void register_folding_importers(std::map<std::string, OpImporter>& r) {
  r["Constant"] = import_constant;
  r["Shape"] = import_shape;
  r["Size"] = import_size;
  r["ConstantOfShape"] = import_constant_of_shape;
  r["Gather"] = import_gather;
}

}  // namespace vkc::onnx
