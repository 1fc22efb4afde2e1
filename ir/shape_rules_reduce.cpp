// Shape rules for reductions (reduce_*, argmax/argmin) and softmax/log_softmax.
#include <algorithm>

#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

bool numeric(DType t) { return t != DType::boolean; }

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    if (!reduced) {
      out.push_back(in[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

}  // namespace

// axes absent or empty: reduce over every dim (ONNX with noop_with_empty_axes = 0).
std::vector<TensorType> infer_reduce(const Op& op) {
  require_dtype(op, 0, numeric, "a numeric type");
  const TensorType& in = operand_type(op, 0);
  std::vector<int64_t> axes;
  std::vector<int64_t> attr = op.attr_ints_or("axes", {});
  for (size_t i = 0; i < attr.size(); ++i) {
    int64_t a = normalize_axis(op, attr[i], in.rank(), cat("attribute 'axes' entry ", i));
    if (std::find(axes.begin(), axes.end(), a) != axes.end())
      fail(op, "attribute 'axes' lists axis ", a, " twice");
    axes.push_back(a);
  }
  if (attr.empty())
    for (int64_t d = 0; d < in.rank(); ++d) axes.push_back(d);
  return {TensorType{in.dtype, reduced_shape(in.shape, axes, op.attr_bool("keepdims"))}};
}

std::vector<TensorType> infer_arg_reduce(const Op& op) {
  require_dtype(op, 0, numeric, "a numeric type");
  const TensorType& in = operand_type(op, 0);
  int64_t axis = normalize_axis(op, op.attr_int("axis"), in.rank(), "axis");
  // An empty axis has no index to return.
  if (in.shape[size_t(axis)] < 1)
    fail(op, "input dim ", axis, " (axis) is 0, expected >= 1");
  return {TensorType{DType::i64, reduced_shape(in.shape, {axis}, op.attr_bool("keepdims"))}};
}

std::vector<TensorType> infer_softmax(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  const TensorType& in = operand_type(op, 0);
  normalize_axis(op, op.attr_int("axis"), in.rank(), "axis");
  return {in};
}

}  // namespace vkc::ir::rules
