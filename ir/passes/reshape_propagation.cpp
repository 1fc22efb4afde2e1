// Reshape canonicalization. Reshapes are free views, but where they sit decides what the later
// stages see: a pad hidden behind "expand groups" cannot fold into the conv that reads the
// collapsed tensor, and a chain of two reshapes hides that it is the identity. This pass
//   1. replaces reshape(reshape(x)) by one reshape of x,
//   2. drops reshapes whose result has the operand's shape,
//   3. rewrites op(reshape(x)) as reshape(op'(x)) for pad, reverse and unary elementwise ops when
//      every dim the op touches is kept whole (a singleton group) by the reshape,
// until nothing changes. Reshapes thereby move towards the consumers and cancel there.
//
// One forward sweep with exact use lists (issue 24 item 11): Graph::users and replace_all_uses
// scan the whole graph, and restarting the scan after every rewrite made a chain of 20k reshapes
// take a minute. An op is looked at again only when a rewrite can have made a rule apply to it:
// its operand was replaced, or the value it reads lost its other users.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/passes.h"
#include "support/error.h"

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

// Users of every value, kept exact through the rewrites; ops whose results lost every use are
// dropped from their operands' lists at once (and erased from the graph at the end).
class UseLists {
 public:
  explicit UseLists(Graph& g) : g_(g) {
    for (Op* op : g.ops()) added(op);
    for (const GraphOutput& o : g.outputs()) outputs_.insert(o.value);
  }
  bool single_internal_use(const Value* v) const {
    auto it = users_.find(v);
    return it != users_.end() && it->second.size() == 1 && !outputs_.count(v);
  }
  bool dead(const Op* op) const { return dead_.count(op) != 0; }
  void added(Op* op) {
    for (Value* v : op->operands) users_[v].push_back(op);
  }
  // Every use of `from` becomes a use of `to`; the users are looked at again.
  void replace(Value* from, Value* to, std::vector<Op*>& revisit) {
    std::vector<Op*> list = std::move(users_[from]);
    users_.erase(from);
    for (Op* u : list) {
      for (Value*& o : u->operands)
        if (o == from) o = to;
      users_[to].push_back(u);
      revisit.push_back(u);
    }
    if (outputs_.erase(from)) {
      for (GraphOutput& o : g_.outputs())
        if (o.value == from) o.value = to;
      outputs_.insert(to);
    }
    release_if_dead(from->producer, revisit);
  }

 private:
  void release_if_dead(Op* op, std::vector<Op*>& revisit) {
    if (op == nullptr || dead_.count(op)) return;
    for (const Value* r : op->results)
      if (outputs_.count(r) || !users_[r].empty()) return;
    dead_.insert(op);
    for (Value* v : op->operands) {
      std::vector<Op*>& list = users_[v];
      auto it = std::find(list.begin(), list.end(), op);  // one use per operand slot
      check(it != list.end(), "internal: reshape propagation lost a use of ", op->describe());
      list.erase(it);
      if (list.size() == 1 && !outputs_.count(v)) revisit.push_back(list[0]);  // now single-use
      if (list.empty()) release_if_dead(v->producer, revisit);
    }
  }

  Graph& g_;
  std::unordered_map<const Value*, std::vector<Op*>> users_;
  std::unordered_set<const Value*> outputs_;
  std::unordered_set<const Op*> dead_;
};

Value* make_reshape(Graph& g, UseLists& uses, Op* before, Value* x, const Shape& shape) {
  if (x->type.shape == shape) return x;
  AttrMap attrs{{"shape", std::vector<int64_t>(shape.begin(), shape.end())}};
  Op* op = g.insert_op(before, OpKind::Reshape, {x}, std::move(attrs));
  uses.added(op);
  return op->result();
}

// op(reshape(x)) -> reshape(op'(x)) when op only touches dims the reshape keeps whole.
bool swap_with_reshape(Graph& g, UseLists& uses, Op* op, std::vector<Op*>& revisit) {
  Value* r = op->operand(0);
  Op* reshape = r->producer;
  if (!is_reshape(reshape) || !uses.single_internal_use(r)) return false;
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
  uses.added(moved);
  moved->result()->name = std::move(op->result()->name);  // the op keeps its value's name
  op->result()->name.clear();
  // The reshape keeps its kind and reassociation (only the touched dims changed extent), so both
  // orders of the same computation print the same way.
  AttrMap reshape_attrs = reshape->attrs;
  if (reshape->kind != OpKind::CollapseShape) {
    const Shape& shape = op->result()->type.shape;
    reshape_attrs["shape"] = std::vector<int64_t>(shape.begin(), shape.end());
  }
  Op* out = g.insert_op(op, reshape->kind, {moved->result()}, std::move(reshape_attrs), reshape->name, reshape->loc);
  uses.added(out);
  uses.replace(op->result(), out->result(), revisit);
  return true;
}

bool canonicalize(Graph& g) {
  UseLists uses(g);
  std::vector<Op*> work = g.ops();  // graph order; ops a rewrite affects are appended again
  bool changed_any = false;
  for (size_t i = 0; i < work.size(); ++i) {
    Op* op = work[i];
    if (uses.dead(op)) continue;
    std::vector<Op*> revisit;
    bool changed = false;
    if (is_reshape(op)) {
      Value* x = op->operand(0);
      if (x->type.shape == op->result()->type.shape) {
        uses.replace(op->result(), x, revisit);
        changed = true;
      } else if (is_reshape(x->producer)) {
        Value* src = x->producer->operand(0);
        uses.replace(op->result(), make_reshape(g, uses, op, src, op->result()->type.shape), revisit);
        changed = true;
      }
    } else if (op->num_operands() == 1 && op->results.size() == 1 &&
               (op->kind == OpKind::Pad || op->kind == OpKind::Reverse ||
                op_schema(op->kind).category == OpCategory::Unary)) {
      changed = swap_with_reshape(g, uses, op, revisit);
    }
    changed_any |= changed;
    work.insert(work.end(), revisit.begin(), revisit.end());
  }
  if (changed_any) g.remove_dead_ops();
  return changed_any;
}

}  // namespace

Pass reshape_propagation_pass() {
  return {"reshape-propagation", "combine reshapes and move them past pad, reverse and unary ops",
          canonicalize};
}

}  // namespace vkc::ir
