// Data movement: Reshape, Flatten, Squeeze, Unsqueeze (all become IR reshape views with the ONNX
// 0 / -1 / axes rules resolved here), Identity, Dropout (inference), Transpose, Concat, Slice,
// Pad and Expand. Shape-like operands (shape, axes, starts, pads) must be constants, which the
// folding of Shape/Gather/Concat chains usually makes them.
#include <algorithm>

#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

// The axes of Squeeze/Unsqueeze/Reduce*: an attribute before `input_from_opset`, an optional
// constant input from then on.
std::vector<int64_t> axes_operand(NodeContext& n, int64_t input_from_opset, int input_index) {
  if (n.opset() < input_from_opset) return n.attrs.get_ints("axes");
  if (!n.has_input(input_index)) return {};
  return n.constant_ints(input_index, "axes");
}

void import_reshape(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::vector<int64_t> target =
      n.opset() < 5 ? n.attrs.get_ints("shape") : n.constant_ints(1, "shape");
  bool allow_zero = n.attrs.get_int("allowzero", 0) != 0;
  Shape out;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allow_zero) {
      if (int64_t(i) >= x->type.rank()) n.unsupported("shape 0 refers past the input's rank");
      d = x->type.shape[i];
    }
    if (d == -1) {
      if (infer_at >= 0) n.unsupported("shape has more than one -1");
      infer_at = int64_t(i);
    } else if (d < 0) {
      n.unsupported(cat("shape has the invalid dim ", d));
    } else {
      known *= d;
    }
    out.push_back(d);
  }
  if (infer_at >= 0) {
    if (known == 0 || x->type.numel() % known != 0)
      n.unsupported(cat("cannot infer -1 for ", x->type.str(), " to ", shape_str(target)));
    out[size_t(infer_at)] = x->type.numel() / known;
  }
  n.set_output(0, n.reshape(x, out));
}

void import_flatten(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t rank = x->type.rank();
  int64_t axis = n.attrs.get_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) n.unsupported(cat("axis is out of range for rank ", rank));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x->type.shape[size_t(i)];
  n.set_output(0, n.reshape(x, {outer, inner}));
}

void import_squeeze(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t rank = x->type.rank();
  std::vector<int64_t> axes = axes_operand(n, 13, 1);
  std::vector<bool> drop(size_t(rank), false);
  for (int64_t a : axes) {
    a = normalize_axis(a, rank, "axis");
    if (x->type.shape[size_t(a)] != 1) n.unsupported(cat("axis ", a, " has size ", x->type.shape[size_t(a)]));
    drop[size_t(a)] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    bool squeeze = axes.empty() ? x->type.shape[size_t(i)] == 1 : drop[size_t(i)];
    if (!squeeze) out.push_back(x->type.shape[size_t(i)]);
  }
  n.set_output(0, n.reshape(x, out));
}

void import_unsqueeze(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::vector<int64_t> axes = axes_operand(n, 13, 1);
  int64_t out_rank = x->type.rank() + int64_t(axes.size());
  std::vector<bool> inserted(size_t(out_rank), false);
  for (int64_t a : axes) {
    a = normalize_axis(a, out_rank, "axis");
    if (inserted[size_t(a)]) n.unsupported("axes has duplicates");
    inserted[size_t(a)] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[size_t(i)] ? 1 : x->type.shape[next++]);
  n.set_output(0, n.reshape(x, out));
}

// Identity and inference-mode Dropout are views of their input.
void import_identity(NodeContext& n) {
  n.attrs.ignore("ratio");
  n.attrs.ignore("seed");
  n.attrs.ignore("is_test");
  if (n.op_type_is("Dropout")) {
    if (n.output_used(1)) n.unsupported("the mask output is not supported");
    if (n.has_input(2)) {
      const HostTensor& training = n.constant_input(2, "training_mode");
      if (training.numel() != 1 || training.get_i64(0) != 0) n.unsupported("training_mode must be false");
    }
  }
  ir::Value* x = n.input(0);
  n.set_output(0, n.reshape(x, x->type.shape));
}

void import_transpose(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::vector<int64_t> perm;
  for (int64_t i = x->type.rank(); i-- > 0;) perm.push_back(i);
  perm = n.attrs.get_ints("perm", perm);
  n.set_output(0, n.emit(K::Transpose, {x}, {{"perm", perm}}));
}

void import_concat(NodeContext& n) {
  std::vector<ir::Value*> inputs;
  for (int i = 0; i < n.num_inputs(); ++i)
    if (n.has_input(i)) inputs.push_back(n.input(i));
  if (inputs.empty()) n.unsupported("no inputs");
  int64_t axis = normalize_axis(n.attrs.get_int("axis", 1), inputs[0]->type.rank(), "axis");
  // Empty operands (a zero-size concat axis) contribute nothing.
  std::vector<ir::Value*> kept;
  for (ir::Value* v : inputs)
    if (v->type.numel() != 0 || inputs.size() == 1) kept.push_back(v);
  if (kept.empty()) kept.push_back(inputs[0]);
  n.set_output(0, n.emit(K::Concat, kept, {{"axis", axis}}));
}

void import_slice(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    starts = n.attrs.get_ints("starts");
    ends = n.attrs.get_ints("ends");
    axes = n.attrs.get_ints("axes");
  } else {
    starts = n.constant_ints(1, "starts");
    ends = n.constant_ints(2, "ends");
    if (n.has_input(3)) axes = n.constant_ints(3, "axes");
    if (n.has_input(4)) steps = n.constant_ints(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    n.unsupported("starts, ends, axes and steps differ in length");
  for (int64_t& a : axes) a = normalize_axis(a, x->type.rank(), "axis");
  n.set_output(0, n.emit(K::Slice, {x}, {{"starts", starts}, {"ends", ends}, {"axes", axes},
                                         {"steps", steps}}));
}

void import_pad(NodeContext& n) {
  ir::Value* x = n.input(0);
  int64_t rank = x->type.rank();
  std::string mode = n.attrs.get_string("mode", "constant");
  if (mode != "constant") n.unsupported(cat("mode '", mode, "' is not supported (only constant)"));
  std::vector<int64_t> pads;
  double value = 0.0;
  if (n.opset() < 11) {
    pads = n.attrs.get_ints(n.opset() < 2 ? "paddings" : "pads");
    value = n.attrs.get_float("value", 0.0);
  } else {
    pads = n.constant_ints(1, "pads");
    if (n.has_input(2)) value = n.constant_floats(2, "constant_value").at(0);
    if (n.has_input(3)) {
      // opset 18 axes: pads lists begins then ends for just these axes.
      std::vector<int64_t> axes = n.constant_ints(3, "axes");
      if (pads.size() != 2 * axes.size()) n.unsupported("pads does not match axes");
      std::vector<int64_t> full(size_t(2 * rank), 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = normalize_axis(axes[i], rank, "axis");
        full[size_t(a)] = pads[i];
        full[size_t(a + rank)] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  if (int64_t(pads.size()) != 2 * rank) n.unsupported("pads has the wrong length");
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
    n.unsupported("negative pads (cropping) are not supported");
  n.set_output(0, n.emit(K::Pad, {x}, {{"pads", pads}, {"value", value}}));
}

// Expand broadcasts both ways (numpy): the result shape is broadcast(input shape, shape).
void import_expand(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::vector<int64_t> shape = n.constant_ints(1, "shape");
  size_t rank = std::max(shape.size(), size_t(x->type.rank()));
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - size_t(x->type.rank()) ? 1 : x->type.shape[i - (rank - size_t(x->type.rank()))];
    int64_t b = i < rank - shape.size() ? 1 : shape[i - (rank - shape.size())];
    if (a != b && a != 1 && b != 1) n.unsupported(cat("shape ", shape_str(shape), " does not broadcast"));
    out[i] = a == 1 ? b : a;
  }
  if (out == x->type.shape) return n.set_output(0, n.reshape(x, out));
  n.set_output(0, n.emit(K::Broadcast, {x}, {{"shape", out}}));
}

}  // namespace

void register_shape_importers(std::map<std::string, OpImporter>& r) {
  r["Reshape"] = import_reshape;
  r["Flatten"] = import_flatten;
  r["Squeeze"] = import_squeeze;
  r["Unsqueeze"] = import_unsqueeze;
  r["Identity"] = import_identity;
  r["Dropout"] = import_identity;
  r["Transpose"] = import_transpose;
  r["Concat"] = import_concat;
  r["Slice"] = import_slice;
  r["Pad"] = import_pad;
  r["Expand"] = import_expand;
}

std::vector<int64_t> reduce_axes_operand(NodeContext& n, int64_t input_from_opset) {
  return axes_operand(n, input_from_opset, 1);
}

}  // namespace vkc::onnx
