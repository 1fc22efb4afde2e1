// Shape rules for the data-movement ops: transpose, pad, reverse, slice, concat, broadcast.
#include <algorithm>

#include "ir/shape_rules.h"

#include "support/int_math.h"

namespace vkc::ir::rules {
namespace {

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Normalizes every entry of an axes attribute and rejects duplicates.
std::vector<int64_t> unique_axes(const Op& op, const std::string& attr,
                                 const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normalize_axis(op, axes[i], rank, cat("attribute '", attr, "' entry ", i));
    if (std::find(out.begin(), out.end(), a) != out.end())
      fail(op, "attribute '", attr, "' is ", ints_str(axes), ", axis ", a, " appears twice");
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::vector<TensorType> infer_transpose(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  const std::vector<int64_t>& perm = op.attr_ints("perm");
  bool ok = int64_t(perm.size()) == in.rank();
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (!ok || p < 0 || p >= int64_t(perm.size()) || seen[size_t(p)]) {
      ok = false;
      break;
    }
    seen[size_t(p)] = true;
  }
  if (!ok)
    fail(op, "attribute 'perm' is ", ints_str(perm), ", expected a permutation of 0..", in.rank() - 1);
  Shape out;
  for (int64_t p : perm) out.push_back(in.shape[size_t(p)]);
  return {TensorType{in.dtype, out}};
}

std::vector<TensorType> infer_pad(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  const std::vector<int64_t>& pads = op.attr_ints("pads");
  size_t r = size_t(in.rank());
  if (pads.size() != 2 * r)
    fail(op, "attribute 'pads' has ", pads.size(), " entries, expected ", 2 * r,
         " (begins then ends for each of the ", r, " input dims)");
  for (size_t i = 0; i < pads.size(); ++i)
    if (pads[i] < 0) fail(op, "attribute 'pads' entry ", i, " is ", pads[i], ", expected >= 0");
  Shape out = in.shape;
  for (size_t d = 0; d < r; ++d) out[d] += pads[d] + pads[r + d];
  return {TensorType{in.dtype, out}};
}

std::vector<TensorType> infer_reverse(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  unique_axes(op, "axes", op.attr_ints("axes"), in.rank());
  return {in};
}

// ONNX Slice: negative starts/ends count from the end; both are clamped (to [0, dim] for positive
// steps, to [0, dim-1] / [-1, dim-1] for negative ones); size = ceil((end - start) / step) >= 0.
std::vector<TensorType> infer_slice(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  const std::vector<int64_t>& starts = op.attr_ints("starts");
  const std::vector<int64_t>& ends = op.attr_ints("ends");
  size_t n = starts.size();
  if (ends.size() != n)
    fail(op, "attribute 'ends' has ", ends.size(), " entries, 'starts' has ", n);
  std::vector<int64_t> axes_attr(n);
  for (size_t i = 0; i < n; ++i) axes_attr[i] = int64_t(i);
  if (op.has_attr("axes")) axes_attr = op.attr_ints("axes");
  if (axes_attr.size() != n)
    fail(op, "attribute 'axes' has ", axes_attr.size(), " entries, 'starts' has ", n);
  std::vector<int64_t> steps = op.attr_ints_or("steps", std::vector<int64_t>(n, 1));
  if (steps.size() != n)
    fail(op, "attribute 'steps' has ", steps.size(), " entries, 'starts' has ", n);
  std::vector<int64_t> axes = unique_axes(op, "axes", axes_attr, in.rank());
  Shape out = in.shape;
  for (size_t i = 0; i < n; ++i) {
    int64_t dim = in.shape[size_t(axes[i])], step = steps[i];
    if (step == 0) fail(op, "attribute 'steps' entry ", i, " is 0, expected non-zero");
    if (dim == 0) {  // nothing to select (and the negative-step clamp range would be empty)
      out[size_t(axes[i])] = 0;
      continue;
    }
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? ceil_div(end - start, step) : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = start > end ? ceil_div(start - end, -step) : 0;
    }
    out[size_t(axes[i])] = size;
  }
  return {TensorType{in.dtype, out}};
}

std::vector<TensorType> infer_concat(const Op& op) {
  const TensorType& first = operand_type(op, 0);
  int64_t axis = normalize_axis(op, op.attr_int("axis"), first.rank(), "axis");
  Shape out = first.shape;
  for (int i = 1; i < op.num_operands(); ++i) {
    const TensorType& t = operand_type(op, i);
    if (t.dtype != first.dtype)
      fail(op, op.operand_label(i), " has element type ", dtype_name(t.dtype), ", ",
           op.operand_label(0), " has ", dtype_name(first.dtype), "; they must match");
    if (t.rank() != first.rank())
      fail(op, op.operand_label(i), " has rank ", t.rank(), ", ", op.operand_label(0), " has rank ",
           first.rank(), "; they must match");
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (int64_t(d) == axis) continue;
      if (t.shape[d] != first.shape[d])
        fail(op, op.operand_label(i), " dim ", d, " is ", t.shape[d], ", ", op.operand_label(0),
             " dim ", d, " is ", first.shape[d], "; only dim ", axis, " (axis) may differ");
    }
    out[size_t(axis)] += t.shape[size_t(axis)];
  }
  return {TensorType{first.dtype, out}};
}

// Numpy broadcast of the operand to the `shape` attribute (unidirectional: the result is exactly
// `shape`; the operand's dims, right-aligned, must equal it or be 1).
std::vector<TensorType> infer_broadcast(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  const std::vector<int64_t>& shape = op.attr_ints("shape");
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) fail(op, "attribute 'shape' entry ", i, " is ", shape[i], ", expected >= 0");
  if (in.rank() > int64_t(shape.size()))
    fail(op, "input has rank ", in.rank(), ", attribute 'shape' ", ints_str(shape), " has rank ",
         shape.size(), "; cannot broadcast to a lower rank");
  size_t offset = shape.size() - in.shape.size();
  for (size_t d = 0; d < in.shape.size(); ++d)
    if (in.shape[d] != 1 && in.shape[d] != shape[offset + d])
      fail(op, "input dim ", d, " is ", in.shape[d], ", attribute 'shape' entry ", offset + d, " is ",
           shape[offset + d], "; expected them equal or the input dim 1");
  return {TensorType{in.dtype, shape}};
}

}  // namespace vkc::ir::rules
