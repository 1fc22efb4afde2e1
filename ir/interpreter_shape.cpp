// Reshapes and data movement. All of these move elements bit-exactly (copy_element) and never
// round, so they are exact for every dtype.
#include <algorithm>

#include "ir/interpreter_ops.h"

#include "support/int_math.h"

namespace vkc::ir::interp {

// expand_shape, collapse_shape and reshape: C-order bytes are unchanged, only the shape differs.
Results eval_same_bytes(const Op& op, const Operands& in, const ResultTypes& types) {
  if (shape_numel(types[0].shape) != in[0]->numel())
    fail(op, "result ", types[0].str(), " has a different element count than the input ",
         shape_str(in[0]->shape()));
  return {in[0]->reshaped(types[0].shape)};
}

Results eval_transpose(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  const std::vector<int64_t>& perm = op.attr_ints("perm");
  if (int64_t(perm.size()) != x.rank()) fail(op, "perm has ", perm.size(), " entries for rank ", x.rank());
  Shape shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    shape[i] = x.shape()[size_t(normalize_axis(op, perm[i], x.rank(), "perm entry"))];
  check_result_shape(op, shape, types[0]);
  HostTensor out(x.dtype(), shape);
  std::vector<int64_t> in_strides = shape_strides(x.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, shape);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      src += index[d] * in_strides[size_t(normalize_axis(op, perm[d], x.rank(), "perm entry"))];
    copy_element(out, i, x, src);
  }
  return {std::move(out)};
}

// pads = [begin_0..begin_{r-1}, end_0..end_{r-1}]; negative pads crop.
Results eval_pad(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  const std::vector<int64_t>& pads = op.attr_ints("pads");
  size_t rank = size_t(x.rank());
  if (pads.size() != 2 * rank) fail(op, "pads has ", pads.size(), " entries, expected ", 2 * rank);
  Shape shape(rank);
  for (size_t d = 0; d < rank; ++d) shape[d] = x.shape()[d] + pads[d] + pads[rank + d];
  check_result_shape(op, shape, types[0]);
  HostTensor out(x.dtype(), shape);
  HostTensor fill(x.dtype(), {});
  fill.set_f64(0, op.attr_float("value"));
  std::vector<int64_t> in_strides = shape_strides(x.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, shape);
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < rank && inside; ++d) {
      int64_t j = index[d] - pads[d];
      inside = j >= 0 && j < x.shape()[d];
      src += j * in_strides[d];
    }
    if (inside)
      copy_element(out, i, x, src);
    else
      copy_element(out, i, fill, 0);
  }
  return {std::move(out)};
}

Results eval_reverse(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  std::vector<bool> flip(size_t(x.rank()), false);
  for (int64_t a : op.attr_ints("axes")) flip[size_t(normalize_axis(op, a, x.rank(), "axes entry"))] = true;
  check_result_shape(op, x.shape(), types[0]);
  HostTensor out(x.dtype(), x.shape());
  std::vector<int64_t> strides = shape_strides(x.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, x.shape());
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d)
      src += (flip[d] ? x.shape()[d] - 1 - index[d] : index[d]) * strides[d];
    copy_element(out, i, x, src);
  }
  return {std::move(out)};
}

// ONNX Slice: negative starts/ends count from the end; then, for step > 0, start and end clamp to
// [0, dim]; for step < 0, start clamps to [0, dim-1] and end to [-1, dim-1].
Results eval_slice(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  int64_t rank = x.rank();
  const std::vector<int64_t>& starts = op.attr_ints("starts");
  const std::vector<int64_t>& ends = op.attr_ints("ends");
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = int64_t(i);
  axes = op.attr_ints_or("axes", axes);
  steps = op.attr_ints_or("steps", steps);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail(op, "starts, ends, axes and steps must have the same length");
  std::vector<int64_t> first(size_t(rank), 0), step(size_t(rank), 1);
  Shape shape = x.shape();
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t a = size_t(normalize_axis(op, axes[i], rank, "axes entry"));
    int64_t dim = x.shape()[a], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0) fail(op, "steps[", i, "] is 0");
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (dim == 0) {
      s = 0;
      shape[a] = 0;  // (clamping to [0, dim-1] would be empty)
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[a] = e > s ? ceil_div(e - s, st) : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[a] = s > e ? ceil_div(s - e, -st) : 0;
    }
    first[a] = s;
    step[a] = st;
  }
  check_result_shape(op, shape, types[0]);
  HostTensor out(x.dtype(), shape);
  std::vector<int64_t> strides = shape_strides(x.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, shape);
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += (first[d] + index[d] * step[d]) * strides[d];
    copy_element(out, i, x, src);
  }
  return {std::move(out)};
}

Results eval_concat(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x0 = *in[0];
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), x0.rank(), "axis"));
  Shape shape = x0.shape();
  shape[axis] = 0;
  for (const HostTensor* t : in) shape[axis] += t->shape()[axis];
  check_result_shape(op, shape, types[0]);
  HostTensor out(x0.dtype(), shape);
  // Every operand is a run of `outer` blocks of (its axis extent x inner) elements.
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t out_block = shape[axis] * inner, offset = 0;
  for (const HostTensor* t : in) {
    int64_t block = t->shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < block; ++j) copy_element(out, o * out_block + offset + j, *t, o * block + j);
    offset += block;
  }
  return {std::move(out)};
}

Results eval_broadcast(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  const Shape& shape = types[0].shape;
  if (x.rank() > int64_t(shape.size())) fail(op, "input rank ", x.rank(), " exceeds result rank ", shape.size());
  size_t lead = shape.size() - size_t(x.rank());
  for (size_t d = 0; d < size_t(x.rank()); ++d)
    if (x.shape()[d] != 1 && x.shape()[d] != shape[lead + d])
      fail(op, "input ", shape_str(x.shape()), " does not broadcast to ", shape_str(shape));
  HostTensor out(x.dtype(), shape);
  for (int64_t i = 0; i < out.numel(); ++i)
    copy_element(out, i, x, broadcast_offset(x.shape(), shape, unravel(i, shape)));
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
