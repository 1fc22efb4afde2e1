#include "codegen/fusion_budget.h"

#include <algorithm>

#include "codegen/kernels/contraction_plan.h"
#include "codegen/op_codegen.h"
#include "ir/conv_geometry.h"
#include "ir/matmul_geometry.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace {

// Reads of each element of a contraction operand: the naive and dot kernels (every output reads
// its whole A row and B column) read A once per output column
// and B once per output row; the tiled one once per tile column / tile row.
int64_t contraction_reads(const ir::Op& op, int operand, const TargetLimits& target) {
  const ir::Value* av = op.operand(0);
  const ir::Value* bv = op.operand(1);
  ir::MatrixView a = ir::matrix_view(av->type.shape, true, op.attr_bool("transpose_a"));
  ir::MatrixView b = ir::matrix_view(bv->type.shape, false, op.attr_bool("transpose_b"));
  const int64_t M = a.rows, N = b.cols, K = a.cols;
  if (M * N * K == 0) return 1;
  const int64_t batches = std::max<int64_t>(1, op.result()->type.numel() / std::max<int64_t>(1, M * N));
  auto tile = kernels::contraction_tile(M, N, K, target, batches);
  if (operand == 0) {
    int64_t per_row = tile ? ceil_div(N, tile->tn) : N;
    return batches * M * K * per_row / std::max<int64_t>(1, av->type.numel());
  }
  int64_t per_col = tile ? ceil_div(M, tile->tm) : M;
  return batches * K * N * per_col / std::max<int64_t>(1, bv->type.numel());
}

}  // namespace

int64_t operand_reads_per_element(const ir::Op& anchor, int operand, const TargetLimits& target) {
  int64_t reads = 1;
  switch (op_codegen(anchor.kind).reads) {
    case OperandReads::Once: break;
    case OperandReads::PoolWindow: {
      // Every output walks its whole window; windows overlap where the stride is below the extent.
      ir::ConvGeometry g = ir::pool_geometry(anchor);
      int64_t window = 1;
      for (int64_t k : g.kernel) window *= k;
      int64_t in = anchor.operand(0)->type.numel();
      reads = in == 0 ? 1 : ceil_div(anchor.result()->type.numel() * window, in);
      break;
    }
    case OperandReads::SoftmaxPasses: reads = 3; break;  // row max, sum of exponentials, the store
    case OperandReads::Contraction: reads = contraction_reads(anchor, operand, target); break;
  }
  return std::max<int64_t>(1, reads);
}

}  // namespace vkc::codegen
