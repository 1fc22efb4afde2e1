// The normalizations and reductions group of issue 23: LayerNormalization (opset 17),
// InstanceNormalization, GroupNormalization (opset 18: scale and bias per group; 21: per channel)
// and CumSum. (ReduceProd, ReduceL1, ReduceL2 and ReduceLogSumExp import with the other reductions,
// onnx/op_importers_reduce.cpp.)
//
// The normalizations compute in f32 whatever stash_type asks (1, f32, is what exporters write);
// LayerNormalization's optional Mean and InvStdDev outputs, when a model reads them, are computed
// by reduce_mean, sub, mul, add, sqrt and div beside the layer_norm kernel (training-time outputs:
// the inference path pays nothing when they are unused).
#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

void require_f32_stash(NodeContext& n) {
  int64_t stash = n.attrs.get_int("stash_type", 1);
  if (stash != 1) n.unsupported(cat("attribute 'stash_type' is ", stash, ", only 1 (float32) is supported"));
}

ir::Value* scalar(NodeContext& n, DType t, double v) {
  HostTensor c(t, {});
  c.set_f64(0, v);
  return n.constant(std::move(c));
}

// A scale or bias broadcast (numpy, unidirectional) to exactly the normalized dims.
ir::Value* to_shape(NodeContext& n, ir::Value* v, const Shape& shape, const char* what) {
  if (v->type.shape == shape) return v;
  if (v->type.rank() > int64_t(shape.size()))
    n.unsupported(cat(what, " has rank ", v->type.rank(), ", more than the ", shape.size(), " normalized dims"));
  for (size_t i = 0; i < size_t(v->type.rank()); ++i) {
    int64_t d = v->type.shape[v->type.shape.size() - 1 - i], want = shape[shape.size() - 1 - i];
    if (d != want && d != 1)
      n.unsupported(cat(what, " dim ", v->type.rank() - 1 - int64_t(i), " is ", d, ", does not broadcast to ", want));
  }
  return n.emit(K::Broadcast, {v}, {{"shape", shape}});
}

void import_layer_norm(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t rank = x->type.rank();
  int64_t axis = normalize_axis(n.attrs.get_int("axis", -1), rank, "axis");
  double eps = n.attrs.get_float("epsilon", 1e-5);
  require_f32_stash(n);
  Shape normalized(x->type.shape.begin() + axis, x->type.shape.end());
  if (n.has_input(2) && !n.has_input(1)) n.unsupported("B (input 2) is given without Scale (input 1)");
  std::vector<ir::Value*> operands{x};
  if (n.has_input(1)) operands.push_back(to_shape(n, n.input(1), normalized, "Scale (input 1)"));
  if (n.has_input(2)) operands.push_back(to_shape(n, n.input(2), normalized, "B (input 2)"));
  n.set_output(0, n.emit(K::LayerNorm, operands, {{"axis", axis}, {"epsilon", eps}}));
  if (!n.output_used(1) && !n.output_used(2)) return;
  // Mean and InvStdDev in f32 (stash_type), with the normalized dims kept as 1.
  ir::Value* xf = x->type.dtype == DType::f32 ? x : n.emit(K::Cast, {x}, {{"to", std::string("f32")}});
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  ir::AttrMap reduce_attrs{{"axes", axes}, {"keepdims", true}};
  ir::Value* mean = n.emit(K::ReduceMean, {xf}, reduce_attrs);
  if (n.output_used(1)) n.set_output(1, mean);
  if (!n.output_used(2)) return;
  ir::Value* d = n.emit(K::Sub, {xf, mean});
  ir::Value* var = n.emit(K::ReduceMean, {n.emit(K::Mul, {d, d})}, reduce_attrs);
  ir::Value* sd = n.emit(K::Sqrt, {n.emit(K::Add, {var, scalar(n, DType::f32, eps)})});
  n.set_output(2, n.emit(K::Div, {scalar(n, DType::f32, 1.0), sd}));
}

// Scale and bias per channel [C] (or broadcastable to it: a constant [C, 1, 1] is reshaped).
ir::Value* per_channel(NodeContext& n, int i, int64_t channels, const char* what) {
  ir::Value* v = n.input(i);
  if (v->type.numel() != channels)
    n.unsupported(cat(what, " has ", v->type.numel(), " elements, expected one per channel (", channels, ")"));
  return v->type.shape == Shape{channels} ? v : n.reshape(v, {channels});
}

void import_instance_norm(NodeContext& n) {
  ir::Value* x = n.input(0);
  if (x->type.rank() < 2) n.unsupported(cat("input rank is ", x->type.rank(), ", expected at least 2 ([N, C, ...])"));
  int64_t channels = x->type.shape[1];
  ir::Value* scale = per_channel(n, 1, channels, "scale (input 1)");
  ir::Value* bias = per_channel(n, 2, channels, "B (input 2)");
  n.set_output(0, n.emit(K::GroupNorm, {x, scale, bias},
                         {{"num_groups", channels}, {"epsilon", n.attrs.get_float("epsilon", 1e-5)}}));
}

// Opset 18 gives scale and bias per group [G]; they are repeated C / G times to one per channel
// (reshape [G, 1], broadcast [G, C/G], reshape [C]). Opset 21 gives them per channel.
void import_group_norm(NodeContext& n) {
  ir::Value* x = n.input(0);
  if (x->type.rank() < 2) n.unsupported(cat("input rank is ", x->type.rank(), ", expected at least 2 ([N, C, ...])"));
  int64_t channels = x->type.shape[1];
  int64_t groups = n.attrs.get_int("num_groups", 0);
  if (groups < 1 || channels % groups != 0)
    n.unsupported(cat("attribute 'num_groups' is ", groups, ", expected >= 1 and dividing the ", channels, " channels"));
  double eps = n.attrs.get_float("epsilon", 1e-5);
  require_f32_stash(n);
  std::vector<ir::Value*> params;
  for (int i : {1, 2}) {
    const char* what = i == 1 ? "scale (input 1)" : "bias (input 2)";
    if (n.opset() >= 21) {
      params.push_back(per_channel(n, i, channels, what));
      continue;
    }
    ir::Value* v = n.input(i);
    if (v->type.numel() != groups)
      n.unsupported(cat(what, " has ", v->type.numel(), " elements, expected one per group (", groups, ") at opset ",
                        n.opset()));
    ir::Value* wide = n.emit(K::Broadcast, {n.reshape(v, {groups, 1})}, {{"shape", Shape{groups, channels / groups}}});
    params.push_back(n.reshape(wide, {channels}));
  }
  n.set_output(0, n.emit(K::GroupNorm, {x, params[0], params[1]}, {{"num_groups", groups}, {"epsilon", eps}}));
}

void import_cumsum(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::vector<int64_t> axis = n.constant_ints(1, "axis (input 1)");
  if (axis.size() != 1) n.unsupported(cat("axis (input 1) has ", axis.size(), " values, expected one"));
  n.set_output(0, n.emit(K::CumSum, {x},
                         {{"axis", normalize_axis(axis[0], x->type.rank(), "axis")},
                          {"exclusive", n.attrs.get_int("exclusive", 0) != 0},
                          {"reverse", n.attrs.get_int("reverse", 0) != 0}}));
}

}  // namespace

void register_norm_reduce_importers(std::map<std::string, OpImporter>& r) {
  r["LayerNormalization"] = import_layer_norm;
  r["InstanceNormalization"] = import_instance_norm;
  r["GroupNormalization"] = import_group_norm;
  r["CumSum"] = import_cumsum;
}

}  // namespace vkc::onnx
