// Slices of a transposed tensor become slices of the transpose's operand, each transposed on its
// own: slice(transpose(x, perm), axis a) == transpose(slice(x, axis perm[a]), perm), also where a
// reshape that only drops or adds dims of 1 (a squeeze) sits between the transpose and the slices.
//
// Why: torchvision's ViT (nn.MultiheadAttention as exported) splits its joined q/k/v projection
// [S, B, 3E] as reshape [1, S, B, 3, E] -> transpose to [3, S, B, 1, E] -> squeeze -> three slices
// of axis 0. The transpose has three readers, so it is stored (ViT-B/16 at batch 8: a 29 MB copy,
// 0.013 ms in each of its 12 layers, H200) and the slices are zero-copy views of the copy. Taken
// apart per slice, each q, k and v is one chain of index maps from the projection's result to the
// attention kernel, which reads through them in place (codegen/strided_view.h composes the chain,
// including the [S, B * H, D] reshape whose merged dims are not contiguous in [S, B, 3E]).
//
// Only where it removes the stored transpose and nothing is stored instead: two or more slices,
// nothing else reading the transpose (or the squeeze), and each slice's result reaching a product
// or attention through index maps alone, which are the kernels that read index maps in place.
#include <algorithm>
#include <optional>

#include "ir/passes.h"
#include "ir/slice_geometry.h"

namespace vkc::ir {
namespace {

// Reshape views (reshape, expand_shape, collapse_shape): the same bytes under another shape.
bool is_view(OpKind k) { return op_schema(k).category == OpCategory::Reshape; }

bool is_index_map(OpKind k) {
  return is_view(k) || k == OpKind::Transpose || k == OpKind::Slice || k == OpKind::Broadcast || k == OpKind::Reverse;
}

// Whether `v` reaches a matmul, gemm or attention operand through index maps that each have that
// one reader.
bool reaches_a_product(const Graph& g, const Value* v) {
  for (int depth = 0; depth < 16; ++depth) {
    if (g.is_output(v)) return false;
    std::vector<Op*> users = g.users(v);
    if (users.size() != 1) return false;
    const Op* u = users[0];
    if (u->kind == OpKind::MatMul || u->kind == OpKind::BatchMatMul || u->kind == OpKind::Gemm ||
        u->kind == OpKind::Attention)
      return true;
    if (!is_index_map(u->kind)) return false;
    v = u->result();
  }
  return false;
}

// The axes of `shape` whose extent is not 1.
std::vector<size_t> wide_axes(const Shape& shape) {
  std::vector<size_t> a;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) a.push_back(d);
  return a;
}

bool rewrite_one(Graph& g, Op* t) {
  Value* x = t->operand(0);
  Value* r = t->result();
  const std::vector<int64_t>& perm = t->attr_ints("perm");
  if (g.is_output(r)) return false;
  // The slices' operand: the transpose's result, or a squeeze of it that is its only reader.
  Value* sliced = r;
  std::vector<Op*> users = g.users(r);
  if (users.size() == 1 && is_view(users[0]->kind)) {
    const Value* rr = users[0]->result();
    std::vector<int64_t> a, b;
    for (size_t d : wide_axes(r->type.shape)) a.push_back(r->type.shape[d]);
    for (size_t d : wide_axes(rr->type.shape)) b.push_back(rr->type.shape[d]);
    if (a != b || g.is_output(rr)) return false;
    sliced = users[0]->result();
    users = g.users(sliced);
  }
  if (users.size() < 2) return false;
  for (const Op* s : users)
    if (s->kind != OpKind::Slice || !reaches_a_product(g, s->result())) return false;
  // Each of `sliced`'s axes as an axis of the transpose's result (nullopt for a dim of 1 the
  // squeeze added), then of x.
  const std::vector<size_t> from = wide_axes(sliced->type.shape), to = wide_axes(r->type.shape);
  auto axis_of_x = [&](size_t a) -> std::optional<int64_t> {
    if (sliced == r) return perm[a];
    auto it = std::find(from.begin(), from.end(), a);
    if (it == from.end()) return std::nullopt;
    return perm[to[size_t(it - from.begin())]];
  };
  for (const Op* s : users)
    for (const SlicedAxis& a : sliced_axes(*s, sliced->type.shape))
      if (!axis_of_x(a.axis)) return false;

  for (Op* s : users) {
    std::vector<int64_t> axes;
    for (const SlicedAxis& a : sliced_axes(*s, sliced->type.shape)) axes.push_back(*axis_of_x(a.axis));
    AttrMap attrs{{"starts", s->attr_ints("starts")}, {"ends", s->attr_ints("ends")}, {"axes", axes}};
    if (s->has_attr("steps")) attrs["steps"] = s->attr_ints("steps");
    Value* part = g.insert_op(s, OpKind::Slice, {x}, std::move(attrs), s->name, s->loc)->result();
    Value* moved = g.insert_op(s, OpKind::Transpose, {part}, {{"perm", perm}}, t->name, t->loc)->result();
    if (moved->type.shape != s->result()->type.shape)
      moved = g.insert_op(s, OpKind::Reshape, {moved}, {{"shape", s->result()->type.shape}}, "", s->loc)->result();
    g.replace_all_uses(s->result(), moved);
  }
  g.remove_dead_ops();
  return true;
}

bool slice_before_transpose(Graph& g) { return rewrite_each(g, OpKind::Transpose, rewrite_one); }

}  // namespace

Pass slice_before_transpose_pass() {
  return {"slice-before-transpose",
          "slices of a transposed tensor -> slices of its operand, each transposed, where products read them",
          slice_before_transpose};
}

}  // namespace vkc::ir
