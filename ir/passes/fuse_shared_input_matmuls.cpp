// Products of one activation with several constant weight matrices, x @ W1, x @ W2, ... (a
// transformer's q, k and v projections as HF BERT-style encoders export them), become one product
// with the weights side by side, x @ [W1 W2 ...], whose result the old consumers read through
// slices of its last axis. Their constant bias adds join it the same way. Only where every result
// is read by products alone (through views, transposes and constant scalings), whose operand
// loads absorb the slices, and fits one binding.
//
// Why: at BERT-base's 8x128 tokens each projection is a 1024x768x768 product whose output tiles do
// not fill a 132-SM GPU, so each ran as a split-K product and its reduce: six dispatches, six
// barriers, where the 1024x2304x768 product fills the GPU unsplit in one. The slices cost no
// dispatch: they are index maps that fuse into the reading kernels (attention's and matmul's
// operand loads; codegen's Prologue::Slice). Each output element is the same dot product as
// before, so only the summation order of a split may change (float rounding).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "ir/passes.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

const HostTensor* constant_of(const Value* v) {
  if (v->producer == nullptr || v->producer->kind != OpKind::Constant) return nullptr;
  return v->producer->attr_tensor("value").get();
}

// How feeds_products_only (below) treats a reader: a product ends the path; an index map (views,
// transposes, broadcasts such as grouped-query heads' repeat_kv, reversals) or a negation passes
// it on; elementwise arithmetic passes it on where it stays linear; anything else stops the join.
enum class Reader { Product, PassesOn, Arithmetic, Other };

Reader reader_kind(OpKind k) {
  switch (k) {
    case OpKind::MatMul:
    case OpKind::BatchMatMul:
    case OpKind::Gemm:
    case OpKind::Attention: return Reader::Product;
    case OpKind::Reshape:
    case OpKind::ExpandShape:
    case OpKind::CollapseShape:
    case OpKind::Transpose:
    case OpKind::Broadcast:
    case OpKind::Reverse:
    case OpKind::Neg: return Reader::PassesOn;
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Add:
    case OpKind::Sub: return Reader::Arithmetic;
    default: return Reader::Other;
  }
}

// Values computed from `root` through readers that pass it on or do arithmetic on it.
std::set<const Value*> derived_from(const Graph& g, const Value* root) {
  std::set<const Value*> derived{root};
  std::vector<const Value*> work{root};
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    for (const Op* u : g.users(v)) {
      const Reader r = reader_kind(u->kind);
      if ((r == Reader::PassesOn || r == Reader::Arithmetic) && u->results.size() == 1 &&
          derived.insert(u->result()).second)
        work.push_back(u->result());
    }
  }
  return derived;
}

// Linear in the root: its operands constants or values computed from the root, at most one of the
// latter in a product (q * q is not), none as a divisor.
bool linear_in_root(const Op& u, const std::set<const Value*>& derived) {
  int from_root = 0;
  for (const Value* x : u.operands) {
    if (!derived.count(x) && constant_of(x) == nullptr) return false;
    from_root += int(derived.count(x));
  }
  return !(u.kind == OpKind::Mul && from_root > 1) && !(u.kind == OpKind::Div && derived.count(u.operand(1)));
}

// Whether every use of `v` reaches the operand of a product (matmul, batch_matmul, gemm,
// attention) through views, transposes, broadcasts, reversals, negation and elementwise
// arithmetic that stays linear in v: SDPA's export scales q and k before the product, and rotary
// embeddings (q * cos + rotate_half(q) * sin, rotate_half a reversal times a sign after the
// rotate-half pass) read q and k twice. The slices that replace `v` then fuse into those products'
// operand loads (codegen's prologues, which may read an index map twice). Anything else (a graph
// output, a non-linear function such as SwiGLU's silu(gate) * up, or an op mixing in another
// activation) would read a slice through a copy of its own, which costs more than the joined
// product saves.
bool feeds_products_only(const Graph& g, const Value* v, const std::set<const Value*>& derived, int depth = 0) {
  if (g.is_output(v) || depth > 16) return false;
  for (const Op* u : g.users(v)) {
    switch (reader_kind(u->kind)) {
      case Reader::Product: continue;
      case Reader::Arithmetic:
        if (!linear_in_root(*u, derived)) return false;
        [[fallthrough]];
      case Reader::PassesOn:
        if (!feeds_products_only(g, u->result(), derived, depth + 1)) return false;
        continue;
      case Reader::Other: return false;
    }
  }
  return true;
}

bool feeds_products_only(const Graph& g, const Value* v) { return feeds_products_only(g, v, derived_from(g, v)); }

// A matmul that may join: x @ W with W a constant [K, N] matrix of x's float dtype.
bool joinable(const Op& mm, const Value* x) {
  if (mm.kind != OpKind::MatMul || mm.num_operands() != 2 || mm.operand(0) != x || mm.operand(1) == x) return false;
  const HostTensor* w = constant_of(mm.operand(1));
  return w != nullptr && w->shape().size() == 2 && w->dtype() == x->type.dtype && is_float(x->type.dtype) &&
         x->type.rank() >= 2 && w->shape()[0] == x->type.shape.back();
}

// The bias of `mm`'s only consumer `y + b` (either operand order), b a constant of N values
// broadcast along the last axis ([N] or [1, .., 1, N]) that leaves y's type unchanged; else null.
Op* bias_add_of(const Graph& g, const Op& mm, const HostTensor*& bias) {
  const Value* y = mm.result();
  std::vector<Op*> users = g.users(y);
  if (users.size() != 1 || g.is_output(y) || users[0]->kind != OpKind::Add) return nullptr;
  Op* add = users[0];
  if (add->num_operands() != 2 || add->operand(0) == add->operand(1) || add->result()->type != y->type) return nullptr;
  const Value* other = add->operand(0) == y ? add->operand(1) : add->operand(0);
  const HostTensor* b = constant_of(other);
  const int64_t n = y->type.shape.back();
  if (b == nullptr || b->dtype() != y->type.dtype || b->numel() != n || b->shape().empty() ||
      b->shape().back() != n || b->shape().size() > y->type.shape.size())
    return nullptr;
  bias = b;
  return add;
}

// Joins `mms` (all x @ W_i, in graph order) where the joined result fits `max_bytes`. Returns
// false when fewer than two products are given or the result would not fit.
bool join(Graph& g, Value* x, const std::vector<Op*>& mms, uint64_t max_bytes) {
  if (mms.size() < 2) return false;
  uint64_t joined_bytes = 0;
  for (const Op* mm : mms) joined_bytes += mm->result()->type.size_bytes();
  if (joined_bytes > max_bytes) return false;
  std::vector<const HostTensor*> biases(mms.size(), nullptr);
  std::vector<Op*> adds(mms.size(), nullptr);
  size_t biased = 0;
  for (size_t i = 0; i < mms.size(); ++i) biased += (adds[i] = bias_add_of(g, *mms[i], biases[i])) != nullptr;
  // Every product with its bias add, or none with one (a lone add would read its slice through a
  // copy), and every result read only by products.
  if (biased != 0 && biased != mms.size()) return false;
  const bool all_biased = biased == mms.size();
  for (size_t i = 0; i < mms.size(); ++i)
    if (!feeds_products_only(g, all_biased ? adds[i]->result() : mms[i]->result())) return false;
  const DType dtype = x->type.dtype;
  const int64_t k = x->type.shape.back();
  const size_t esize = dtype_size(dtype);
  int64_t total = 0;
  for (const Op* mm : mms) total += constant_of(mm->operand(1))->shape()[1];
  // The weights side by side, row by row: row r of the result is rows r of W1, W2, ... in turn.
  HostTensor w(dtype, {k, total});
  HostTensor b(dtype, {total});
  int64_t at = 0;
  for (size_t i = 0; i < mms.size(); ++i) {
    const HostTensor& wi = *constant_of(mms[i]->operand(1));
    const int64_t n = wi.shape()[1];
    for (int64_t r = 0; r < k; ++r)
      std::memcpy(w.data() + (r * total + at) * esize, wi.data() + r * n * esize, size_t(n) * esize);
    if (all_biased) std::memcpy(b.data() + at * esize, biases[i]->data(), size_t(n) * esize);
    at += n;
  }
  Op* first = mms.front();
  auto constant = [&](HostTensor t, const std::string& name) {
    AttrMap attrs{{"value", std::make_shared<const HostTensor>(std::move(t))}};
    return g.insert_op(first, OpKind::Constant, {}, std::move(attrs), name)->result();
  };
  std::string name;  // "q+k+v" from the products' names (exporters often leave them empty)
  for (const Op* mm : mms) name += (name.empty() ? "" : "+") + (mm->name.empty() ? std::string("matmul") : mm->name);
  Value* joined =
      g.insert_op(first, OpKind::MatMul, {x, constant(std::move(w), name + ".joined_weight")}, {}, name, first->loc)
          ->result();
  if (all_biased)
    joined = g.insert_op(first, OpKind::Add, {joined, constant(std::move(b), name + ".joined_bias")}, {},
                         name + ".bias", first->loc)
                 ->result();
  at = 0;
  const int64_t last = int64_t(x->type.rank()) - 1;
  for (size_t i = 0; i < mms.size(); ++i) {
    const int64_t n = constant_of(mms[i]->operand(1))->shape()[1];
    AttrMap attrs{{"starts", std::vector<int64_t>{at}}, {"ends", std::vector<int64_t>{at + n}},
                  {"axes", std::vector<int64_t>{last}}};
    const std::string part_name = cat(name, ".slice", i);  // "q+k+v.slice0": part 0 of the joined product
    Value* part = g.insert_op(first, OpKind::Slice, {joined}, std::move(attrs), part_name, mms[i]->loc)
                      ->result();
    g.replace_all_uses(all_biased ? adds[i]->result() : mms[i]->result(), part);
    at += n;
  }
  g.remove_dead_ops();
  return true;
}

bool fuse_shared_input_matmuls(Graph& g, uint64_t max_bytes) {
  bool changed_any = false;
  for (bool changed = true; changed;) {
    changed = false;
    // Joinable matmuls by shared activation, in graph order.
    std::map<Value*, std::vector<Op*>> by_input;
    std::vector<Value*> order;
    for (Op* op : g.ops()) {
      if (op->kind != OpKind::MatMul || op->num_operands() != 2 || !joinable(*op, op->operand(0))) continue;
      auto [it, fresh] = by_input.emplace(op->operand(0), std::vector<Op*>{});
      if (fresh) order.push_back(op->operand(0));
      it->second.push_back(op);
    }
    for (Value* x : order)
      if (join(g, x, by_input.at(x), max_bytes)) {
        changed = changed_any = true;
        break;  // the op list changed: collect again
      }
  }
  return changed_any;
}

}  // namespace

Pass fuse_shared_input_matmuls_pass(uint64_t max_result_bytes) {
  return {"fuse-shared-input-matmuls",
          "join products of one activation with several constant matrices into one product and slices",
          [max_result_bytes](Graph& g) { return fuse_shared_input_matmuls(g, max_result_bytes); }};
}

}  // namespace vkc::ir
