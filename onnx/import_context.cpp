#include "onnx/import_context.h"

#include <algorithm>

#include "ir/interpreter.h"
#include "onnx/tensor_proto.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::onnx {

ir::Value* ImportContext::value(const std::string& name) {
  auto it = values.find(name);
  if (it != values.end()) return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end()) return nullptr;
  HostTensor data = tensor_from_proto(*init->second, model_dir,
                                      cat(model_path, ": initializer '", name, "'"));
  ir::Value* v = graph.add_constant(std::move(data));
  values[name] = v;
  return v;
}

const HostTensor* constant_data(const ir::Value* v) {
  if (!v || !v->producer || v->producer->kind != ir::OpKind::Constant) return nullptr;
  return v->producer->attr_tensor("value").get();
}

NodeContext::NodeContext(ImportContext& c, const ::onnx::NodeProto& n)
    : ctx(c), node(n), attrs(n, c.model_dir) {}

std::string NodeContext::label() const {
  return node.name().empty() ? cat("node (", node.op_type(), ")")
                             : cat("node '", node.name(), "' (", node.op_type(), ")");
}

bool NodeContext::has_input(int i) const { return i < node.input_size() && !node.input(i).empty(); }

ir::Value* NodeContext::input(int i) {
  if (!has_input(i)) unsupported(cat("input ", i, " is missing"));
  ir::Value* v = ctx.value(node.input(i));
  if (!v) throw Error(cat(ctx.model_path, ": ", label(), " uses '", node.input(i),
                          "', which no earlier node, input or initializer defines"));
  return v;
}

const HostTensor& NodeContext::constant_input(int i, const std::string& what) {
  ir::Value* v = input(i);
  const HostTensor* t = constant_data(v);
  if (t) return *t;
  const auto& inputs = ctx.graph.inputs();
  if (std::find(inputs.begin(), inputs.end(), v) != inputs.end()) {
    ctx.values_needed.insert(node.input(i));
    ++ctx.value_requests;
    unsupported(cat(what, " (input ", i, ") must be known when compiling; it is graph input '", node.input(i),
                    "': give its value (vkc::ModelSession and vk-run specialize on it at first use)"));
  }
  unsupported(cat(what, " (input ", i, ") must be a constant"));
}

std::vector<int64_t> NodeContext::constant_ints(int i, const std::string& what) {
  const HostTensor& t = constant_input(i, what);
  if (!is_integer(t.dtype())) unsupported(cat(what, " must be integers"));
  std::vector<int64_t> v(size_t(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) v[size_t(k)] = t.get_i64(k);
  return v;
}

std::vector<double> NodeContext::constant_floats(int i, const std::string& what) {
  const HostTensor& t = constant_input(i, what);
  std::vector<double> v(size_t(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) v[size_t(k)] = t.get_f64(k);
  return v;
}

std::vector<ir::Value*> NodeContext::emit_multi(ir::OpKind kind, std::vector<ir::Value*> operands,
                                                ir::AttrMap attrs_map) {
  ir::Graph& g = ctx.graph;
  ir::Op* op = g.add_op(kind, operands, std::move(attrs_map), node.name(), ctx.loc);
  std::vector<const HostTensor*> data;
  for (ir::Value* v : operands) data.push_back(constant_data(v));
  // Folding evaluates on the host; results beyond a modest size stay ops (a hostile Expand of a
  // constant must not allocate gigabytes at import time).
  constexpr int64_t kMaxFoldedBytes = int64_t(256) << 20;
  bool foldable = kind != ir::OpKind::Constant &&
                  std::all_of(data.begin(), data.end(), [](auto* t) { return t != nullptr; }) &&
                  std::all_of(op->results.begin(), op->results.end(), [&](const ir::Value* r) {
                    return r->type.size_bytes() <= kMaxFoldedBytes;
                  });
  if (!foldable) return op->results;
  std::vector<HostTensor> folded = ir::evaluate_op(*op, data);
  std::vector<ir::Value*> results;
  for (HostTensor& t : folded) results.push_back(g.add_constant(std::move(t)));
  for (size_t i = 0; i < results.size(); ++i) g.replace_all_uses(op->results[i], results[i]);
  g.erase_op(op);
  return results;
}

ir::Value* NodeContext::emit(ir::OpKind kind, std::vector<ir::Value*> operands,
                             ir::AttrMap attrs_map) {
  return emit_multi(kind, std::move(operands), std::move(attrs_map)).at(0);
}

ir::Value* NodeContext::emit_unfolded(ir::OpKind kind, std::vector<ir::Value*> operands,
                                      ir::AttrMap attrs_map) {
  return ctx.graph.add_op(kind, std::move(operands), std::move(attrs_map), node.name(), ctx.loc)->result();
}

ir::Value* NodeContext::constant(HostTensor data) { return ctx.graph.add_constant(std::move(data)); }

ir::Value* NodeContext::reshape(ir::Value* v, const Shape& shape) {
  return emit(ir::OpKind::Reshape, {v}, {{"shape", shape}});
}

void NodeContext::set_output(int i, ir::Value* v) {
  if (!output_used(i)) return;
  ctx.values[node.output(i)] = v;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw Unsupported{cat(what, " ", axis, " is out of range for rank ", rank)};
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> resolve_auto_pad(const std::string& auto_pad, const Shape& in,
                                      const std::vector<int64_t>& kernel,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& dilations,
                                      std::vector<int64_t> pads) {
  size_t s = in.size();
  if (auto_pad.empty() || auto_pad == "NOTSET") {
    if (pads.empty()) pads.assign(2 * s, 0);
    if (pads.size() != 2 * s) throw Unsupported{cat("pads has ", pads.size(), " entries, expected ", 2 * s)};
    return pads;
  }
  if (auto_pad == "VALID") return std::vector<int64_t>(2 * s, 0);
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    throw Unsupported{cat("auto_pad '", auto_pad, "' is not supported")};
  std::vector<int64_t> out(2 * s, 0);
  for (size_t i = 0; i < s; ++i) {
    int64_t stride = strides.at(i), extent = dilations.at(i) * (kernel.at(i) - 1) + 1;
    int64_t out_size = ceil_div(in[i], stride);
    int64_t total = std::max<int64_t>(0, (out_size - 1) * stride + extent - in[i]);
    // SAME_UPPER puts the odd unit of padding at the end, SAME_LOWER at the beginning.
    int64_t small = total / 2, large = total - small;
    out[i] = auto_pad == "SAME_UPPER" ? small : large;
    out[s + i] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return out;
}

}  // namespace vkc::onnx
