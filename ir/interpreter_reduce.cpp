// Reductions (reduce_sum/mean/max/min), argmax/argmin, softmax and log_softmax.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A tensor split around a set of reduced axes: every element belongs to one output slot (the
// index with the reduced dims dropped) and the slots are visited in C order.
struct Reduction {
  Shape kept_shape;  // input shape with reduced dims set to 1 (C order of the output slots)
  std::vector<bool> reduced;
  int64_t slot(const Shape& in_shape, const std::vector<int64_t>& index) const {
    int64_t s = 0;
    for (size_t d = 0; d < in_shape.size(); ++d) s = s * kept_shape[d] + (reduced[d] ? 0 : index[d]);
    return s;
  }
};

Reduction make_reduction(const Shape& in, const std::vector<int64_t>& axes) {
  Reduction r;
  r.reduced.assign(in.size(), false);
  for (int64_t a : axes) r.reduced[size_t(a)] = true;
  r.kept_shape = in;
  for (size_t d = 0; d < in.size(); ++d)
    if (r.reduced[d]) r.kept_shape[d] = 1;
  return r;
}

Shape reduced_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d)
    if (!reduced[d])
      out.push_back(in[d]);
    else if (keepdims)
      out.push_back(1);
  return out;
}

}  // namespace

// Floats accumulate in double; integer sums are exact int64 (wrapping to the element width on
// store); integer means truncate toward zero. Empty reductions give the identity: sum 0, max -inf
// (ints: the type's lowest), min +inf (highest), mean 0/0 = NaN (ints: 0). max/min propagate NaN.
Results eval_reduce(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  std::vector<int64_t> axes;
  for (int64_t a : op.attr_ints_or("axes", {})) axes.push_back(normalize_axis(op, a, x.rank(), "axes entry"));
  if (axes.empty())
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
  Reduction r = make_reduction(x.shape(), axes);
  check_result_shape(op, reduced_shape(x.shape(), r.reduced, op.attr_bool("keepdims")), types[0]);
  HostTensor out(types[0].dtype, types[0].shape);
  int64_t slots = out.numel(), count = slots == 0 ? 0 : x.numel() / slots;
  const bool integer = !is_float(x.dtype());
  const OpKind kind = op.kind;
  if (integer) {
    int64_t init = kind == OpKind::ReduceMax   ? std::numeric_limits<int64_t>::lowest()
                   : kind == OpKind::ReduceMin ? std::numeric_limits<int64_t>::max()
                                               : 0;
    std::vector<int64_t> acc(size_t(slots), init);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t& a = acc[size_t(r.slot(x.shape(), unravel(i, x.shape())))];
      int64_t v = x.get_i64(i);
      if (kind == OpKind::ReduceMax) a = std::max(a, v);
      else if (kind == OpKind::ReduceMin) a = std::min(a, v);
      else a = int64_t(uint64_t(a) + uint64_t(v));
    }
    for (int64_t s = 0; s < slots; ++s) {
      int64_t v = acc[size_t(s)];
      if (kind == OpKind::ReduceMean) v = count == 0 ? 0 : v / count;
      if ((kind == OpKind::ReduceMax || kind == OpKind::ReduceMin) && count == 0)
        out.set_f64(s, kind == OpKind::ReduceMax ? -INFINITY : INFINITY);  // saturates to the type
      else
        out.set_i64(s, v);
    }
    return {std::move(out)};
  }
  double init = kind == OpKind::ReduceMax ? -INFINITY : kind == OpKind::ReduceMin ? INFINITY : 0.0;
  std::vector<double> acc(size_t(slots), init);
  for (int64_t i = 0; i < x.numel(); ++i) {
    double& a = acc[size_t(r.slot(x.shape(), unravel(i, x.shape())))];
    double v = x.get_f64(i);
    if (kind == OpKind::ReduceMax) a = (std::isnan(a) || std::isnan(v)) ? kNaN : std::max(a, v);
    else if (kind == OpKind::ReduceMin) a = (std::isnan(a) || std::isnan(v)) ? kNaN : std::min(a, v);
    else a += v;
  }
  for (int64_t s = 0; s < slots; ++s)
    out.set_f64(s, kind == OpKind::ReduceMean ? acc[size_t(s)] / double(count) : acc[size_t(s)]);
  return {std::move(out)};
}

// First index of the extreme value along axis (select_last_index: the last). NaN is the extreme
// for both argmax and argmin (numpy): the first (or last) NaN wins.
Results eval_arg_reduce(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), x.rank(), "axis"));
  std::vector<bool> reduced(size_t(x.rank()), false);
  reduced[axis] = true;
  check_result_shape(op, reduced_shape(x.shape(), reduced, op.attr_bool("keepdims")), types[0]);
  if (x.shape()[axis] < 1) fail(op, "input dim ", axis, " (axis) is 0, there is no index to return");
  const bool is_max = op.kind == OpKind::ArgMax, last = op.attr_bool("select_last_index");
  const bool integer = !is_float(x.dtype());
  int64_t dim = x.shape()[axis], inner = 1;
  for (size_t d = axis + 1; d < size_t(x.rank()); ++d) inner *= x.shape()[d];
  HostTensor out(types[0].dtype, types[0].shape);
  for (int64_t s = 0; s < out.numel(); ++s) {
    int64_t base = (s / inner) * dim * inner + s % inner;
    int64_t best = 0;
    // "Strictly better" keeps the first; "at least as good" moves on to the last.
    auto better = [&](int64_t i, int64_t j) {  // is element i better than element j?
      int64_t oi = base + i * inner, oj = base + j * inner;
      if (integer) {
        int64_t a = x.get_i64(oi), b = x.get_i64(oj);
        return last ? (is_max ? a >= b : a <= b) : (is_max ? a > b : a < b);
      }
      double a = x.get_f64(oi), b = x.get_f64(oj);
      if (std::isnan(b)) return last && std::isnan(a);
      if (std::isnan(a)) return true;
      return last ? (is_max ? a >= b : a <= b) : (is_max ? a > b : a < b);
    };
    for (int64_t i = 1; i < dim; ++i)
      if (better(i, best)) best = i;
    out.set_i64(s, best);
  }
  return {std::move(out)};
}

// softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), m = max_j x_j (stability; mathematically a
// no-op). log_softmax(x)_i = x_i - m - log(sum_j exp(x_j - m)). A NaN in a row makes the row NaN;
// +inf makes it NaN too (inf - inf).
Results eval_softmax(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), x.rank(), "axis"));
  int64_t dim = x.shape()[axis], inner = 1;
  for (size_t d = axis + 1; d < size_t(x.rank()); ++d) inner *= x.shape()[d];
  std::vector<double> v = to_f64(x), y(v.size());
  int64_t rows = dim == 0 ? 0 : x.numel() / dim;
  for (int64_t s = 0; s < rows; ++s) {
    int64_t base = (s / inner) * dim * inner + s % inner;
    auto at = [&](int64_t i) { return size_t(base + i * inner); };
    double m = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < dim; ++i) {
      nan = nan || std::isnan(v[at(i)]);
      m = std::max(m, v[at(i)]);
    }
    double sum = 0;
    for (int64_t i = 0; i < dim; ++i) sum += std::exp(v[at(i)] - m);
    for (int64_t i = 0; i < dim; ++i) {
      double r = op.kind == OpKind::Softmax ? std::exp(v[at(i)] - m) / sum : v[at(i)] - m - std::log(sum);
      y[at(i)] = nan ? kNaN : r;
    }
  }
  return {from_f64(types[0], y)};
}

}  // namespace vkc::ir::interp
