// Reshape canonicalization. Reshapes are free views, but where they sit decides what the later
// stages see: a pad hidden behind "expand groups" cannot fold into the conv that reads the
// collapsed tensor, and a chain of two reshapes hides that it is the identity. This pass
//   1. replaces reshape(reshape(x)) by one reshape of x,
//   2. drops reshapes whose result has the operand's shape,
//   3. rewrites op(reshape(x)) as reshape(op'(x)) for pad, reverse and unary elementwise ops when
//      every dim the op touches is kept whole (a singleton group) by the reshape,
// until nothing changes. Reshapes thereby move towards the consumers and cancel there.
#include <algorithm>

#include "ir/passes.h"

namespace vkc::ir {
namespace {

bool is_reshape(const Op* op) {
  return op != nullptr && (op->kind == OpKind::ExpandShape || op->kind == OpKind::CollapseShape ||
                           op->kind == OpKind::Reshape);
}

// For equal-numel shapes a -> b: dim_map[i] = the dim of b that a's dim i is exactly (a group of
// one dim on each side with equal extent), or -1. Groups are formed greedily left to right.
std::vector<int> preserved_dims(const Shape& a, const Shape& b) {
  std::vector<int> map(a.size(), -1);
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    size_t i0 = i, j0 = j;
    int64_t pa = a[i++], pb = b[j++];
    while (pa != pb) {
      if (pa < pb && i < a.size()) pa *= a[i++];
      else if (pb < pa && j < b.size()) pb *= b[j++];
      else return map;  // inconsistent: treat nothing as preserved
    }
    if (i - i0 == 1 && j - j0 == 1) map[i0] = int(j0);
  }
  return map;
}

Value* make_reshape(Graph& g, Op* before, Value* x, const Shape& shape) {
  if (x->type.shape == shape) return x;
  AttrMap attrs{{"shape", std::vector<int64_t>(shape.begin(), shape.end())}};
  return g.insert_op(before, OpKind::Reshape, {x}, std::move(attrs))->result();
}

bool single_internal_use(const Graph& g, const Value* v) {
  return g.users(v).size() == 1 && !g.is_output(v);
}

// op(reshape(x)) -> reshape(op'(x)) when op only touches dims the reshape keeps whole.
bool swap_with_reshape(Graph& g, Op* op) {
  Value* r = op->operand(0);
  Op* reshape = r->producer;
  if (!is_reshape(reshape) || !single_internal_use(g, r)) return false;
  Value* x = reshape->operand(0);
  // Map of r's dims to x's dims.
  std::vector<int> to_x = preserved_dims(r->type.shape, x->type.shape);
  size_t rank = size_t(r->type.rank());
  AttrMap attrs = op->attrs;
  if (op->kind == OpKind::Pad) {
    const std::vector<int64_t>& p = op->attr_ints("pads");
    size_t xr = size_t(x->type.rank());
    std::vector<int64_t> pads(2 * xr, 0);
    for (size_t d = 0; d < rank; ++d) {
      if (p[d] == 0 && p[rank + d] == 0) continue;
      if (to_x[d] < 0) return false;
      pads[size_t(to_x[d])] = p[d];
      pads[xr + size_t(to_x[d])] = p[rank + d];
    }
    attrs["pads"] = pads;
  } else if (op->kind == OpKind::Reverse) {
    std::vector<int64_t> axes;
    for (int64_t a : op->attr_ints("axes")) {
      if (a < 0) a += int64_t(rank);
      if (to_x[size_t(a)] < 0) return false;
      axes.push_back(to_x[size_t(a)]);
    }
    attrs["axes"] = axes;
  } else if (op_schema(op->kind).category != OpCategory::Unary) {
    return false;
  }
  Op* moved = g.insert_op(op, op->kind, {x}, std::move(attrs), op->name, op->loc);
  moved->result()->name = std::move(op->result()->name);  // the op keeps its value's name
  op->result()->name.clear();
  // The reshape keeps its kind and reassociation (only the touched dims changed extent), so both
  // orders of the same computation print the same way.
  AttrMap reshape_attrs = reshape->attrs;
  if (reshape->kind != OpKind::CollapseShape) {
    const Shape& shape = op->result()->type.shape;
    reshape_attrs["shape"] = std::vector<int64_t>(shape.begin(), shape.end());
  }
  Value* out = g.insert_op(op, reshape->kind, {moved->result()}, std::move(reshape_attrs), reshape->name,
                           reshape->loc)->result();
  g.replace_all_uses(op->result(), out);
  return true;
}

bool canonicalize(Graph& g) {
  bool changed_any = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (Op* op : g.ops()) {
      if (is_reshape(op)) {
        Value* x = op->operand(0);
        if (x->type.shape == op->result()->type.shape) {
          g.replace_all_uses(op->result(), x);
          changed = true;
        } else if (is_reshape(x->producer)) {
          Value* src = x->producer->operand(0);
          Value* out = make_reshape(g, op, src, op->result()->type.shape);
          g.replace_all_uses(op->result(), out);
          changed = true;
        }
      } else if (op->num_operands() == 1 && op->results.size() == 1 &&
                 (op->kind == OpKind::Pad || op->kind == OpKind::Reverse ||
                  op_schema(op->kind).category == OpCategory::Unary)) {
        changed |= swap_with_reshape(g, op);
      }
      if (changed) break;  // the op list changed: start over
    }
    if (changed) {
      g.remove_dead_ops();
      changed_any = true;
    }
  }
  return changed_any;
}

}  // namespace

Pass reshape_propagation_pass() {
  return {"reshape-propagation", "combine reshapes and move them past pad, reverse and unary ops",
          canonicalize};
}

}  // namespace vkc::ir
