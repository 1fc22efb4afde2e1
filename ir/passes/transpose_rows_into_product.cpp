// A transpose of a product's rows moves onto its lhs: transpose(reshape(A @ W + b), perm) with the
// last axis staying last is reshape(reshape(transpose(A's rows, perm)) @ W + b), since a product
// computes each row from the same row of A. Only where A comes from an attention result through
// index maps, which the attention kernel then stores in the transposed order (codegen/fusion.h,
// result_store).
//
// Why: torchvision's ViT runs attention sequence first: its output projection computes the
// [S * B, E] rows of heads transposed to [S, B, H, D], and a transpose to [B, S, E] follows before
// the residual add. Moved onto the lhs, the two transposes become one that the attention kernel
// applies as it stores ([B, H, S, D] -> [B, S, H, D]); the projection reads its rows contiguous,
// and the residual add joins its epilogue: two dispatches fewer per layer.
#include <algorithm>
#include <numeric>

#include "ir/passes.h"

namespace vkc::ir {
namespace {

// A reshape view (reshape, expand_shape, collapse_shape): the same bytes under another shape.
bool is_view(const Op* op) { return op != nullptr && op_schema(op->kind).category == OpCategory::Reshape; }

bool single_use(const Graph& g, const Value* v) { return g.users(v).size() == 1 && !g.is_output(v); }

// Whether `v` is an attention result seen through views and transposes that each have one reader.
bool from_attention(const Graph& g, const Value* v) {
  for (int depth = 0; depth < 16 && v->producer != nullptr; ++depth) {
    const Op* p = v->producer;
    if (p->kind == OpKind::Attention) return true;
    if (!is_view(p) && p->kind != OpKind::Transpose) return false;
    v = p->operand(0);
    if (!single_use(g, v)) return false;
  }
  return false;
}

bool rewrite_one(Graph& g, Op* t) {
  const std::vector<int64_t>& perm = t->attr_ints("perm");
  const int64_t rank = int64_t(perm.size());
  if (rank < 2 || perm.back() != rank - 1) return false;
  Value* v = t->operand(0);
  if (!single_use(g, v)) return false;
  Value* pv = is_view(v->producer) ? v->producer->operand(0) : v;
  if (pv != v && !single_use(g, pv)) return false;
  Op* p = pv->producer;
  if (p == nullptr || (p->kind != OpKind::MatMul && p->kind != OpKind::Gemm)) return false;
  if (p->attr_bool("transpose_a")) return false;
  Value* a = p->operand(0);
  if (a->type.rank() != 2 || p->operand(1)->type.rank() != 2 || pv->type.rank() != 2) return false;
  const int64_t m = a->type.shape[0], k = a->type.shape[1], n = pv->type.shape[1];
  // Gemm's bias must not vary along the rows (a vector of N, or broadcast from one row).
  if (p->kind == OpKind::Gemm && p->num_operands() > 2) {
    const Shape& c = p->operand(2)->type.shape;
    if (!(c.size() <= 1 || (c.size() == 2 && c[0] == 1))) return false;
  }
  const Shape& vs = v->type.shape;
  const Shape rows(vs.begin(), vs.end() - 1);
  if (vs.back() != n || std::accumulate(rows.begin(), rows.end(), int64_t(1), std::multiplies<>()) != m) return false;
  if (!from_attention(g, a)) return false;

  // The rows as dims of A's own source where a view split them that way ([S, B, H, D] for
  // [S * B, H * D]), else A reshaped to them.
  Value* x = nullptr;
  std::vector<int64_t> xperm(perm.begin(), perm.end() - 1);
  if (is_view(a->producer)) {
    Value* src = a->producer->operand(0);
    const Shape& ss = src->type.shape;
    if (ss.size() > rows.size() && std::equal(rows.begin(), rows.end(), ss.begin())) {
      x = src;
      for (size_t d = rows.size(); d < ss.size(); ++d) xperm.push_back(int64_t(d));
    }
  }
  if (x == nullptr) {
    Shape split = rows;
    split.push_back(k);
    x = g.insert_op(p, OpKind::Reshape, {a}, {{"shape", split}}, "", p->loc)->result();
    xperm.push_back(rank - 1);
  }
  Value* moved = g.insert_op(p, OpKind::Transpose, {x}, {{"perm", xperm}}, t->name, t->loc)->result();
  Value* lhs = g.insert_op(p, OpKind::Reshape, {moved}, {{"shape", Shape{m, k}}}, "", p->loc)->result();
  std::vector<Value*> operands = p->operands;
  operands[0] = lhs;
  Value* product = g.insert_op(p, p->kind, operands, p->attrs, p->name, p->loc)->result();
  Value* y = g.insert_op(t, OpKind::Reshape, {product}, {{"shape", t->result()->type.shape}}, "", t->loc)->result();
  g.replace_all_uses(t->result(), y);
  g.remove_dead_ops();
  return true;
}

bool transpose_rows_into_product(Graph& g) { return rewrite_each(g, OpKind::Transpose, rewrite_one); }

}  // namespace

Pass transpose_rows_into_product_pass() {
  return {"transpose-rows-into-product",
          "transpose(A @ W) over its rows -> transpose(A) @ W, where A comes from attention",
          transpose_rows_into_product};
}

}  // namespace vkc::ir
