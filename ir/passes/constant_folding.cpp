// Constant folding: ops whose operands are all constants are evaluated once, at compile time, by
// the reference interpreter, which is by construction the semantics every kernel must match.
#include <algorithm>

#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/use_index.h"

namespace vkc::ir {
namespace {

bool all_operands_constant(const Op& op) {
  if (op.operands.empty()) return false;
  for (const Value* v : op.operands)
    if (v->producer == nullptr || v->producer->kind != OpKind::Constant) return false;
  return true;
}

// Convs, contractions and sorts cost far more than one step per result element in the
// interpreter; folding them is only worth a bounded compile time for small results.
int64_t element_limit(const Op& op, int64_t max_elements) {
  switch (op.schema().category) {
    case OpCategory::Conv:
    case OpCategory::Contraction:
    case OpCategory::Attention:
    case OpCategory::Sort: return std::min<int64_t>(max_elements, 65536);
    case OpCategory::Source:
    case OpCategory::Reshape:
    case OpCategory::DataMovement:
    case OpCategory::Unary:
    case OpCategory::Binary:
    case OpCategory::Ternary:
    case OpCategory::Quant:
    case OpCategory::Reduction:
    case OpCategory::Normalize:
    case OpCategory::Pool: return max_elements;
  }
  return max_elements;
}

bool fold_constants(Graph& g, int64_t max_elements) {
  bool changed = false;
  // The users of every result, indexed once rather than scanned per fold (quadratic in long
  // foldable chains, issue 24 item 11). It stays exact through the loop: a folded result's users
  // are ops that were there from the start (new constants have no operands), nothing is removed
  // before the end, and only the folded result's own uses are redirected.
  const UseIndex uses(g);
  for (Op* op : g.ops()) {
    if (op->kind == OpKind::Constant || !all_operands_constant(*op)) continue;
    bool small = true;
    for (const Value* r : op->results) small &= r->type.numel() <= element_limit(*op, max_elements);
    if (!small) continue;
    std::vector<const HostTensor*> operands;
    for (const Value* v : op->operands) operands.push_back(v->producer->attr_tensor("value").get());
    std::vector<HostTensor> values = evaluate_op(*op, operands);
    for (size_t i = 0; i < op->results.size(); ++i) {
      Value* r = op->results[i];
      if (!uses.has_uses(r)) continue;
      AttrMap attrs{{"value", std::make_shared<const HostTensor>(std::move(values[i]))}};
      Op* c = g.insert_op(op, OpKind::Constant, {}, std::move(attrs), op->name, op->loc);
      c->result()->name = r->name;
      r->name.clear();  // names stay unique: the constant now carries it
      for (Op* user : uses.users(r))  // Graph::replace_all_uses, restricted to where r is used
        for (Value*& operand : user->operands)
          if (operand == r) operand = c->result();
      for (GraphOutput& out : g.outputs())
        if (out.value == r) out.value = c->result();
    }
    changed = true;
  }
  if (changed) g.remove_dead_ops();
  return changed;
}

}  // namespace

Pass constant_folding_pass(int64_t max_elements) {
  return {"constant-folding", "evaluate ops whose operands are all constants at compile time",
          [max_elements](Graph& g) { return fold_constants(g, max_elements); }};
}

}  // namespace vkc::ir
