// How matmul/batch_matmul/gemm see an operand as a batch of matrices (numpy semantics), shared by
// the reference interpreter and the contraction kernels so both index operands the same way.
#pragma once

#include "support/tensor.h"

namespace vkc::ir {

struct MatrixView {
  Shape batch;  // leading dims (numpy-broadcast against the other operand)
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0, matrix_size = 0;
};

// lhs: a 1-D [K] becomes [1, K]; rhs: a 1-D [K] becomes [K, 1] (numpy promotion; the inserted dim
// is dropped from the result). Transposes apply to operands of rank >= 2 only.
MatrixView matrix_view(const Shape& shape, bool is_lhs, bool transpose);

// A product whose B is one matrix shared by every batch (no batch dim of B above 1) and whose A is
// row-major is one tall matrix: A's batches are consecutive runs of its rows, and the result's
// batches consecutive runs of the result's rows, in the same order. Folds A's batch dims into its
// rows and returns true (a [197, 8, 768] x [768, 2304] projection is a 1576-row GEMM, not 197
// products of 8 rows, which the kernels would plan as thin problems). The memory read and written
// is the same, so kernels index it unchanged.
bool fold_batches_into_rows(MatrixView& a, const MatrixView& b);

}  // namespace vkc::ir
