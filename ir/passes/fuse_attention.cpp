// matmul(softmax(scale * matmul(q, k^T) + mask), v) -> attention(q, k, v, mask), so the scores
// never exist in memory (one tiled online-softmax kernel, codegen/kernels/attention.cpp). The
// mask is added, or a Where puts a constant in the hidden scores' place (masked_fill; the op's
// mask_fill: a decoder's mask of the cache positions after the current token), or both with the
// mask added after the Where (GPT-2's older export: Where(causal, scores, min) + attention_mask,
// the op's added_mask).
//
// The forms exporters emit: torch's scaled_dot_product_attention scales q and k^T each by
// sqrt(scale); HF BERT/GPT-2 divide the scores by sqrt(d); torchvision's ViT scales q; k^T is a
// transpose of the last two dims, a matmul transpose flag, or a tensor already laid out [.., D, Sk]
// (k_transposed). Every value between q/k/v and the result must have no other user; scalar
// factors anywhere on the chain multiply into `scale`.
#include <cmath>

#include "ir/passes.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

bool single_use(const Graph& g, const Value* v) { return g.users(v).size() == 1 && !g.is_output(v); }

// The value of a one-element float constant, or NaN.
double scalar_constant(const Value* v) {
  if (!v->producer || v->producer->kind != OpKind::Constant || v->type.numel() != 1 || !is_float(v->type.dtype))
    return std::nan("");
  return v->producer->attr_tensor("value")->get_f64(0);
}

// Peels mul/div by scalar constants (single-use links only) off `v`, folding them into `scale`.
Value* peel_scale(const Graph& g, Value* v, double& scale) {
  for (;;) {
    Op* p = v->producer;
    if (!p || !single_use(g, v) || (p->kind != OpKind::Mul && p->kind != OpKind::Div)) return v;
    if (p->result()->type.shape != p->operand(0)->type.shape && p->result()->type.shape != p->operand(1)->type.shape)
      return v;
    double c0 = scalar_constant(p->operand(0)), c1 = scalar_constant(p->operand(1));
    if (!std::isnan(c1) && p->operand(0)->type.shape == v->type.shape) {
      scale *= p->kind == OpKind::Mul ? c1 : 1.0 / c1;
      v = p->operand(0);
    } else if (!std::isnan(c0) && p->kind == OpKind::Mul && p->operand(1)->type.shape == v->type.shape) {
      scale *= c0;
      v = p->operand(1);
    } else {
      return v;
    }
  }
}

bool swaps_last_two(const Op& t) {
  const std::vector<int64_t>& perm = t.attr_ints("perm");
  size_t r = perm.size();
  if (r < 2 || perm[r - 1] != int64_t(r - 2) || perm[r - 2] != int64_t(r - 1)) return false;
  for (size_t d = 0; d + 2 < r; ++d)
    if (perm[d] != int64_t(d)) return false;
  return true;
}

bool is_plain_matmul(const Op* op) {
  return op && (op->kind == OpKind::MatMul || op->kind == OpKind::BatchMatMul) && !op->attr_bool("transpose_a");
}

struct Match {
  Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  bool k_transposed = false;
  double scale = 1.0;
  // A Where mask (PyTorch's masked_fill): the bool `hidden` puts `fill` in a score's place where it
  // is true (where it is false with `hidden_when_false`: the scores in the Where's true branch).
  Value* hidden = nullptr;
  bool hidden_when_false = false;
  double fill = 0;
  // The added mask lies outside the Where (added after the fill), where the op can take both.
  bool mask_after_fill = false;
};

// select(hidden, fill, s) or select(keep, s, fill), fill a scalar constant: peeled off `s` into
// `m`. The scale factors peeled so far lie outside it, so they scale the fill too.
Value* peel_where_mask(const Graph& g, Value* s, Match& m) {
  Op* sel = s->producer;
  if (!sel || sel->kind != OpKind::Select || !single_use(g, s) || m.hidden) return s;
  for (int branch = 1; branch <= 2; ++branch) {
    Value* scores = sel->operand(branch);
    const double fill = scalar_constant(sel->operand(3 - branch));
    if (scores->type.shape != s->type.shape || std::isnan(fill) || sel->operand(0)->type.dtype != DType::boolean)
      continue;
    m.hidden = sel->operand(0);
    m.hidden_when_false = branch == 1;
    m.fill = fill * m.scale;
    return scores;
  }
  return s;
}

// The scores side: [mask +] scalar factors around matmul(q, k^T).
bool match_scores(const Graph& g, Value* x, Match& m) {
  Value* s = peel_scale(g, peel_where_mask(g, peel_scale(g, x, m.scale), m), m.scale);
  Op* add = s->producer;
  // A factor peeled outside the add would scale the mask too, which the op does not: unfused.
  if (add && add->kind == OpKind::Add && single_use(g, s) && m.scale == 1.0) {
    for (int i = 0; i < 2; ++i) {
      Value* chain = add->operand(i);
      Value* mask = add->operand(1 - i);
      if (chain->type.shape != s->type.shape || !is_float(mask->type.dtype)) continue;
      Match t = m;
      Value* inner = peel_scale(g, chain, t.scale);
      // A Where inside the add: the fill first, then the mask added to every score.
      if (!t.hidden) inner = peel_scale(g, peel_where_mask(g, inner, t), t.scale);
      if (!is_plain_matmul(inner->producer) || !single_use(g, inner)) continue;
      t.mask = mask;
      t.mask_after_fill = t.hidden && !m.hidden;
      m = t;
      s = inner;
      break;
    }
  }
  Op* qk = s->producer;
  if (!is_plain_matmul(qk) || !single_use(g, s)) return false;
  m.q = peel_scale(g, qk->operand(0), m.scale);
  Value* b = qk->operand(1);
  if (qk->attr_bool("transpose_b")) {
    m.k = peel_scale(g, b, m.scale);
    return true;
  }
  b = peel_scale(g, b, m.scale);
  if (b->producer && b->producer->kind == OpKind::Transpose && swaps_last_two(*b->producer) && single_use(g, b)) {
    m.k = peel_scale(g, b->producer->operand(0), m.scale);
    return true;
  }
  m.k = b;
  m.k_transposed = true;
  return true;
}

bool fuse(Graph& g, const AttentionFits& fits) {
  bool changed = false, made_masks = false;
  for (Op* sm : g.ops()) {
    if (sm->kind != OpKind::Softmax) continue;
    const int64_t rank = sm->result()->type.rank();
    if (rank < 2 || (sm->attr_int("axis") != -1 && sm->attr_int("axis") != rank - 1)) continue;
    if (!single_use(g, sm->result())) continue;
    Op* pv = g.users(sm->result())[0];
    if (!is_plain_matmul(pv) || pv->operand(0) != sm->result() || pv->operand(1) == sm->result() ||
        pv->attr_bool("transpose_b"))
      continue;
    Match m;
    m.v = pv->operand(1);
    if (!match_scores(g, sm->operand(0), m)) continue;
    // Same rank and batch dims for q, k, v (a broadcast batch stays with the matmuls).
    const Shape& qs = m.q->type.shape;
    bool same_batch = m.k->type.rank() == rank && m.v->type.rank() == rank && qs.size() == size_t(rank);
    for (size_t d = 0; same_batch && d + 2 < size_t(rank); ++d)
      same_batch = m.k->type.shape[d] == qs[d] && m.v->type.shape[d] == qs[d];
    if (!same_batch || m.q->type.dtype != m.k->type.dtype || m.q->type.dtype != m.v->type.dtype) continue;
    // A mask added before a Where's fill is not the op's order (the fill first, then added_mask).
    if (m.hidden && m.mask && !m.mask_after_fill) continue;
    Value* added = m.hidden ? m.mask : nullptr;
    if (m.hidden) m.mask = m.hidden;
    if ((m.mask && m.mask->type.rank() > rank) || (added && added->type.rank() > rank)) continue;
    if (m.hidden && m.hidden_when_false) {
      // The hidden keys are where the condition is false: its negation, or what it negates.
      Op* negated = m.hidden->producer;
      if (negated && negated->kind == OpKind::Not) {
        m.mask = negated->operand(0);
      } else if (negated && negated->kind == OpKind::Constant) {
        // A constant keep mask (GPT-2's causal buffer): negated here, after constant folding ran.
        HostTensor hide(*negated->attr_tensor("value"));
        for (int64_t i = 0; i < hide.numel(); ++i) hide.set_f64(i, hide.get_f64(i) == 0 ? 1 : 0);
        m.mask = g.insert_op(pv, OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(hide))}},
                             m.hidden->name.empty() ? "" : m.hidden->name + ".hidden")
                     ->result();
        made_masks = true;
      } else {
        m.mask = g.insert_op(pv, OpKind::Not, {m.hidden})->result();
        made_masks = true;  // dead if the attention is not made after all: removed below
      }
    }
    std::vector<Value*> operands{m.q, m.k, m.v};
    if (m.mask) operands.push_back(m.mask);
    if (added) operands.push_back(added);
    Op* att = nullptr;
    try {
      att = g.insert_op(pv, OpKind::Attention, operands,
                        {{"scale", m.scale}, {"causal", false}, {"k_transposed", m.k_transposed},
                         {"mask_fill", m.hidden != nullptr}, {"fill", m.fill}},
                        sm->name, sm->loc);
    } catch (const Error&) {
      continue;  // shapes the attention op does not take (a mask of another shape): stays unfused
    }
    if (att->result()->type != pv->result()->type || (fits && !fits(*att))) {
      g.erase_op(att);  // the unfused ops stay: never a failure
      continue;
    }
    g.replace_all_uses(pv->result(), att->result());
    changed = true;
  }
  if (changed || made_masks) g.remove_dead_ops();
  return changed;
}

}  // namespace

Pass fuse_attention_pass(AttentionFits fits) {
  return {"fuse-attention", "matmul(softmax(scale * q k^T + mask), v) becomes one attention op",
          [fits](Graph& g) { return fuse(g, fits); }};
}

}  // namespace vkc::ir
