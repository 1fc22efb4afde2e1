// Slices of a transposed tensor become slices of the transpose's operand, each transposed on its
// own: slice(transpose(x, perm), axis a) == transpose(slice(x, axis perm[a]), perm), also where a
// reshape that merges neighbouring dims (or only drops or adds dims of 1: a squeeze) sits between
// the transpose and the slices. Through a merge, a slice of the merged dim is a slice of its
// outermost part where it takes whole runs of the inner parts (step 1, both ends multiples of
// their product).
//
// Why: torchvision's ViT (nn.MultiheadAttention as exported) splits its joined q/k/v projection
// [S, B, 3E] as reshape [1, S, B, 3, E] -> transpose to [3, S, B, 1, E] -> squeeze -> three slices
// of axis 0. The transpose has three readers, so it is stored (ViT-B/16 at batch 8: a 29 MB copy,
// 0.013 ms in each of its 12 layers, H200) and the slices are zero-copy views of the copy. Taken
// apart per slice, each q, k and v is one chain of index maps from the projection's result to the
// attention kernel, which reads through them in place (codegen/strided_view.h composes the chain,
// including the [S, B * H, D] reshape whose merged dims are not contiguous in [S, B, 3E]).
// ShuffleNet's channel shuffle is reshape [N, 2, C/2, H, W] -> transpose to [N, C/2, 2, H, W] ->
// merge to [N, C, H, W] -> two slices of the channels: one half reaches the next 1x1 conv, which
// reads through the chain in place, the other is one gather of its own (codegen dispatch
// formation fuses a chain of index maps into one), where before the whole transpose was stored
// (23 MB per block at batch 32) and the half gathered from it.
//
// Only where it removes the stored transpose and nothing is stored instead: two or more slices,
// nothing else reading the transpose (or the reshape), and either each slice reaching a product
// or attention through index maps alone (the kernels that read a chain of index maps in place, as
// one strided view: ViT), or no slice a contiguous run of the transposed tensor, the slices
// together taking no more elements than it holds (each was gathered from the stored copy, or read
// through a prologue from it, and now is from the transpose's operand: ShuffleNet at batch > 1).
// At batch 1 ShuffleNet's halves are contiguous runs, views of the stored copy that the next conv
// reads plainly; read through the chain instead its 1x1 convs were slower than the transpose they
// save (H200, session 41).
#include <algorithm>
#include <limits>
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

// Whether slice `s` of `in` reads one contiguous run of it: unit steps, every dim before the first
// partly taken one a single index, every dim after it whole.
bool contiguous_run(const Op& s, const Shape& in) {
  for (const SlicedAxis& a : sliced_axes(s, in))
    if (a.step != 1 && s.result()->type.shape[a.axis] > 1) return false;
  const Shape& out = s.result()->type.shape;
  size_t d = 0;
  while (d < out.size() && out[d] == 1) ++d;
  if (d < out.size()) ++d;  // the first dim of more than one index may be partly taken
  for (; d < out.size(); ++d)
    if (out[d] != in[d]) return false;
  return true;
}

// Where an axis of a reshape's result lies in its operand, for a reshape that only merges
// neighbouring dims and drops or adds dims of 1.
struct MergedAxis {
  size_t axis;    // the operand axis of the outermost part of more than 1
  int64_t inner;  // the product of the parts inside it (1: the axis is that operand axis alone)
};

// One entry per axis of `to` (nullopt for a dim of 1), or nullopt when `from` -> `to` splits a
// dim or regroups across dims.
std::optional<std::vector<std::optional<MergedAxis>>> merged_axes(const Shape& from, const Shape& to) {
  std::vector<std::optional<MergedAxis>> out(to.size());
  size_t i = 0;
  for (size_t j = 0; j < to.size(); ++j) {
    if (to[j] == 1) continue;
    while (i < from.size() && from[i] == 1) ++i;
    if (i == from.size()) return std::nullopt;
    const size_t first = i;
    int64_t product = 1;
    while (i < from.size() && product < to[j]) product *= from[i++];
    if (product != to[j]) return std::nullopt;
    out[j] = MergedAxis{first, to[j] / from[first]};
  }
  return out;
}

// A slice of `sliced` moved onto the transpose's operand.
struct MovedSlice {
  std::vector<int64_t> axes, starts, ends, steps;
};

bool rewrite_one(Graph& g, Op* t) {
  Value* x = t->operand(0);
  Value* r = t->result();
  const std::vector<int64_t>& perm = t->attr_ints("perm");
  if (g.is_output(r)) return false;
  // The slices' operand: the transpose's result, or a merge (or squeeze) of it that is its only reader.
  Value* sliced = r;
  std::vector<Op*> users = g.users(r);
  if (users.size() == 1 && is_view(users[0]->kind)) {
    sliced = users[0]->result();
    if (g.is_output(sliced)) return false;
    users = g.users(sliced);
  }
  if (users.size() < 2) return false;
  const auto merged = merged_axes(r->type.shape, sliced->type.shape);
  if (!merged) return false;
  int64_t taken = 0;
  bool all_products = true, all_gathered = true;
  for (const Op* s : users) {
    if (s->kind != OpKind::Slice) return false;
    taken += s->result()->type.numel();
    all_products = all_products && reaches_a_product(g, s->result());
    all_gathered = all_gathered && !contiguous_run(*s, sliced->type.shape);
  }
  if (!all_products && !(all_gathered && taken <= r->type.numel())) return false;

  std::vector<MovedSlice> moved;
  for (const Op* s : users) {
    MovedSlice m;
    for (const SlicedAxis& a : sliced_axes(*s, sliced->type.shape)) {
      const std::optional<MergedAxis>& at = (*merged)[a.axis];
      if (!at) return false;
      const int64_t extent = s->result()->type.shape[a.axis];
      if (at->inner != 1 && (a.step != 1 || a.start % at->inner != 0 || extent % at->inner != 0)) return false;
      const int64_t start = a.start / at->inner;
      m.axes.push_back(perm[at->axis]);
      m.starts.push_back(start);
      m.steps.push_back(a.step);
      // The end one step past the last index read: for a negative step past the front is -1,
      // which a slice reads as an index from the back, so the largest negative end stands for it.
      const int64_t last = start + (extent / at->inner - 1) * a.step;
      const int64_t before_front = std::numeric_limits<int64_t>::min();
      m.ends.push_back(extent == 0 ? start : a.step > 0 ? last + 1 : last == 0 ? before_front : last - 1);
    }
    moved.push_back(std::move(m));
  }

  for (size_t i = 0; i < users.size(); ++i) {
    Op* s = users[i];
    AttrMap attrs{{"starts", moved[i].starts}, {"ends", moved[i].ends}, {"axes", moved[i].axes},
                  {"steps", moved[i].steps}};
    Value* part = g.insert_op(s, OpKind::Slice, {x}, std::move(attrs), s->name, s->loc)->result();
    Value* m = g.insert_op(s, OpKind::Transpose, {part}, {{"perm", perm}}, t->name, t->loc)->result();
    if (m->type.shape != s->result()->type.shape)
      m = g.insert_op(s, OpKind::Reshape, {m}, {{"shape", s->result()->type.shape}}, "", s->loc)->result();
    g.replace_all_uses(s->result(), m);
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
