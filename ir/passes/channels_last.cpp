// Activations stored channels innermost (N, spatial.., C) between the convs whose tensor-core
// kernel reads its input 16 bytes at a time (8 neighbouring float16 channels of one position,
// codegen/kernels/conv_pack.cpp). Such a conv packs an NCHW input in an extra dispatch on every
// execution; an input already stored channels innermost it reads in place. So the values between
// convs are stored that way, and each op on them does the same work in the permuted layout:
//
//   * convs read and write any layout (their input_layout / output_layout say which); those the
//     caller does not allow (whose kernel would lose speed with the layout) stay outside, as
//     unknown ops do; those it names `same_layout` (depthwise: coalesced over W in NCHW, over
//     channels in N, spatial.., C, neither when only one side changes) join their input and output
//     in one region, as an elementwise op does;
//   * elementwise ops (unary, binary, select) are indifferent to the layout once every operand of
//     the result's rank is permuted alike; a constant operand of lower rank (a per-channel bias
//     [C,1,1]) becomes a permuted constant of full rank, a one-element operand stays as it is;
//   * max/avg pooling take a layout; reductions and concat renumber their axes.
//
// Values joined by such ops form regions (union-find). A region's boundary costs a transpose:
// where it starts at a value no conv or region op produces (a graph input, an unknown op), and
// where a value computed in the region is used outside (a graph output, a reshape, a matmul). A
// transpose that only moves dims of extent 1 (global pooling's [N,C,1,1]) is a reshape, a view
// that costs nothing. A region is rewritten only when the packs it saves (wanted convs that read
// a value computed in the region, not through a cast or transpose their kernel would fuse as a
// prologue) outnumber the transposes it adds, so the graph never gains dispatches by it.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "ir/conv_geometry.h"
#include "ir/passes.h"
#include "ir/use_index.h"

namespace vkc::ir {
namespace {

// Logical [N, C, S..] -> physical [N, S.., C]: output dim i is input dim perm[i] (transpose's perm).
std::vector<int64_t> to_last_perm(int64_t rank) {
  std::vector<int64_t> p{0};
  for (int64_t d = 2; d < rank; ++d) p.push_back(d);
  p.push_back(1);
  return p;
}

std::vector<int64_t> to_first_perm(int64_t rank) {
  std::vector<int64_t> p{0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d) p.push_back(d);
  return p;
}

// Where logical axis a of a rank-`rank` value lives in the channels-last layout.
int64_t last_axis(int64_t a, int64_t rank) { return a == 0 ? 0 : a == 1 ? rank - 1 : a - 1; }

Shape permuted(const Shape& s, const std::vector<int64_t>& perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = s[size_t(perm[i])];
  return out;
}

// Whether the permutation moves only dims of extent 1: the bytes are then the same, a reshape.
bool trivial(const Shape& s) {
  return s[1] == 1 || std::all_of(s.begin() + 2, s.end(), [](int64_t e) { return e == 1; });
}

// `t` broadcast-aligned to `rank` (leading ones, as numpy broadcasting reads it), then permuted
// channels-last.
HostTensor permuted_constant(const HostTensor& t, int64_t rank) {
  Shape logical(size_t(rank - t.rank()), 1);
  logical.insert(logical.end(), t.shape().begin(), t.shape().end());
  const std::vector<int64_t> perm = to_last_perm(rank);
  HostTensor out(t.dtype(), permuted(logical, perm));
  const std::vector<int64_t> from_strides = shape_strides(logical), to_strides = shape_strides(out.shape());
  const size_t bytes = dtype_size(t.dtype());
  std::vector<int64_t> index(size_t(rank), 0);  // over the output's dims
  for (int64_t n = 0; n < out.numel(); ++n) {
    int64_t from = 0, to = 0;
    for (size_t d = 0; d < size_t(rank); ++d) {
      from += index[d] * from_strides[size_t(perm[d])];
      to += index[d] * to_strides[d];
    }
    std::memcpy(out.data() + to * int64_t(bytes), t.data() + from * int64_t(bytes), bytes);
    for (size_t d = size_t(rank); d-- > 0;)
      if (++index[d] < out.shape()[d]) break;
      else index[d] = 0;
  }
  return out;
}

// A name for an inserted op: the value's, else its producer's.
std::string label(const Value* v) {
  if (!v->name.empty() || v->producer == nullptr) return v->name;
  return v->producer->name;
}

bool is_constant(const Value* v) { return v->producer != nullptr && v->producer->kind == OpKind::Constant; }

bool identity(const std::vector<int>& pos) {
  for (size_t i = 0; i < pos.size(); ++i)
    if (pos[i] != int(i)) return false;
  return true;
}

// A conv in the default layouts (input and output N, C, spatial): the ones this pass may turn.
bool plain_conv(const Op& op) {
  if (op.kind != OpKind::Conv) return false;
  const ConvGeometry g = conv_geometry(op);
  return identity(g.input_pos) && identity(g.output_pos);
}

bool reduction(OpKind k) {
  switch (k) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceL1:
    case OpKind::ReduceL2:
    case OpKind::ReduceLogSumExp: return true;
    default: return false;
  }
}

std::vector<int64_t> reduced_axes(const Op& op, int64_t rank) {
  std::vector<int64_t> axes = op.attr_ints_or("axes", {});
  if (axes.empty()) {
    axes.resize(size_t(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t& a : axes)
    if (a < 0) a += rank;
  return axes;
}

// How an op takes part in a region.
enum class Role {
  outside,  // uses its operands as they are
  region,   // computes its rank-R result from rank-R operands in the permuted layout
  conv,     // a plain conv: reads its input and writes its output in either layout
  flat,     // a reduction without keepdims whose result is the same in either layout
};

struct OpPlan {
  Role role = Role::outside;
  std::vector<int> joined;  // operand indices of the result's rank, stored permuted
};

// Whether the reduction without keepdims keeps its remaining dims in the same order.
bool flat_reduction_keeps_order(const Op& op, int64_t rank) {
  const std::vector<int64_t> axes = reduced_axes(op, rank);
  int64_t last = -1;
  for (int64_t a = 0; a < rank; ++a) {
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) continue;
    if (last_axis(a, rank) < last) return false;
    last = last_axis(a, rank);
  }
  return true;
}

OpPlan plan_op(const Op& op, const ChannelsLastConvs& convs) {
  OpPlan p;
  if (op.results.size() != 1) return p;
  const int64_t rank = op.result()->type.rank();
  const OpCategory cat = op.schema().category;
  if (op.kind == OpKind::Conv) {
    if (plain_conv(op) && (!convs.allowed || convs.allowed(op))) p.role = Role::conv;
    return p;
  }
  if (rank < 3 && !reduction(op.kind)) return p;
  if (cat == OpCategory::Unary || cat == OpCategory::Binary || cat == OpCategory::Ternary) {
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* x = op.operand(i);
      if (x->type.rank() == rank && !is_constant(x)) p.joined.push_back(i);
      else if (!is_constant(x) && x->type.numel() != 1) return {};  // a broadcast value we cannot permute
    }
    if (!p.joined.empty()) p.role = Role::region;
    return p;
  }
  if (op.kind == OpKind::MaxPool || op.kind == OpKind::AvgPool) {
    if (op.operand(0)->type.rank() == rank && identity(pool_geometry(op).input_pos)) p = {Role::region, {0}};
    return p;
  }
  if (op.kind == OpKind::Concat) {
    for (int i = 0; i < op.num_operands(); ++i)
      if (is_constant(op.operand(i))) return {};
    p.role = Role::region;
    p.joined.resize(size_t(op.num_operands()));
    std::iota(p.joined.begin(), p.joined.end(), 0);
    return p;
  }
  if (reduction(op.kind)) {
    const int64_t in_rank = op.operand(0)->type.rank();
    if (in_rank < 3) return p;
    if (op.attr_bool("keepdims")) p = {Role::region, {0}};
    else if (flat_reduction_keeps_order(op, in_rank)) p.role = Role::flat;
  }
  return p;
}

AttrMap permuted_attrs(const Op& op, int64_t rank) {
  AttrMap attrs = op.attrs;
  if (op.kind == OpKind::MaxPool || op.kind == OpKind::AvgPool) {
    attrs["layout"] = "N" + spatial_letters(int(rank - 2)) + "C";
  } else if (op.kind == OpKind::Concat) {
    int64_t axis = op.attr_int("axis");
    attrs["axis"] = last_axis(axis < 0 ? axis + rank : axis, rank);
  } else if (reduction(op.kind)) {
    std::vector<int64_t> axes;
    for (int64_t a : reduced_axes(op, rank)) axes.push_back(last_axis(a, rank));
    std::sort(axes.begin(), axes.end());
    attrs["axes"] = axes;
  }
  return attrs;
}

class Rewriter {
 public:
  Rewriter(Graph& g, const ChannelsLastConvs& convs) : g_(g), convs_(convs) {}

  bool run() {
    ops_ = g_.ops();
    // Nothing to save without a wanted conv (an fp32 graph): the caller's `allowed` is not asked.
    for (Op* op : ops_)
      if (plain_conv(*op) && wanted(*op)) wanted_.insert(op);
    if (wanted_.empty()) return false;
    for (Op* op : ops_) plans_[op] = plan_op(*op, convs_);
    for (Op* op : ops_) {
      const OpPlan& p = plans_[op];
      if (p.role == Role::conv && convs_.same_layout && convs_.same_layout(*op)) unite(op->operand(0), op->result());
      if (p.role != Role::region) continue;
      for (int i : p.joined) unite(op->operand(i), op->result());
    }
    // A conv's input and output are regions of their own when no region op joins them to others
    // (conv -> conv): the conv alone can still write what the next one reads in place.
    for (Op* op : ops_) {
      if (plans_.at(op).role != Role::conv) continue;
      for (Value* v : {op->operand(0), op->result()})
        if (!in_region(v)) parent_[v] = v;
    }
    choose_regions();
    if (chosen_.empty()) return false;
    rewrite();
    g_.remove_dead_ops();
    return true;
  }

 private:
  const Value* find(const Value* v) {
    auto it = parent_.find(v);
    if (it == parent_.end()) return parent_[v] = v;
    if (it->second == v) return v;
    return it->second = find(it->second);
  }
  void unite(const Value* a, const Value* b) { parent_[find(a)] = find(b); }
  bool in_region(const Value* v) { return parent_.count(v) != 0; }
  bool chosen(const Value* v) { return in_region(v) && chosen_.count(find(v)) != 0; }

  // Whether the region rewrite computes v itself (else it transposes v in at the region's start).
  bool computed(const Value* v) {
    const Op* p = v->producer;
    if (p == nullptr) return false;
    const Role r = plans_.at(p).role;
    return r == Role::region || r == Role::conv;
  }

  bool wanted(const Op& conv) { return !convs_.wanted || convs_.wanted(conv); }

  // Packs saved and transposes added, per region; a region is chosen when it saves more.
  void choose_regions() {
    std::map<const Value*, int64_t> saved, added;
    UseIndex uses(g_);
    std::set<const Value*> seen;
    for (Op* op : ops_) {
      std::vector<Value*> values(op->results.begin(), op->results.end());
      for (Value* v : op->operands) values.push_back(v);
      for (Value* v : values) {
        if (!in_region(v) || !seen.insert(v).second) continue;
        const Value* root = find(v);
        if (!computed(v)) {
          if (!trivial(v->type.shape)) ++added[root];
          continue;
        }
        bool leaves = uses.is_output(v);
        for (const Op* u : uses.users(v)) {
          const OpPlan& p = plans_.at(u);
          const bool as_input = u->operand(0) == v &&
                                std::count(u->operands.begin(), u->operands.end(), v) == 1;
          if (p.role == Role::region) continue;
          if ((p.role == Role::conv || p.role == Role::flat) && as_input) {
            if (p.role == Role::conv && wanted_.count(u) && v->producer->kind != OpKind::Cast) ++saved[root];
            continue;
          }
          leaves = true;
        }
        if (leaves && !trivial(v->type.shape)) ++added[root];
      }
    }
    for (const auto& [root, n] : saved)
      if (n > added[root]) chosen_.insert(root);
  }

  // The channels-last form of a region value: computed by the rewritten op, else transposed in
  // (once, before its first use in the region).
  Value* last(Value* v, Op* before) {
    auto it = last_.find(v);
    if (it != last_.end()) return it->second;
    const int64_t rank = v->type.rank();
    Value* t;
    if (trivial(v->type.shape))
      t = g_.insert_op(before, OpKind::Reshape, {v}, {{"shape", permuted(v->type.shape, to_last_perm(rank))}},
                       label(v) + ".channels_last")->result();
    else
      t = g_.insert_op(before, OpKind::Transpose, {v}, {{"perm", to_last_perm(rank)}}, label(v) + ".channels_last")
              ->result();
    return last_[v] = t;
  }

  Value* permuted_constant_value(Value* c, int64_t rank, Op* before) {
    HostTensor t = permuted_constant(*c->producer->attr_tensor("value"), rank);
    return g_.insert_op(before, OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(t))}},
                        c->producer->name + ".channels_last")
        ->result();
  }

  void rewrite() {
    std::vector<Value*> computed_values;  // originals whose channels-last form an op computes
    for (Op* op : ops_) {
      const OpPlan& p = plans_.at(op);
      if (p.role == Role::region && chosen(op->result())) {
        const int64_t rank = op->result()->type.rank();
        std::vector<Value*> operands(op->operands.begin(), op->operands.end());
        for (size_t i = 0; i < operands.size(); ++i) {
          if (std::find(p.joined.begin(), p.joined.end(), int(i)) != p.joined.end())
            operands[i] = last(operands[i], op);
          else if (is_constant(operands[i]) && operands[i]->type.numel() != 1)
            operands[i] = permuted_constant_value(operands[i], rank, op);
        }
        Op* n = g_.insert_op(op, op->kind, operands, permuted_attrs(*op, rank), op->name, op->loc);
        last_[op->result()] = n->result();
        computed_values.push_back(op->result());
      } else if (p.role == Role::conv && (chosen(op->operand(0)) || chosen(op->result()))) {
        const std::string letters = spatial_letters(int(op->result()->type.rank() - 2));
        AttrMap attrs = op->attrs;
        std::vector<Value*> operands(op->operands.begin(), op->operands.end());
        if (chosen(op->operand(0))) {
          attrs["input_layout"] = "N" + letters + "C";
          operands[0] = last(operands[0], op);
        }
        if (chosen(op->result())) attrs["output_layout"] = "N" + letters + "C";
        Op* n = g_.insert_op(op, op->kind, operands, std::move(attrs), op->name, op->loc);
        if (chosen(op->result())) {
          last_[op->result()] = n->result();
          computed_values.push_back(op->result());
        } else {
          g_.replace_all_uses(op->result(), n->result());
        }
      } else if (p.role == Role::flat && chosen(op->operand(0))) {
        Value* x = last(op->operand(0), op);
        Op* n = g_.insert_op(op, op->kind, {x}, permuted_attrs(*op, op->operand(0)->type.rank()), op->name, op->loc);
        g_.replace_all_uses(op->result(), n->result());
      }
    }
    // Uses outside the region read the original layout back, from just after the rewritten op.
    UseIndex uses(g_);
    for (Value* v : computed_values) {
      bool outside = uses.is_output(v);
      for (const Op* u : uses.users(v)) outside = outside || !replaced(u);
      if (!outside) continue;
      const int64_t rank = v->type.rank();
      Value* back;
      if (trivial(v->type.shape))
        back = g_.insert_op(v->producer, OpKind::Reshape, {last_.at(v)}, {{"shape", v->type.shape}},
                            label(v) + ".channels_first")->result();
      else
        back = g_.insert_op(v->producer, OpKind::Transpose, {last_.at(v)}, {{"perm", to_first_perm(rank)}},
                            label(v) + ".channels_first")->result();
      g_.replace_all_uses(v, back);
    }
  }

  // Whether `op` was rewritten (the original then dies with the dead-op removal).
  bool replaced(const Op* op) {
    auto it = plans_.find(op);
    if (it == plans_.end()) return false;
    const OpPlan& p = it->second;
    if (p.role == Role::region) return chosen(op->result());
    if (p.role == Role::conv) return chosen(op->operand(0)) || chosen(op->result());
    if (p.role == Role::flat) return chosen(op->operand(0));
    return false;
  }

  Graph& g_;
  const ChannelsLastConvs& convs_;
  std::vector<Op*> ops_;
  std::unordered_map<const Op*, OpPlan> plans_;
  std::unordered_map<const Value*, const Value*> parent_;
  std::set<const Value*> chosen_;
  std::set<const Op*> wanted_;
  std::unordered_map<const Value*, Value*> last_;
};

}  // namespace

Pass channels_last_pass(ChannelsLastConvs convs) {
  return {"channels-last", "store activations between tensor-core convs channels innermost",
          [convs](Graph& g) { return Rewriter(g, convs).run(); }};
}

}  // namespace vkc::ir
