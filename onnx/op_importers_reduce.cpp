// Reductions, ArgMax/ArgMin, Softmax/LogSoftmax and TopK.
#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

// axes_input_opset: the opset where `axes` moved from an attribute to an input (13 for
// ReduceSum, 18 for the others).
OpImporter reduce(K kind, int64_t axes_input_opset) {
  return [kind, axes_input_opset](NodeContext& n) {
    ir::Value* x = n.input(0);
    std::vector<int64_t> axes = reduce_axes_operand(n, axes_input_opset);
    bool keepdims = n.attrs.get_int("keepdims", 1) != 0;
    bool noop_when_empty = n.attrs.get_int("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && noop_when_empty) return n.set_output(0, n.reshape(x, x->type.shape));
    for (int64_t& a : axes) a = normalize_axis(a, x->type.rank(), "axis");
    ir::AttrMap attrs{{"keepdims", keepdims}};
    if (!axes.empty()) attrs["axes"] = axes;
    n.set_output(0, n.emit(kind, {x}, attrs));
  };
}

OpImporter arg_reduce(K kind) {
  return [kind](NodeContext& n) {
    ir::Value* x = n.input(0);
    ir::AttrMap attrs{
        {"axis", normalize_axis(n.attrs.get_int("axis", 0), x->type.rank(), "axis")},
        {"keepdims", n.attrs.get_int("keepdims", 1) != 0},
        {"select_last_index", n.attrs.get_int("select_last_index", 0) != 0}};
    n.set_output(0, n.emit(kind, {x}, attrs));
  };
}

// Opset >= 13: one axis (default -1). Before: the input is coerced to 2-D [prod(d[:axis]),
// prod(d[axis:])] (default axis 1) and normalized per row, which is what reshape + softmax over
// the last dim + reshape back computes.
OpImporter softmax(K kind) {
  return [kind](NodeContext& n) {
    ir::Value* x = n.input(0);
    int64_t rank = x->type.rank();
    if (n.opset() >= 13) {
      int64_t axis = normalize_axis(n.attrs.get_int("axis", -1), rank, "axis");
      return n.set_output(0, n.emit(kind, {x}, {{"axis", axis}}));
    }
    int64_t axis = n.attrs.get_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) n.unsupported(cat("axis is out of range for rank ", rank));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x->type.shape[size_t(i)];
    if (axis == rank - 1) return n.set_output(0, n.emit(kind, {x}, {{"axis", axis}}));
    ir::Value* flat = n.reshape(x, {outer, inner});
    ir::Value* y = n.emit(kind, {flat}, {{"axis", int64_t(1)}});
    n.set_output(0, n.reshape(y, x->type.shape));
  };
}

void import_topk(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t k = 0;
  if (n.opset() < 10) {
    k = n.attrs.get_int("k", 0);
  } else {
    std::vector<int64_t> kv = n.constant_ints(1, "K");
    if (kv.size() != 1) n.unsupported("K must hold one value");
    k = kv[0];
  }
  ir::AttrMap attrs{{"k", k},
                    {"axis", normalize_axis(n.attrs.get_int("axis", -1), x->type.rank(), "axis")},
                    {"largest", n.attrs.get_int("largest", 1) != 0},
                    {"sorted", n.attrs.get_int("sorted", 1) != 0}};
  std::vector<ir::Value*> r = n.emit_multi(K::TopK, {x}, attrs);
  n.set_output(0, r.at(0));
  n.set_output(1, r.at(1));
}

}  // namespace

void register_reduce_importers(std::map<std::string, OpImporter>& r) {
  r["ReduceSum"] = reduce(K::ReduceSum, 13);
  r["ReduceMean"] = reduce(K::ReduceMean, 18);
  r["ReduceMax"] = reduce(K::ReduceMax, 18);
  r["ReduceMin"] = reduce(K::ReduceMin, 18);
  r["ReduceProd"] = reduce(K::ReduceProd, 18);
  r["ReduceL1"] = reduce(K::ReduceL1, 18);
  r["ReduceL2"] = reduce(K::ReduceL2, 18);
  r["ReduceLogSumExp"] = reduce(K::ReduceLogSumExp, 18);
  r["ArgMax"] = arg_reduce(K::ArgMax);
  r["ArgMin"] = arg_reduce(K::ArgMin);
  r["Softmax"] = softmax(K::Softmax);
  r["LogSoftmax"] = softmax(K::LogSoftmax);
  r["TopK"] = import_topk;
}

}  // namespace vkc::onnx
