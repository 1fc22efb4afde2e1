// sort (keys plus co-sorted payloads) and topk.
//
// Both use one total order on keys: numbers by value (-0.0 equals 0.0), NaN after every number
// ascending and before every number descending, and a stable sort, so equal keys keep their
// input order (lower index first) in both directions.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

// Keys of one line along the sort axis; integers compare exactly as int64.
struct KeyLine {
  bool integer = false;
  std::vector<double> f;
  std::vector<int64_t> i;

  // Strict "a sorts before b".
  bool before(int64_t a, int64_t b, bool descending) const {
    if (integer) return descending ? i[size_t(a)] > i[size_t(b)] : i[size_t(a)] < i[size_t(b)];
    double x = f[size_t(a)], y = f[size_t(b)];
    bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return descending ? (xn && !yn) : (!xn && yn);
    return descending ? x > y : x < y;
  }
};

// Calls f(base, dim, inner) for each line along `axis`: element j of the line is at base + j*inner.
template <typename F>
void for_each_line(const Shape& shape, size_t axis, F&& f) {
  int64_t dim = shape[axis], inner = 1, outer = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) f(o * dim * inner + in, dim, inner);
}

// The stable order of one line: order[r] is the input position of the r-th element.
std::vector<int64_t> line_order(const HostTensor& keys, int64_t base, int64_t dim, int64_t inner,
                                bool descending) {
  KeyLine line;
  line.integer = !is_float(keys.dtype());
  for (int64_t j = 0; j < dim; ++j) {
    if (line.integer)
      line.i.push_back(keys.get_i64(base + j * inner));
    else
      line.f.push_back(keys.get_f64(base + j * inner));
  }
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return line.before(a, b, descending); });
  return order;
}

}  // namespace

Results eval_sort(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& keys = *in[0];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), keys.rank(), "axis"));
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]->shape() != keys.shape())
      fail(op, op.operand_label(int(i)), " has shape ", shape_str(in[i]->shape()), ", keys has ",
           shape_str(keys.shape()));
  Results out;
  for (size_t i = 0; i < in.size(); ++i) {
    check_result_shape(op, in[i]->shape(), types[i]);
    out.emplace_back(in[i]->dtype(), in[i]->shape());
  }
  bool descending = op.attr_bool("descending");
  for_each_line(keys.shape(), axis, [&](int64_t base, int64_t dim, int64_t inner) {
    std::vector<int64_t> order = line_order(keys, base, dim, inner, descending);
    for (size_t i = 0; i < in.size(); ++i)
      for (int64_t r = 0; r < dim; ++r)
        copy_element(out[i], base + r * inner, *in[i], base + order[size_t(r)] * inner);
  });
  return out;
}

// largest: the first k of the descending order (NaN largest); smallest: the first k of the
// ascending order (NaN still the largest, so it comes last). sorted=false returns the same
// elements in the same order as sorted=true.
Results eval_topk(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), x.rank(), "axis"));
  int64_t k = op.attr_int("k");
  if (k < 0 || k > x.shape()[axis])
    fail(op, "attribute 'k' is ", k, ", expected 0 to ", x.shape()[axis], " (input dim ", axis, ")");
  Shape shape = x.shape();
  shape[axis] = k;
  check_result_shape(op, shape, types[0]);
  check_result_shape(op, shape, types[1]);
  HostTensor values(x.dtype(), shape), indices(types[1].dtype, shape);
  bool descending = op.attr_bool("largest");
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  for_each_line(x.shape(), axis, [&](int64_t base, int64_t dim, int64_t in_stride) {
    std::vector<int64_t> order = line_order(x, base, dim, in_stride, descending);
    // Output lines are k long: same inner offset, outer index rescaled from dim to k.
    int64_t out_base = (base / (dim * inner)) * k * inner + base % inner;
    for (int64_t r = 0; r < k; ++r) {
      copy_element(values, out_base + r * inner, x, base + order[size_t(r)] * in_stride);
      indices.set_i64(out_base + r * inner, order[size_t(r)]);
    }
  });
  return {std::move(values), std::move(indices)};
}

}  // namespace vkc::ir::interp
