// Reference semantics of the normalizations and reductions group (issue 23): reduce_prod,
// reduce_l1, reduce_l2, reduce_log_sum_exp, layer_norm, group_norm, cumsum. Floats are computed
// in double; integers exactly in int64 (wrapping to the element width on store).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrap_abs(int64_t a) { return a < 0 ? int64_t(0ULL - uint64_t(a)) : a; }

// The output slot (C order over the kept dims) of every input element.
std::vector<int64_t> slots_of(const Shape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> slots(size_t(shape_numel(in)));
  for (int64_t i = 0; i < int64_t(slots.size()); ++i) {
    std::vector<int64_t> index = unravel(i, in);
    int64_t s = 0;
    for (size_t d = 0; d < in.size(); ++d)
      if (!reduced[d]) s = s * in[d] + index[d];
    slots[size_t(i)] = s;
  }
  return slots;
}

// y = (x - mean) / sqrt(var + eps) * scale(r) + bias(r) over `rows` contiguous rows of `row`
// elements; var is the biased (population) variance, computed around the mean (two passes).
template <typename Param>
// `rms`: no mean taken out, y = x / sqrt(mean(x^2) + eps) * scale + bias (RMSNorm).
std::vector<double> normalize_rows(const std::vector<double>& x, int64_t rows, int64_t row, double eps,
                                   Param scale_bias, bool rms = false) {
  std::vector<double> y(x.size());
  for (int64_t s = 0; s < rows; ++s) {
    const double* v = x.data() + s * row;
    double mean = 0, var = 0;
    if (!rms) {
      for (int64_t r = 0; r < row; ++r) mean += v[r];
      mean /= double(row);
    }
    for (int64_t r = 0; r < row; ++r) var += (v[r] - mean) * (v[r] - mean);
    var /= double(row);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t r = 0; r < row; ++r) {
      auto [a, b] = scale_bias(s, r);
      y[size_t(s * row + r)] = (v[r] - mean) * inv * a + b;
    }
  }
  return y;
}

}  // namespace

// Empty reductions give the identity: prod 1, l1 and l2 0, log_sum_exp -inf. log_sum_exp is
// m + log(sum exp(x - m)) with m the row max (stability); a NaN makes it NaN, an infinite m is
// the result itself (+inf, or -inf for a row of -inf).
Results eval_reduce_more(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  std::vector<bool> reduced(size_t(x.rank()), op.attr_ints_or("axes", {}).empty());
  for (int64_t a : op.attr_ints_or("axes", {})) reduced[size_t(normalize_axis(op, a, x.rank(), "axes entry"))] = true;
  Shape out_shape;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (!reduced[d]) out_shape.push_back(x.shape()[d]);
    else if (op.attr_bool("keepdims")) out_shape.push_back(1);
  check_result_shape(op, out_shape, types[0]);
  HostTensor out(types[0].dtype, types[0].shape);
  std::vector<int64_t> slot = slots_of(x.shape(), reduced);
  const size_t slots = size_t(out.numel());
  const OpKind kind = op.kind;
  if (!is_float(x.dtype())) {  // reduce_prod and reduce_l1 (the shape rule refuses the others)
    std::vector<int64_t> acc(slots, kind == OpKind::ReduceProd ? 1 : 0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t& a = acc[size_t(slot[size_t(i)])];
      a = kind == OpKind::ReduceProd ? wrap_mul(a, x.get_i64(i)) : wrap_add(a, wrap_abs(x.get_i64(i)));
    }
    for (size_t s = 0; s < slots; ++s) out.set_i64(int64_t(s), acc[s]);
    return {std::move(out)};
  }
  std::vector<double> acc(slots, kind == OpKind::ReduceProd ? 1.0 : 0.0), m(slots, -INFINITY);
  std::vector<bool> nan(slots, false);
  if (kind == OpKind::ReduceLogSumExp)
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = x.get_f64(i);
      size_t s = size_t(slot[size_t(i)]);
      if (std::isnan(v)) nan[s] = true;
      else m[s] = std::max(m[s], v);
    }
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x.get_f64(i);
    size_t s = size_t(slot[size_t(i)]);
    switch (kind) {
      case OpKind::ReduceProd: acc[s] *= v; break;
      case OpKind::ReduceL1: acc[s] += std::fabs(v); break;
      case OpKind::ReduceL2: acc[s] += v * v; break;
      default:
        if (std::isfinite(m[s])) acc[s] += std::exp(v - m[s]);
        break;
    }
  }
  for (size_t s = 0; s < slots; ++s) {
    double r = acc[s];
    if (kind == OpKind::ReduceL2) r = std::sqrt(r);
    if (kind == OpKind::ReduceLogSumExp) r = nan[s] ? kNaN : std::isfinite(m[s]) ? m[s] + std::log(r) : m[s];
    out.set_f64(int64_t(s), r);
  }
  return {std::move(out)};
}

// Rows are the dims from `axis` on; scale and bias (absent: 1 and 0) have exactly those dims.
Results eval_layer_norm(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  int64_t axis = normalize_axis(op, op.attr_int("axis"), x.rank(), "axis");
  int64_t row = 1;
  for (int64_t d = axis; d < x.rank(); ++d) row *= x.shape()[size_t(d)];
  int64_t rows = row == 0 ? 0 : x.numel() / row;
  std::vector<double> scale = in.size() > 1 ? to_f64(*in[1]) : std::vector<double>(size_t(row), 1.0);
  std::vector<double> bias = in.size() > 2 ? to_f64(*in[2]) : std::vector<double>(size_t(row), 0.0);
  std::vector<double> y = normalize_rows(
      to_f64(x), rows, row, op.attr_float("epsilon"),
      [&](int64_t, int64_t r) { return std::pair{scale[size_t(r)], bias[size_t(r)]}; }, op.attr_bool("rms"));
  return {from_f64(types[0], y)};
}

// A row is one group of one batch entry: C / G channels times the spatial size, contiguous.
Results eval_group_norm(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  int64_t groups = op.attr_int("num_groups"), channels = x.shape()[1];
  int64_t spatial = 1;
  for (int64_t d = 2; d < x.rank(); ++d) spatial *= x.shape()[size_t(d)];
  int64_t per_group = channels / groups, row = per_group * spatial;
  int64_t rows = row == 0 ? 0 : x.numel() / row;
  std::vector<double> scale = to_f64(*in[1]), bias = to_f64(*in[2]);
  std::vector<double> y = normalize_rows(to_f64(x), rows, row, op.attr_float("epsilon"), [&](int64_t s, int64_t r) {
    size_t c = size_t((s % groups) * per_group + r / spatial);
    return std::pair{scale[c], bias[c]};
  });
  return {from_f64(types[0], y)};
}

// Running sums along `axis`: inclusive (y_i = x_0 + ... + x_i) or exclusive (x_0 + ... + x_{i-1},
// 0 first), from the end with `reverse`.
Results eval_cumsum(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), x.rank(), "axis"));
  const bool exclusive = op.attr_bool("exclusive"), reverse = op.attr_bool("reverse");
  int64_t dim = x.shape()[axis], inner = 1;
  for (size_t d = axis + 1; d < size_t(x.rank()); ++d) inner *= x.shape()[d];
  int64_t lines = dim == 0 ? 0 : x.numel() / dim;
  HostTensor out(types[0].dtype, types[0].shape);
  const bool integer = !is_float(x.dtype());
  for (int64_t l = 0; l < lines; ++l) {
    int64_t base = (l / inner) * dim * inner + l % inner;
    int64_t isum = 0;
    double fsum = 0;
    for (int64_t k = 0; k < dim; ++k) {
      int64_t i = base + (reverse ? dim - 1 - k : k) * inner;
      if (integer) {
        int64_t v = x.get_i64(i);
        if (!exclusive) isum = wrap_add(isum, v);
        out.set_i64(i, isum);
        if (exclusive) isum = wrap_add(isum, v);
      } else {
        double v = x.get_f64(i);
        if (!exclusive) fsum += v;
        out.set_f64(i, fsum);
        if (exclusive) fsum += v;
      }
    }
  }
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
