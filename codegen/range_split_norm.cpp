// layer_norm and group_norm (instance norm: a group_norm of one channel per group) whose
// normalized group of one index of the leading dims is beyond one binding: no piece of the op can
// see its whole group, so the op becomes the ordinary ops it is made of, which the later rounds of
// the split cut like any other (the reductions over blocks of a reduced dim, the elementwise ops
// along any dim). Numerically as the reference (ir/interpreter_normalization.cpp) computes it:
// the variance around the mean (two passes over x, not E[x^2] - E[x]^2, which cancels for inputs
// far from zero), in f32 whatever the input's float type.
#include "codegen/range_split_parts.h"
#include "support/error.h"

namespace vkc::codegen::split_detail {

std::vector<ir::Op*> split_normalization(ir::Graph& g, ir::Op* op, std::string& how) {
  using K = ir::OpKind;
  if (op->kind != K::LayerNorm && op->kind != K::GroupNorm) return {};
  ir::Value* x = op->operand(0);
  const Shape shape = x->type.shape;
  const size_t rank = shape.size();
  const DType dtype = x->type.dtype;
  if (x->type.numel() == 0) return {};
  std::vector<ir::Op*> made_ops;  // the ops that compute (not the reshapes): for the report
  // Named after the op and the op kind it came from: "ln.layer_norm.mean" (the report's op column).
  const std::string prefix = cat(op->name, op->name.empty() ? "" : ".", op_name(op->kind), ".");
  auto insert = [&](K kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const std::string& what) {
    ir::Op* o = g.insert_op(op, kind, std::move(operands), std::move(attrs), prefix + what, op->loc);
    if (o->schema().category != ir::OpCategory::Reshape) made_ops.push_back(o);
    return o->result();
  };
  auto scalar = [&](double v, const char* what) {
    HostTensor t(DType::f32, {});
    t.set_f64(0, v);
    ir::Value* c = g.add_constant(std::move(t), prefix + what);
    g.move_before(c->producer, op);
    return c;
  };
  auto as_f32 = [&](ir::Value* v, const char* what) {
    return v->type.dtype == DType::f32 ? v : insert(K::Cast, {v}, {{"to", std::string("f32")}}, what);
  };
  // The groups as the trailing reduced dims: layer_norm's dims from its axis; group_norm's input
  // seen as [N, G, C / G * spatial] (a reshape: a view).
  ir::Value* xs = as_f32(x, "input_f32");
  Ints axes;
  int64_t group = 1;
  if (op->kind == K::LayerNorm) {
    for (size_t d = size_t(normalized_axis(op->attr_int("axis"), rank)); d < rank; ++d) {
      axes.push_back(int64_t(d));
      group *= shape[d];
    }
  } else {
    const int64_t groups = op->attr_int("num_groups");
    group = x->type.numel() / (shape[0] * groups);
    xs = insert(K::Reshape, {xs}, {{"shape", Ints{shape[0], groups, group}}}, "groups");
    axes = {2};
  }
  const ir::AttrMap reduce{{"axes", axes}, {"keepdims", true}};
  // RMSNorm (layer_norm's `rms`) takes no mean out: its "deviation" is x itself.
  const bool rms = op->kind == K::LayerNorm && op->attr_bool("rms");
  ir::Value* deviation = rms ? xs : insert(K::Sub, {xs, insert(K::ReduceMean, {xs}, reduce, "mean")}, {}, "deviation");
  ir::Value* variance = insert(K::ReduceMean, {insert(K::Mul, {deviation, deviation}, {}, "squared")}, reduce, "variance");
  ir::Value* std_dev =
      insert(K::Sqrt, {insert(K::Add, {variance, scalar(op->attr_float("epsilon"), "epsilon")}, {}, "variance_eps")}, {},
             "std");
  ir::Value* y = insert(K::Div, {deviation, std_dev}, {}, "normalized");
  // Scale and bias: per normalized element (layer_norm), per channel (group_norm: [C, 1, ...]).
  auto param = [&](int k, const char* what) {
    ir::Value* p = as_f32(op->operand(k), what);
    if (op->kind == K::GroupNorm) {
      Ints s(rank - 1, 1);
      s[0] = shape[1];
      p = insert(K::Reshape, {p}, {{"shape", s}}, cat(what, "_per_channel"));
    }
    return p;
  };
  if (op->kind == K::GroupNorm) y = insert(K::Reshape, {y}, {{"shape", Ints(shape)}}, "ungrouped");
  if (op->num_operands() > 1) y = insert(K::Mul, {y, param(1, "scale_f32")}, {}, "scaled");
  if (op->num_operands() > 2) y = insert(K::Add, {y, param(2, "bias_f32")}, {}, "biased");
  if (dtype != DType::f32) y = insert(K::Cast, {y}, {{"to", std::string(dtype_name(dtype))}}, "result");
  g.replace_all_uses(op->result(), y);
  const std::string described = op->describe();
  g.erase_op(op);
  how = cat("ops that compute ", described, " over groups of ", group,
            " elements beyond one binding (reduce_mean for the mean, then reduce_mean of the squared deviations for "
            "the variance: two passes; the rest elementwise), each cut again on its own");
  return made_ops;
}

// softmax and log_softmax whose one row along the axis is beyond one binding: the ops they are
// made of, as the reference computes them (in f32): m = max, e = exp(x - m), softmax = e / sum(e),
// log_softmax = (x - m) - log(sum(e)). The reductions are cut over blocks of the axis by later
// rounds, the elementwise ops along any dim.
std::vector<ir::Op*> split_softmax(ir::Graph& g, ir::Op* op, std::string& how) {
  using K = ir::OpKind;
  if (op->kind != K::Softmax && op->kind != K::LogSoftmax) return {};
  ir::Value* x = op->operand(0);
  if (x->type.numel() == 0 || x->type.shape.empty()) return {};
  const int64_t axis = normalized_axis(op->attr_int("axis"), x->type.shape.size());
  std::vector<ir::Op*> made_ops;
  const std::string prefix = cat(op->name, op->name.empty() ? "" : ".", op_name(op->kind), ".");
  auto insert = [&](K kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const std::string& what) {
    ir::Op* o = g.insert_op(op, kind, std::move(operands), std::move(attrs), prefix + what, op->loc);
    made_ops.push_back(o);
    return o->result();
  };
  const DType dtype = x->type.dtype;
  ir::Value* xs = dtype == DType::f32 ? x : insert(K::Cast, {x}, {{"to", std::string("f32")}}, "input_f32");
  const ir::AttrMap reduce{{"axes", Ints{axis}}, {"keepdims", true}};
  ir::Value* shifted = insert(K::Sub, {xs, insert(K::ReduceMax, {xs}, reduce, "max")}, {}, "shifted");
  ir::Value* e = insert(K::Exp, {shifted}, {}, "exp");
  ir::Value* sum = insert(K::ReduceSum, {e}, reduce, "sum");
  ir::Value* y = op->kind == K::Softmax ? insert(K::Div, {e, sum}, {}, "normalized")
                                        : insert(K::Sub, {shifted, insert(K::Log, {sum}, {}, "log_sum")}, {}, "normalized");
  if (dtype != DType::f32) y = insert(K::Cast, {y}, {{"to", std::string(dtype_name(dtype))}}, "result");
  g.replace_all_uses(op->result(), y);
  const std::string described = op->describe();
  g.erase_op(op);
  how = cat("ops that compute ", described, " along rows of ", x->type.shape[size_t(axis)],
            " beyond one binding (reduce_max, exp of the difference, reduce_sum, then the quotient), each cut again on its own");
  return made_ops;
}

}  // namespace vkc::codegen::split_detail
