// Shape rules for matmul (numpy semantics), batch_matmul and gemm (ONNX Gemm).
#include <algorithm>

#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

// The two operands' float element types must match; int8 contractions are not supported.
void check_float_pair(const Op& op) {
  require_dtype(op, 0, is_float, "a float type (f32 or f16)");
  for (int i = 1; i < op.num_operands(); ++i)
    if (operand_type(op, i).dtype != operand_type(op, 0).dtype)
      fail(op, op.operand_label(i), " has element type ", dtype_name(operand_type(op, i).dtype), ", ",
           op.operand_label(0), " has ", dtype_name(operand_type(op, 0).dtype), "; they must match");
}

// Row/column/contraction dims of one matrix operand after an optional transpose of its last two
// dims. Positions are physical dim indices (for messages).
struct MatrixDims {
  int64_t rows = 1, cols = 1;
  int64_t rows_pos = -1, cols_pos = -1;
};

MatrixDims matrix_dims(const Op& op, int i, const char* transpose_attr) {
  const TensorType& t = operand_type(op, i);
  bool transpose = op.attr_bool(transpose_attr);
  if (transpose && t.rank() < 2)
    fail(op, "attribute '", transpose_attr, "' needs ", op.operand_label(i),
         " of rank >= 2, found rank ", t.rank());
  MatrixDims m;
  int64_t r = t.rank();
  if (r < 2) return m;  // 1-D matmul operands: the caller reads the single dim itself
  m.rows_pos = transpose ? r - 1 : r - 2;
  m.cols_pos = transpose ? r - 2 : r - 1;
  m.rows = t.shape[size_t(m.rows_pos)];
  m.cols = t.shape[size_t(m.cols_pos)];
  return m;
}

void check_contraction(const Op& op, int64_t k_a, int64_t pos_a, int64_t k_b, int64_t pos_b) {
  if (k_a != k_b)
    fail(op, op.operand_label(0), " dim ", pos_a, " (K) is ", k_a, ", ", op.operand_label(1),
         " dim ", pos_b, " (K) is ", k_b, "; contraction dims must match");
}

}  // namespace

std::vector<TensorType> infer_matmul(const Op& op) {
  check_float_pair(op);
  return {TensorType{operand_type(op, 0).dtype, matmul_shape(op)}};
}

Shape matmul_shape(const Op& op) {
  const TensorType& a = operand_type(op, 0);
  const TensorType& b = operand_type(op, 1);
  for (int i = 0; i < 2; ++i)
    if (operand_type(op, i).rank() < 1)
      fail(op, op.operand_label(i), " has rank 0, expected rank >= 1");
  // A 1-D lhs is a row vector [1, K] and a 1-D rhs a column vector [K, 1]; the unit dim they
  // introduce is dropped from the result.
  int64_t m = 0, k_a, pos_a, k_b, pos_b, n = 0;
  if (a.rank() == 1) {
    matrix_dims(op, 0, "transpose_a");  // only for the transpose rank check
    k_a = a.shape[0];
    pos_a = 0;
  } else {
    MatrixDims d = matrix_dims(op, 0, "transpose_a");
    m = d.rows;
    k_a = d.cols;
    pos_a = d.cols_pos;
  }
  if (b.rank() == 1) {
    matrix_dims(op, 1, "transpose_b");
    k_b = b.shape[0];
    pos_b = 0;
  } else {
    MatrixDims d = matrix_dims(op, 1, "transpose_b");
    k_b = d.rows;
    pos_b = d.rows_pos;
    n = d.cols;
  }
  check_contraction(op, k_a, pos_a, k_b, pos_b);
  // Batch dims (all but the last two) broadcast numpy-style.
  Shape batch_a(a.shape.begin(), a.shape.end() - std::min<int64_t>(a.rank(), 2));
  Shape batch_b(b.shape.begin(), b.shape.end() - std::min<int64_t>(b.rank(), 2));
  size_t rank = std::max(batch_a.size(), batch_b.size());
  Shape out(rank, 1);
  for (size_t o = 0; o < rank; ++o) {
    int64_t ia = int64_t(o) - int64_t(rank - batch_a.size());
    int64_t ib = int64_t(o) - int64_t(rank - batch_b.size());
    int64_t da = ia >= 0 ? batch_a[size_t(ia)] : 1, db = ib >= 0 ? batch_b[size_t(ib)] : 1;
    if (da != db && da != 1 && db != 1)
      fail(op, op.operand_label(0), " dim ", ia, " is ", da, ", ", op.operand_label(1), " dim ", ib,
           " is ", db, "; batch dims do not broadcast");
    out[o] = da == 1 ? db : da;
  }
  if (a.rank() >= 2) out.push_back(m);
  if (b.rank() >= 2) out.push_back(n);
  return out;
}

std::vector<TensorType> infer_batch_matmul(const Op& op) {
  check_float_pair(op);
  for (int i = 0; i < 2; ++i)
    if (operand_type(op, i).rank() != 3)
      fail(op, op.operand_label(i), " has rank ", operand_type(op, i).rank(),
           ", expected 3 ([batch, rows, cols])");
  const TensorType& a = operand_type(op, 0);
  const TensorType& b = operand_type(op, 1);
  if (a.shape[0] != b.shape[0])
    fail(op, op.operand_label(0), " dim 0 (batch) is ", a.shape[0], ", ", op.operand_label(1),
         " dim 0 (batch) is ", b.shape[0], "; they must be equal");
  MatrixDims da = matrix_dims(op, 0, "transpose_a");
  MatrixDims db = matrix_dims(op, 1, "transpose_b");
  check_contraction(op, da.cols, da.cols_pos, db.rows, db.rows_pos);
  return {TensorType{a.dtype, {a.shape[0], da.rows, db.cols}}};
}

std::vector<TensorType> infer_gemm(const Op& op) {
  check_float_pair(op);
  for (int i = 0; i < 2; ++i)
    if (operand_type(op, i).rank() != 2)
      fail(op, op.operand_label(i), " has rank ", operand_type(op, i).rank(), ", expected 2");
  MatrixDims da = matrix_dims(op, 0, "transpose_a");
  MatrixDims db = matrix_dims(op, 1, "transpose_b");
  check_contraction(op, da.cols, da.cols_pos, db.rows, db.rows_pos);
  Shape out{da.rows, db.cols};
  if (op.num_operands() == 3) {
    // c broadcasts unidirectionally to [M, N]: right-aligned, each dim equal or 1.
    const TensorType& c = operand_type(op, 2);
    if (c.rank() > 2) fail(op, "c has rank ", c.rank(), ", expected at most 2 (broadcast to [M, N])");
    for (int64_t d = 0; d < c.rank(); ++d) {
      int64_t target = out[size_t(2 - c.rank() + d)];
      if (c.shape[size_t(d)] != 1 && c.shape[size_t(d)] != target)
        fail(op, "c dim ", d, " is ", c.shape[size_t(d)], ", expected 1 or ", target,
             " (c must broadcast to ", shape_str(out), ")");
    }
  }
  return {TensorType{operand_type(op, 0).dtype, out}};
}

}  // namespace vkc::ir::rules
