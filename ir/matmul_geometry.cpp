#include "ir/matmul_geometry.h"

namespace vkc::ir {

MatrixView matrix_view(const Shape& shape, bool is_lhs, bool transpose) {
  MatrixView v;
  Shape s = shape;
  bool promoted = s.size() == 1;
  if (promoted) s = is_lhs ? Shape{1, s[0]} : Shape{s[0], 1};
  v.batch.assign(s.begin(), s.end() - 2);
  int64_t r = s[s.size() - 2], c = s[s.size() - 1];
  v.matrix_size = r * c;
  if (transpose && !promoted) {
    v.rows = c, v.cols = r, v.row_stride = 1, v.col_stride = c;
  } else {
    v.rows = r, v.cols = c, v.row_stride = c, v.col_stride = 1;
  }
  return v;
}

bool fold_batches_into_rows(MatrixView& a, const MatrixView& b) {
  if (a.batch.empty() || a.col_stride != 1 || shape_numel(b.batch) != 1) return false;
  a.rows *= shape_numel(a.batch);
  a.batch.clear();
  a.matrix_size = a.rows * a.cols;
  return true;
}

}  // namespace vkc::ir
