// Reference semantics of the indexing ops (docs/ops.md, "Indexing"). Indices are i32 or i64
// values known only at run time, so every index is resolved here the way the kernels resolve it:
// negative values wrap once, anything else out of range gives the documented defined result
// (a gather reads zeros, a scatter skips the update) instead of touching memory out of bounds.
// Scatter updates apply in C order of the indices; with reduction 'none' the last write to an
// element wins, with a reduction each step rounds to the element type (as the kernels do).
#include <cmath>
#include <limits>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= s[d];
  return n;
}

// One step of a scatter reduction: out[t] = out[t] (op) updates[u].
void combine(const std::string& reduction, HostTensor& out, int64_t t, const HostTensor& updates, int64_t u) {
  if (reduction == "none") return copy_element(out, t, updates, u);
  if (is_float(out.dtype())) {
    double a = out.get_f64(t), b = updates.get_f64(u), r;
    if (reduction == "add") r = a + b;
    else if (reduction == "mul") r = a * b;
    else if (std::isnan(a) || std::isnan(b)) r = std::numeric_limits<double>::quiet_NaN();
    else r = reduction == "max" ? std::max(a, b) : std::min(a, b);
    return out.set_f64(t, r);
  }
  int64_t a = out.get_i64(t), b = updates.get_i64(u), r;
  if (reduction == "add") r = int64_t(uint64_t(a) + uint64_t(b));
  else if (reduction == "mul") r = int64_t(uint64_t(a) * uint64_t(b));
  else r = reduction == "max" ? std::max(a, b) : std::min(a, b);
  out.set_i64(t, r);  // wraps to the element width, like the kernels' integer arithmetic
}

}  // namespace

int64_t resolve_index(int64_t v, int64_t n) {
  if (v >= 0 && v < n) return v;
  if (v < 0 && v >= -n) return v + n;
  return -1;
}

// out[o, j..., c] = data[o, indices[j...], c] (o: dims before the axis, c: dims after it).
Results eval_gather(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& data = *in[0];
  const HostTensor& idx = *in[1];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), data.rank(), "axis"));
  Shape shape(data.shape().begin(), data.shape().begin() + ptrdiff_t(axis));
  shape.insert(shape.end(), idx.shape().begin(), idx.shape().end());
  shape.insert(shape.end(), data.shape().begin() + ptrdiff_t(axis) + 1, data.shape().end());
  check_result_shape(op, shape, types[0]);
  HostTensor out(data.dtype(), shape);  // zero-initialized: what out-of-range indices read
  int64_t outer = product(data.shape(), 0, axis), dim = data.shape()[axis];
  int64_t inner = product(data.shape(), axis + 1, data.shape().size()), count = idx.numel();
  for (int64_t j = 0; j < count; ++j) {
    int64_t p = resolve_index(idx.get_i64(j), dim);
    if (p < 0) continue;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < inner; ++c)
        copy_element(out, (o * count + j) * inner + c, data, (o * dim + p) * inner + c);
  }
  return {std::move(out)};
}

// out[i] = data[i with its axis coordinate replaced by indices[i]].
Results eval_gather_elements(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& data = *in[0];
  const HostTensor& idx = *in[1];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), data.rank(), "axis"));
  check_result_shape(op, idx.shape(), types[0]);
  HostTensor out(data.dtype(), idx.shape());
  std::vector<int64_t> strides = shape_strides(data.shape());
  for (int64_t i = 0; i < idx.numel(); ++i) {
    std::vector<int64_t> at = unravel(i, idx.shape());
    int64_t p = resolve_index(idx.get_i64(i), data.shape()[axis]);
    if (p < 0) continue;
    at[axis] = p;
    int64_t src = 0;
    for (size_t d = 0; d < at.size(); ++d) src += at[d] * strides[d];
    copy_element(out, i, data, src);
  }
  return {std::move(out)};
}

namespace {

// The flat offset, over the dims `dims[0..k)`, that index tuple `t` of `idx` (k components each)
// addresses; -1 when a component is out of range (gather_nd and scatter_nd share it).
int64_t tuple_offset(const HostTensor& idx, int64_t t, size_t k, const int64_t* dims) {
  int64_t offset = 0;
  for (size_t j = 0; j < k; ++j) {
    int64_t p = resolve_index(idx.get_i64(t * int64_t(k) + int64_t(j)), dims[j]);
    if (p < 0) return -1;
    offset = offset * dims[j] + p;
  }
  return offset;
}

}  // namespace

// After b batch dims, each index tuple (the last indices dim, length k) addresses a slice of the
// data's dims [b + k, rank); a tuple with any component out of range reads a slice of zeros.
Results eval_gather_nd(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& data = *in[0];
  const HostTensor& idx = *in[1];
  const Shape& ds = data.shape();
  const Shape& is = idx.shape();
  size_t b = size_t(op.attr_int("batch_dims"));
  size_t k = size_t(is.back());
  Shape shape(is.begin(), is.end() - 1);
  shape.insert(shape.end(), ds.begin() + ptrdiff_t(b + k), ds.end());
  check_result_shape(op, shape, types[0]);
  HostTensor out(data.dtype(), shape);
  int64_t batches = product(is, 0, b), per_batch = product(is, b, is.size() - 1);
  int64_t slice = product(ds, b + k, ds.size()), batch_stride = product(ds, b, ds.size());
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t m = 0; m < per_batch; ++m) {
      int64_t tuple = bi * per_batch + m;
      int64_t src = tuple_offset(idx, tuple, k, &ds[b]);
      if (src < 0) continue;
      for (int64_t c = 0; c < slice; ++c)
        copy_element(out, tuple * slice + c, data, bi * batch_stride + src * slice + c);
    }
  return {std::move(out)};
}

// out = data; then for each index tuple u (C order) the slice updates[u] is combined into the
// data slice the tuple addresses; a tuple with a component out of range is skipped.
Results eval_scatter_nd(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& data = *in[0];
  const HostTensor& idx = *in[1];
  const HostTensor& updates = *in[2];
  const std::string& reduction = op.attr_string("reduction");
  const Shape& ds = data.shape();
  check_result_shape(op, ds, types[0]);
  HostTensor out = data;
  size_t k = size_t(idx.shape().back());
  int64_t tuples = idx.numel() / int64_t(k), slice = product(ds, k, ds.size());
  for (int64_t u = 0; u < tuples; ++u) {
    int64_t dst = tuple_offset(idx, u, k, ds.data());
    if (dst < 0) continue;
    for (int64_t c = 0; c < slice; ++c) combine(reduction, out, dst * slice + c, updates, u * slice + c);
  }
  return {std::move(out)};
}

// out = data; then for each position i of indices (C order), updates[i] is combined into the
// element at i with its axis coordinate replaced by indices[i]; out-of-range indices are skipped.
Results eval_scatter_elements(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& data = *in[0];
  const HostTensor& idx = *in[1];
  const HostTensor& updates = *in[2];
  const std::string& reduction = op.attr_string("reduction");
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), data.rank(), "axis"));
  check_result_shape(op, data.shape(), types[0]);
  HostTensor out = data;
  std::vector<int64_t> strides = shape_strides(data.shape());
  for (int64_t i = 0; i < idx.numel(); ++i) {
    std::vector<int64_t> at = unravel(i, idx.shape());
    int64_t p = resolve_index(idx.get_i64(i), data.shape()[axis]);
    if (p < 0) continue;
    at[axis] = p;
    int64_t dst = 0;
    for (size_t d = 0; d < at.size(); ++d) dst += at[d] * strides[d];
    combine(reduction, out, dst, updates, i);
  }
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
