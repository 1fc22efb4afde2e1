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

}  // namespace vkc::ir
