// RMSNorm as exporters spell it out (LLaMA, Mistral, Qwen, T5 before ONNX's opset 23 op):
//   x * (1 / sqrt(reduce_mean(x^2, last axis) + eps)) [* w]   or   x / sqrt(...) [* w]
// becomes one layer_norm with `rms` (no mean taken out), w its scale.
//
// Why: spelled out it is a reduction and an elementwise dispatch with the row reread between
// them; layer_norm's kernel reads the row once (into workgroup memory when it fits), twice per
// decoder layer.
#include <optional>

#include "ir/passes.h"

namespace vkc::ir {
namespace {

const HostTensor* constant_of(const Value* v) {
  if (v == nullptr || v->producer == nullptr || v->producer->kind != OpKind::Constant) return nullptr;
  return v->producer->attr_tensor("value").get();
}

std::optional<double> scalar_of(const Value* v) {
  const HostTensor* c = constant_of(v);
  if (c == nullptr || c->numel() != 1) return std::nullopt;
  return c->get_f64(0);
}

// The only user of `v` (not a graph output), else null.
Op* only_user(const Graph& g, const Value* v) {
  std::vector<Op*> users = g.users(v);
  return users.size() == 1 && !g.is_output(v) ? users[0] : nullptr;
}

// The operand of binary `op` other than `v` (null when both are `v`).
Value* other(const Op* op, const Value* v) {
  if (op->operand(0) == v && op->operand(1) != v) return op->operand(1);
  if (op->operand(1) == v && op->operand(0) != v) return op->operand(0);
  return nullptr;
}

bool rewrite_one(Graph& g, Op* mean) {
  const Value* m = mean->result();
  const int64_t rank = m->type.rank();
  if (!mean->attr_bool("keepdims") || !mean->has_attr("axes") || rank < 1 || !is_float(m->type.dtype)) return false;
  const std::vector<int64_t>& axes = mean->attr_ints("axes");
  if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1)) return false;
  // x^2 as pow(x, 2) or x * x, used only here.
  const Op* square = mean->operand(0)->producer;
  if (square == nullptr || only_user(g, square->result()) != mean) return false;
  Value* x = nullptr;
  if (square->kind == OpKind::Pow && scalar_of(square->operand(1)) == 2.0) x = square->operand(0);
  if (square->kind == OpKind::Mul && square->operand(0) == square->operand(1)) x = square->operand(0);
  if (x == nullptr || x->type != square->result()->type) return false;
  // + eps, sqrt.
  Op* add = only_user(g, m);
  std::optional<double> eps = add && add->kind == OpKind::Add ? scalar_of(other(add, m)) : std::nullopt;
  if (!eps || *eps < 0) return false;
  Op* root = only_user(g, add->result());
  if (root == nullptr || root->kind != OpKind::Sqrt) return false;
  // x / sqrt(..), or x * (1 / sqrt(..)).
  Op* norm = only_user(g, root->result());
  if (norm == nullptr || norm->kind != OpKind::Div) return false;
  if (norm->operand(1) == root->result() && norm->operand(0) != x) {
    if (scalar_of(norm->operand(0)) != 1.0) return false;
    Op* times = only_user(g, norm->result());
    if (times == nullptr || times->kind != OpKind::Mul || other(times, norm->result()) != x) return false;
    norm = times;
  } else if (norm->operand(0) != x || norm->operand(1) != root->result()) {
    return false;
  }
  if (norm->result()->type != x->type) return false;
  // * w, a weight of the row's length.
  Op* last = norm;
  std::vector<Value*> operands{x};
  if (Op* scale = only_user(g, norm->result()); scale != nullptr && scale->kind == OpKind::Mul) {
    Value* w = other(scale, norm->result());
    if (w != nullptr && w->type.dtype == x->type.dtype && w->type.shape == Shape{x->type.shape.back()} &&
        scale->result()->type == x->type) {
      operands.push_back(w);
      last = scale;
    }
  }
  Op* ln = g.insert_op(last, OpKind::LayerNorm, operands,
                       {{"axis", int64_t(-1)}, {"epsilon", *eps}, {"rms", true}}, mean->name, mean->loc);
  g.replace_all_uses(last->result(), ln->result());
  g.remove_dead_ops();
  return true;
}

bool fuse_rms_norm(Graph& g) { return rewrite_each(g, OpKind::ReduceMean, rewrite_one); }

}  // namespace

Pass fuse_rms_norm_pass() {
  return {"fuse-rms-norm", "x / sqrt(mean(x^2) + eps) [* w] over the last axis -> layer_norm with rms",
          fuse_rms_norm};
}

}  // namespace vkc::ir
