// matmul / batch_matmul (numpy matmul semantics) and gemm.
#include <algorithm>

#include "ir/interpreter_ops.h"
#include "ir/matmul_geometry.h"

namespace vkc::ir::interp {
namespace {

// One matmul operand seen as a batch of [rows, cols] matrices after 1-D promotion and the
// optional transpose of its last two dims.
}  // namespace

Results eval_matmul(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& a = *in[0];
  const HostTensor& b = *in[1];
  if (a.rank() < 1 || b.rank() < 1) fail(op, "operands must have rank >= 1");
  MatrixView va = matrix_view(a.shape(), true, op.attr_bool("transpose_a"));
  MatrixView vb = matrix_view(b.shape(), false, op.attr_bool("transpose_b"));
  if (va.cols != vb.rows)
    fail(op, "contraction dims differ: lhs has ", va.cols, ", rhs has ", vb.rows);
  size_t rank = std::max(va.batch.size(), vb.batch.size());
  Shape batch(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    auto dim = [&](const Shape& s) {
      return d + s.size() < rank ? int64_t(1) : s[d + s.size() - rank];
    };
    int64_t x = dim(va.batch), y = dim(vb.batch);
    if (x != y && x != 1 && y != 1) fail(op, "batch dims ", x, " and ", y, " do not broadcast");
    batch[d] = x == 1 ? y : x;
  }
  Shape shape = batch;
  if (a.rank() > 1) shape.push_back(va.rows);
  if (b.rank() > 1) shape.push_back(vb.cols);
  check_result_shape(op, shape, types[0]);
  std::vector<double> x = to_f64(a), y = to_f64(b);
  std::vector<double> out(size_t(shape_numel(shape)));
  matrix_product_sums<double>(
      va, vb, batch, [&](int64_t ao, int64_t bo, int64_t) { return x[size_t(ao)] * y[size_t(bo)]; },
      [&](int64_t o, int64_t, int64_t, double acc) { out[size_t(o)] = acc; });
  return {from_f64(types[0], out)};
}

// Y = alpha * A' B' + beta * C, A' = A or A^T, B' = B or B^T, C unidirectionally broadcast to [M, N].
Results eval_gemm(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& a = *in[0];
  const HostTensor& b = *in[1];
  if (a.rank() != 2 || b.rank() != 2) fail(op, "a and b must have rank 2");
  MatrixView va = matrix_view(a.shape(), true, op.attr_bool("transpose_a"));
  MatrixView vb = matrix_view(b.shape(), false, op.attr_bool("transpose_b"));
  if (va.cols != vb.rows) fail(op, "contraction dims differ: a has ", va.cols, ", b has ", vb.rows);
  Shape shape{va.rows, vb.cols};
  check_result_shape(op, shape, types[0]);
  double alpha = op.attr_float("alpha"), beta = op.attr_float("beta");
  std::vector<double> x = to_f64(a), y = to_f64(b);
  std::vector<double> out(size_t(va.rows * vb.cols));
  const HostTensor* c = in.size() > 2 ? in[2] : nullptr;
  if (c != nullptr) {
    if (c->rank() > 2) fail(op, "c has rank ", c->rank(), ", expected at most 2");
    for (size_t d = 0; d < size_t(c->rank()); ++d) {
      int64_t want = shape[2 - size_t(c->rank()) + d];
      if (c->shape()[d] != 1 && c->shape()[d] != want)
        fail(op, "c ", shape_str(c->shape()), " does not broadcast to ", shape_str(shape));
    }
  }
  matrix_product_sums<double>(
      va, vb, Shape{}, [&](int64_t ao, int64_t bo, int64_t) { return x[size_t(ao)] * y[size_t(bo)]; },
      [&](int64_t o, int64_t m, int64_t n, double acc) {
        double r = alpha * acc;
        if (c != nullptr) r += beta * c->get_f64(broadcast_offset(c->shape(), shape, {m, n}));
        out[size_t(o)] = r;
      });
  return {from_f64(types[0], out)};
}

}  // namespace vkc::ir::interp
