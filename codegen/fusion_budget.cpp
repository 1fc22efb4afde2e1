#include "codegen/fusion_budget.h"

#include <algorithm>
#include <cmath>

#include "codegen/conv_planner.h"
#include "codegen/kernels/attention_plan.h"
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
  ir::fold_batches_into_rows(a, b);
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

// Reads of each element of a forward conv's input by the kernel its planner picks: once per
// filter tap that covers it (about taps / stride product), times once per output channel of its
// group for the one-output kernels (direct, depthwise), once per tile column of the filter for
// the GEMM kernels, once for im2col (whose GEMM reads the columns, not the input). The filter
// and conv_transpose take no elementwise math: returned as over the limit.
int64_t conv_reads(const ir::Op& op, int operand, const TargetLimits& target) {
  if (operand != 0 || op.kind != ir::OpKind::Conv) return kMaxPrologueRecompute + 1;
  const ir::ConvGeometry g = ir::conv_geometry(op);
  ConvPlan plan = plan_conv(g, target, uint32_t(dtype_size(op.operand(0)->type.dtype)), "", op.describe());
  double overlap = 1;
  for (size_t i = 0; i < g.kernel.size(); ++i)
    overlap *= std::max(1.0, double(g.kernel[i]) / double(std::max<int64_t>(1, g.strides[i])));
  int64_t per_tap = 1;
  switch (plan.strategy) {
    case ConvStrategy::direct:
    case ConvStrategy::depthwise:
    case ConvStrategy::depthwise_tiled:
    case ConvStrategy::depthwise_channels_last: per_tap = g.out_channels_per_group(); break;
    case ConvStrategy::implicit_gemm:
    case ConvStrategy::implicit_gemm_coopmat:
    case ConvStrategy::split_k:
      per_tap = ceil_div(g.out_channels_per_group(), int64_t(std::max<uint32_t>(1, tile_n(plan.tile))));
      break;
    case ConvStrategy::im2col: per_tap = 1; break;
  }
  return int64_t(std::ceil(overlap * double(per_tap)));
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
    case OperandReads::ConvInput: reads = conv_reads(anchor, operand, target); break;
    case OperandReads::AttentionTiles: {
      // q is staged once; k and v once per tile of query rows.
      std::optional<kernels::AttentionPlan> p = kernels::plan_attention(anchor, target);
      reads = operand == 0 || !p ? 1 : int64_t(p->workgroups_x);
      break;
    }
  }
  return std::max<int64_t>(1, reads);
}

}  // namespace vkc::codegen
