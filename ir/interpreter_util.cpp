// Indexing and conversion helpers shared by the interpreter's op families.
#include <cstring>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {

std::vector<double> to_f64(const HostTensor& t) {
  std::vector<double> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.get_f64(i);
  return v;
}

HostTensor from_f64(const TensorType& type, const std::vector<double>& values) {
  HostTensor t(type.dtype, type.shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, values[size_t(i)]);
  return t;
}

void copy_element(HostTensor& dst, int64_t dst_index, const HostTensor& src, int64_t src_index) {
  size_t size = dtype_size(src.dtype());
  std::memcpy(dst.data() + size_t(dst_index) * size, src.data() + size_t(src_index) * size, size);
}

int64_t normalize_axis(const Op& op, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    fail(op, what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

int64_t broadcast_offset(const Shape& source, const Shape& target, const std::vector<int64_t>& index) {
  int64_t offset = 0, stride = 1;
  size_t lead = target.size() - source.size();
  for (size_t d = source.size(); d-- > 0;) {
    int64_t i = source[d] == 1 ? 0 : index[lead + d];
    offset += i * stride;
    stride *= source[d];
  }
  return offset;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) return index;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

void check_result_shape(const Op& op, const Shape& computed, const TensorType& inferred) {
  if (computed != inferred.shape)
    fail(op, "interpreter computes result shape ", shape_str(computed), " but the verifier inferred ",
         inferred.str());
}

Results eval_constant(const Op& op, const ResultTypes& types) {
  const TensorPtr& value = op.attr_tensor("value");
  if (value == nullptr) fail(op, "attribute 'value' holds no tensor");
  if (value->dtype() != types[0].dtype || value->shape() != types[0].shape)
    fail(op, "value is ", dtype_name(value->dtype()), " ", shape_str(value->shape()),
         " but the result type is ", types[0].str());
  return {*value};
}

}  // namespace vkc::ir::interp
