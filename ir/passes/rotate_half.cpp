// Rotary position embeddings' rotate_half, concat(-x[..., h:], x[..., :h]) along the last axis as
// exporters write it (LLaMA, Mistral, Qwen, GPT-NeoX), becomes
//   reshape(reverse(reshape(x, [..., 2, h]), axis -2), [..., 2h]) * [-1 x h, +1 x h]:
// the two halves swapped by an index map, then signed.
//
// Why: the concat of a negated slice and a slice is four data-movement dispatches and a negation
// per rotated tensor (q and k of every layer) that no kernel can absorb, since concat reads two
// operands. Reverse and reshape are index maps and the signed product is elementwise math, so the
// whole rotary step, x * cos + rotate_half(x) * sin, joins the loads of the kernel that reads it
// (attention's q and k): a LLaMA-style layer loses 8 dispatches of its 22.
#include <algorithm>
#include <optional>

#include "ir/passes.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

// The one slice of `v`'s producer along the last axis with step 1, as [start, end) clamped to the
// dim; nullopt for anything else.
std::optional<std::pair<int64_t, int64_t>> last_axis_slice(const Value* v, const Value*& source) {
  const Op* s = v->producer;
  if (s == nullptr || s->kind != OpKind::Slice) return std::nullopt;
  const std::vector<int64_t>& starts = s->attr_ints("starts");
  const std::vector<int64_t>& ends = s->attr_ints("ends");
  if (starts.size() != 1 || ends.size() != 1) return std::nullopt;
  const int64_t rank = s->operand(0)->type.rank();
  std::vector<int64_t> axes = s->attr_ints_or("axes", std::vector<int64_t>{0});
  std::vector<int64_t> steps = s->attr_ints_or("steps", std::vector<int64_t>{1});
  int64_t axis = axes[0] < 0 ? axes[0] + rank : axes[0];
  if (axis != rank - 1 || steps[0] != 1) return std::nullopt;
  const int64_t dim = s->operand(0)->type.shape.back();
  auto clamp = [&](int64_t x) { return std::clamp<int64_t>(x < 0 ? x + dim : x, 0, dim); };
  source = s->operand(0);
  return std::make_pair(clamp(starts[0]), clamp(ends[0]));
}

bool rewrite_one(Graph& g, Op* concat) {
  if (concat->num_operands() != 2 || !is_float(concat->result()->type.dtype)) return false;
  const int64_t rank = concat->result()->type.rank();
  int64_t axis = concat->attr_int("axis");
  if (axis < 0) axis += rank;
  if (rank < 1 || axis != rank - 1) return false;
  const Op* neg = concat->operand(0)->producer;
  if (neg == nullptr || neg->kind != OpKind::Neg) return false;
  const Value *upper_src = nullptr, *lower_src = nullptr;
  auto upper = last_axis_slice(neg->operand(0), upper_src);
  auto lower = last_axis_slice(concat->operand(1), lower_src);
  const Shape& shape = concat->result()->type.shape;
  const int64_t d = shape.back();
  if (!upper || !lower || upper_src != lower_src || d % 2 != 0 || upper_src->type.shape != shape) return false;
  const int64_t h = d / 2;
  if (*upper != std::make_pair(h, d) || *lower != std::make_pair(int64_t(0), h)) return false;

  Value* x = const_cast<Value*>(upper_src);
  Shape halves = shape;
  halves.back() = h;
  halves.insert(halves.end() - 1, 2);
  Value* split = g.insert_op(concat, OpKind::Reshape, {x}, {{"shape", halves}}, concat->name + ".halves", concat->loc)
                     ->result();
  Value* swapped = g.insert_op(concat, OpKind::Reverse, {split}, {{"axes", std::vector<int64_t>{rank - 1}}},
                               concat->name + ".swap", concat->loc)
                       ->result();
  Value* joined = g.insert_op(concat, OpKind::Reshape, {swapped}, {{"shape", shape}}, concat->name + ".joined",
                              concat->loc)
                      ->result();
  HostTensor sign(concat->result()->type.dtype, {d});
  for (int64_t i = 0; i < d; ++i) sign.set_f64(i, i < h ? -1.0 : 1.0);
  Value* s = g.insert_op(concat, OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(sign))}},
                         concat->name + ".sign")
                 ->result();
  Value* rotated =
      g.insert_op(concat, OpKind::Mul, {joined, s}, {}, concat->name + ".rotate_half", concat->loc)->result();
  g.replace_all_uses(concat->result(), rotated);
  g.remove_dead_ops();
  return true;
}

bool rotate_half(Graph& g) { return rewrite_each(g, OpKind::Concat, rewrite_one); }

}  // namespace

Pass rotate_half_pass() {
  return {"rotate-half", "concat(-x[..., h:], x[..., :h]) -> the halves swapped by an index map, then signed",
          rotate_half};
}

}  // namespace vkc::ir
