// Shape rules for the indexing ops whose indices arrive at run time: gather, gather_elements,
// gather_nd, scatter_nd, scatter_elements (ONNX semantics; docs/ops.md, "Indexing"). Index
// VALUES are not known here; out-of-range ones get the defined result the reference documents.
#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

bool is_index_type(DType t) { return t == DType::i32 || t == DType::i64; }

void require_indices(const Op& op) {
  require_dtype(op, 1, is_index_type, "i32 or i64");
}

void require_rank_at_least(const Op& op, int i, int64_t rank) {
  const TensorType& t = operand_type(op, i);
  if (t.rank() < rank) fail(op, op.operand_label(i), " has rank ", t.rank(), ", expected at least ", rank);
}

// Updates carry elements of the data: same dtype; a reduction needs arithmetic (not bool).
void require_updates(const Op& op) {
  const TensorType& data = operand_type(op, 0);
  const TensorType& updates = operand_type(op, 2);
  if (updates.dtype != data.dtype)
    fail(op, "updates has element type ", dtype_name(updates.dtype), ", data has ",
         dtype_name(data.dtype), "; they must match");
  const std::string& r = op.attr_string("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    fail(op, "attribute 'reduction' is '", r, "', expected 'none', 'add', 'mul', 'max' or 'min'");
  if (r != "none" && data.dtype == DType::boolean)
    fail(op, "attribute 'reduction' is '", r, "', which needs a numeric data type, not bool");
}

void require_shape(const Op& op, int i, const Shape& expected, const std::string& why) {
  const TensorType& t = operand_type(op, i);
  if (t.shape != expected)
    fail(op, op.operand_label(i), " has shape ", shape_str(t.shape), ", expected ",
         shape_str(expected), " (", why, ")");
}

// gather_elements / scatter_elements: indices (and updates) have the data's rank; away from the
// axis their dims may not exceed the data's (each index addresses the data at its own position).
void require_elementwise_indices(const Op& op, int64_t axis) {
  const TensorType& data = operand_type(op, 0);
  const TensorType& idx = operand_type(op, 1);
  if (idx.rank() != data.rank())
    fail(op, "indices has rank ", idx.rank(), ", data has rank ", data.rank(), "; they must match");
  for (size_t d = 0; d < idx.shape.size(); ++d)
    if (int64_t(d) != axis && idx.shape[d] > data.shape[d])
      fail(op, "indices dim ", d, " is ", idx.shape[d], ", data dim ", d, " is ", data.shape[d],
           "; away from the axis (", axis, ") indices may not exceed data");
}

}  // namespace

std::vector<TensorType> infer_gather(const Op& op) {
  const TensorType& data = operand_type(op, 0);
  const TensorType& idx = operand_type(op, 1);
  require_indices(op);
  require_rank_at_least(op, 0, 1);
  size_t axis = size_t(normalize_axis(op, op.attr_int("axis"), data.rank(), "axis"));
  Shape out(data.shape.begin(), data.shape.begin() + ptrdiff_t(axis));
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + ptrdiff_t(axis) + 1, data.shape.end());
  return {TensorType{data.dtype, out}};
}

std::vector<TensorType> infer_gather_elements(const Op& op) {
  const TensorType& data = operand_type(op, 0);
  require_indices(op);
  require_rank_at_least(op, 0, 1);
  int64_t axis = normalize_axis(op, op.attr_int("axis"), data.rank(), "axis");
  require_elementwise_indices(op, axis);
  return {TensorType{data.dtype, operand_type(op, 1).shape}};
}

// ONNX GatherND: the last indices dim k addresses dims [b, b + k) of the data after b batch dims
// shared by data and indices; the result is indices.shape[:-1] + data.shape[b + k:].
std::vector<TensorType> infer_gather_nd(const Op& op) {
  const TensorType& data = operand_type(op, 0);
  const TensorType& idx = operand_type(op, 1);
  require_indices(op);
  require_rank_at_least(op, 0, 1);
  require_rank_at_least(op, 1, 1);
  int64_t b = op.attr_int("batch_dims");
  if (b < 0 || b >= std::min(data.rank(), idx.rank()))
    fail(op, "attribute 'batch_dims' is ", b, ", expected 0 to ", std::min(data.rank(), idx.rank()) - 1,
         " (below both ranks)");
  for (size_t d = 0; d < size_t(b); ++d)
    if (idx.shape[d] != data.shape[d])
      fail(op, "indices dim ", d, " is ", idx.shape[d], ", data dim ", d, " is ", data.shape[d],
           "; batch dims must match");
  int64_t k = idx.shape.back();
  if (k < 1 || k > data.rank() - b)
    fail(op, "indices dim ", idx.rank() - 1, " (index length) is ", k, ", expected 1 to ",
         data.rank() - b, " (data rank minus batch_dims)");
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + ptrdiff_t(b + k), data.shape.end());
  return {TensorType{data.dtype, out}};
}

// ONNX ScatterND: updates has shape indices.shape[:-1] + data.shape[k:].
std::vector<TensorType> infer_scatter_nd(const Op& op) {
  const TensorType& data = operand_type(op, 0);
  const TensorType& idx = operand_type(op, 1);
  require_indices(op);
  require_rank_at_least(op, 0, 1);
  require_rank_at_least(op, 1, 1);
  require_updates(op);
  int64_t k = idx.shape.back();
  if (k < 1 || k > data.rank())
    fail(op, "indices dim ", idx.rank() - 1, " (index length) is ", k, ", expected 1 to ", data.rank(),
         " (data rank)");
  Shape expected(idx.shape.begin(), idx.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + ptrdiff_t(k), data.shape.end());
  require_shape(op, 2, expected, "indices dims but the last, then data dims from the index length");
  return {data};
}

std::vector<TensorType> infer_scatter_elements(const Op& op) {
  const TensorType& data = operand_type(op, 0);
  require_indices(op);
  require_rank_at_least(op, 0, 1);
  require_updates(op);
  int64_t axis = normalize_axis(op, op.attr_int("axis"), data.rank(), "axis");
  require_elementwise_indices(op, axis);
  require_shape(op, 2, operand_type(op, 1).shape, "the shape of indices");
  return {data};
}

}  // namespace vkc::ir::rules
