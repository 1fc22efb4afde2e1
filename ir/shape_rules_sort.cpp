// Shape rules for sort (keys plus co-sorted payloads) and topk.
#include "ir/shape_rules.h"

namespace vkc::ir::rules {

// Payload operands are permuted with the keys, so every operand has the keys' shape; their dtypes
// are free. Results mirror the operands one to one.
std::vector<TensorType> infer_sort(const Op& op) {
  const TensorType& keys = operand_type(op, 0);
  if (keys.dtype == DType::boolean) fail(op, "keys has element type bool, expected a numeric type");
  normalize_axis(op, op.attr_int("axis"), keys.rank(), "axis");
  std::vector<TensorType> results;
  for (int i = 0; i < op.num_operands(); ++i) {
    const TensorType& t = operand_type(op, i);
    if (t.rank() != keys.rank())
      fail(op, op.operand_label(i), " has rank ", t.rank(), ", keys has rank ", keys.rank(),
           "; they must match");
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (t.shape[d] != keys.shape[d])
        fail(op, op.operand_label(i), " dim ", d, " is ", t.shape[d], ", keys dim ", d, " is ",
             keys.shape[d], "; they must match");
    results.push_back(t);
  }
  return results;
}

std::vector<TensorType> infer_topk(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  if (in.dtype == DType::boolean) fail(op, "input has element type bool, expected a numeric type");
  int64_t axis = normalize_axis(op, op.attr_int("axis"), in.rank(), "axis");
  int64_t dim = in.shape[size_t(axis)], k = op.attr_int("k");
  if (k < 1 || k > dim)
    fail(op, "attribute 'k' is ", k, ", expected 1 to ", dim, " (input dim ", axis, ")");
  const std::string& index_type = op.attr_string("index_type");
  if (index_type != "i64" && index_type != "i32")
    fail(op, "attribute 'index_type' is '", index_type, "', expected 'i64' or 'i32'");
  Shape out = in.shape;
  out[size_t(axis)] = k;
  return {TensorType{in.dtype, out},
          TensorType{index_type == "i64" ? DType::i64 : DType::i32, out}};
}

}  // namespace vkc::ir::rules
