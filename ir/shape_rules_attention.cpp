// Shape rule for attention: q [B..., Sq, D], k [B..., Sk, D] (or [B..., D, Sk] with k_transposed),
// v [B..., Sk, Dv], an optional mask broadcastable to [B..., Sq, Sk] (added, or with mask_fill a
// bool one whose true scores become `fill`), and with mask_fill an optional float mask added after
// the fill; result [B..., Sq, Dv].
#include "ir/shape_rules.h"

namespace vkc::ir::rules {

std::vector<TensorType> infer_attention(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  const TensorType& q = operand_type(op, 0);
  for (int i = 1; i < 3; ++i)
    if (operand_type(op, i).dtype != q.dtype)
      fail(op, op.operand_label(i), " has element type ", dtype_name(operand_type(op, i).dtype), ", q has ",
           dtype_name(q.dtype), "; they must match");
  const int64_t rank = q.rank();
  if (rank < 2) fail(op, "q has rank ", rank, ", expected rank >= 2 ([..., Sq, D])");
  for (int i = 1; i < 3; ++i)
    if (operand_type(op, i).rank() != rank)
      fail(op, op.operand_label(i), " has rank ", operand_type(op, i).rank(), ", q has rank ", rank,
           "; they must match");
  const Shape& qs = q.shape;
  const Shape& ks = operand_type(op, 1).shape;
  const Shape& vs = operand_type(op, 2).shape;
  for (size_t d = 0; d + 2 < size_t(rank); ++d)
    for (int i = 1; i < 3; ++i)
      if (operand_type(op, i).shape[d] != qs[d])
        fail(op, op.operand_label(i), " dim ", d, " (batch) is ", operand_type(op, i).shape[d], ", q has ", qs[d],
             "; batch dims must match");
  const bool kt = op.attr_bool("k_transposed");
  const size_t r = size_t(rank);
  const int64_t d_model = qs[r - 1];
  const int64_t k_depth = kt ? ks[r - 2] : ks[r - 1], seq_k = kt ? ks[r - 1] : ks[r - 2];
  if (k_depth != d_model)
    fail(op, "k dim ", kt ? r - 2 : r - 1, " (D) is ", k_depth, ", q dim ", r - 1, " (D) is ", d_model,
         "; they must match");
  if (vs[r - 2] != seq_k)
    fail(op, "v dim ", r - 2, " (Sk) is ", vs[r - 2], ", k has ", seq_k, " keys; they must match");
  Shape scores = qs;
  scores[r - 1] = seq_k;
  if (op.num_operands() >= 4) {
    if (op.attr_bool("mask_fill"))
      require_dtype(op, 3, [](DType t) { return t == DType::boolean; }, "bool (mask_fill: where true, the score is fill)");
    else
      require_dtype(op, 3, is_float, "a float type (an additive mask)");
  }
  if (op.num_operands() == 5) {
    if (!op.attr_bool("mask_fill"))
      fail(op, "has an added_mask (operand 4) but 'mask_fill' is false: a second mask is added after a fill only");
    require_dtype(op, 4, is_float, "a float type (an additive mask)");
  }
  for (int i = 3; i < op.num_operands(); ++i) {
    const Shape& ms = operand_type(op, i).shape;
    if (ms.size() > r) fail(op, op.operand_label(i), " has rank ", ms.size(), ", above the scores' rank ", r);
    for (size_t d = 0; d < ms.size(); ++d) {
      int64_t target = scores[r - ms.size() + d];
      if (ms[d] != 1 && ms[d] != target)
        fail(op, op.operand_label(i), " dim ", d, " is ", ms[d], ", which does not broadcast to scores dim ",
             r - ms.size() + d, " (", target, ")");
    }
  }
  const int64_t causal_offset = op.attr_int("causal_offset");
  if (causal_offset != 0 && !op.attr_bool("causal"))
    fail(op, "attribute 'causal_offset' is ", causal_offset, ", but 'causal' is false (it moves the causal mask only)");
  // Kernels compare key and row indices in 32-bit signed arithmetic.
  if (causal_offset < -(int64_t(1) << 30) || causal_offset > (int64_t(1) << 30))
    fail(op, "attribute 'causal_offset' is ", causal_offset, ", expected within +-2^30");
  Shape out = qs;
  out[r - 1] = vs[r - 1];
  if (!op.attr_bool("with_lse")) return {TensorType{q.dtype, out}};
  Shape lse = qs;
  lse[r - 1] = 1;
  return {TensorType{q.dtype, out}, TensorType{q.dtype, lse}};
}

}  // namespace vkc::ir::rules
