// Reference attention: softmax(scale * q k^T + mask) v per batch, in float64 (with mask_fill, the
// bool mask's true scores become `fill`, then an added_mask is added), with the causal
// mask aligned to the last query (key j is hidden from query i when j > i + Sk - Sq + causal_offset).
#include <cmath>
#include <limits>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {

Results eval_attention(const Op& op, const Operands& in, const ResultTypes& types) {
  const Shape& qs = in[0]->shape();
  const size_t r = qs.size();
  const bool kt = op.attr_bool("k_transposed"), causal = op.attr_bool("causal");
  const double scale = op.attr_float("scale");
  const int64_t causal_offset = op.attr_int("causal_offset");
  const int64_t Sq = qs[r - 2], D = qs[r - 1];
  const int64_t Sk = kt ? in[1]->shape()[r - 1] : in[1]->shape()[r - 2];
  const int64_t Dv = in[2]->shape()[r - 1];
  Shape batch(qs.begin(), qs.end() - 2);
  Shape scores = batch;
  scores.push_back(Sq);
  scores.push_back(Sk);
  Shape out_shape = batch;
  out_shape.push_back(Sq);
  out_shape.push_back(Dv);
  check_result_shape(op, out_shape, types[0]);
  // with_lse: each row's log-sum-exp (max + log sum) as a second result [..., Sq, 1], and a row
  // whose every key is hidden is 0 (its lse -inf), so that pieces over blocks of keys combine.
  const bool with_lse = op.attr_bool("with_lse");
  std::vector<double> lse(with_lse ? size_t(shape_numel(batch) * Sq) : 0);
  std::vector<double> q = to_f64(*in[0]), k = to_f64(*in[1]), v = to_f64(*in[2]);
  std::vector<double> mask = in.size() > 3 ? to_f64(*in[3]) : std::vector<double>{};
  std::vector<double> added = in.size() > 4 ? to_f64(*in[4]) : std::vector<double>{};  // after the fill
  const bool mask_fill = op.attr_bool("mask_fill");
  const double fill = op.attr_float("fill");
  std::vector<double> out(size_t(shape_numel(out_shape)));
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> s(static_cast<size_t>(Sk));
  const int64_t batches = shape_numel(batch);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      double m = neg_inf;
      bool nan = false;
      for (int64_t j = 0; j < Sk; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d)
          acc += q[size_t((b * Sq + i) * D + d)] * k[size_t(kt ? (b * D + d) * Sk + j : (b * Sk + j) * D + d)];
        double x = scale * acc;
        if (!mask.empty()) {
          std::vector<int64_t> index = unravel((b * Sq + i) * Sk + j, scores);
          const double mv = mask[size_t(broadcast_offset(in[3]->shape(), scores, index))];
          if (!mask_fill)
            x += mv;
          else if (mv != 0)
            x = fill;
          if (!added.empty()) x += added[size_t(broadcast_offset(in[4]->shape(), scores, index))];
        }
        if (causal && j > i + Sk - Sq + causal_offset) x = neg_inf;
        s[size_t(j)] = x;
        nan |= std::isnan(x);
        if (x > m) m = x;
      }
      // As softmax: a NaN score makes the row NaN; a row with every key hidden is 0/0 = NaN.
      double sum = 0;
      for (int64_t j = 0; j < Sk; ++j) sum += std::exp(s[size_t(j)] - m);
      const bool hidden = m == neg_inf;
      if (with_lse) lse[size_t(b * Sq + i)] = nan ? std::numeric_limits<double>::quiet_NaN() : hidden ? neg_inf : m + std::log(sum);
      for (int64_t e = 0; e < Dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < Sk; ++j) acc += std::exp(s[size_t(j)] - m) / sum * v[size_t((b * Sk + j) * Dv + e)];
        out[size_t((b * Sq + i) * Dv + e)] = nan ? std::numeric_limits<double>::quiet_NaN() : with_lse && hidden ? 0.0 : acc;
      }
    }
  if (with_lse) return {from_f64(types[0], out), from_f64(types[1], lse)};
  return {from_f64(types[0], out)};
}

}  // namespace vkc::ir::interp
