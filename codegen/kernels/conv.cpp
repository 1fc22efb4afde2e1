// Conv, ConvTranspose: the planner (codegen/conv_planner) picks direct, depthwise (one output per
// invocation, tiled, or channels-last runs), implicit GEMM (whole K per workgroup, or split-K +
// reduce) or explicit im2col + GEMM per dispatch; the kernels live in conv_direct.cpp,
// conv_depthwise_tiled.cpp, conv_depthwise_channels_last.cpp, conv_gemm.cpp, conv_split_k.cpp and
// im2col.cpp. Conv_transpose runs through the same kernels (except the tiled and channels-last
// depthwise ones): its gather index math
// (conv_common.h) turns the ONNX scatter into a forward conv.
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/kernels.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

// 16-byte tensor-core staging: A and B from float16 copies in the packed layouts (conv_pack.cpp),
// unless the operand already is one (then read in place) or the input is gathered 8 values at a
// time through its fused prologue (conv::input_gathered_in_place).
std::vector<EmittedKernel> emit_packed_coopmat(const conv::ConvOperands& c, const ConvPlan& plan,
                                               const KernelContext& ctx, std::vector<ScratchTensor>& scratch) {
  std::vector<EmittedKernel> kernels;
  conv::PackedSources packed{ctx.tensor(c.input), ctx.tensor(c.filter)};
  if (conv::input_gathered_in_place(c)) {
    packed.input.clear();
  } else if (!conv::input_is_packed(c)) {
    packed.input = ctx.tensor(c.output) + ".packed_input";
    scratch.push_back({packed.input, DType::f16, conv::packed_input_shape(c.g)});
    kernels.push_back(conv::emit_pack_input(c, ctx, packed.input));
  }
  if (!conv::filter_is_packed(c)) {
    packed.filter = ctx.tensor(c.output) + ".packed_filter";
    scratch.push_back({packed.filter, DType::f16, conv::packed_filter_shape(c.g)});
    kernels.push_back(conv::emit_pack_filter(c, ctx, packed.filter));
  }
  kernels.push_back(conv::emit_conv_gemm(c, plan, ctx, "", "", &packed));
  return kernels;
}

}  // namespace

std::vector<EmittedKernel> emit_conv(const DispatchGroup& group, const KernelContext& ctx,
                                     std::vector<ScratchTensor>& scratch) {
  conv::ConvOperands c = conv::resolve_conv(group, ctx);
  ConvPlan plan = plan_conv(c.g, ctx.target, uint32_t(dtype_size(c.dtype)), ctx.forced(*c.op), c.what);
  ConvGemmShape s = conv_gemm_shape(c.g);
  switch (plan.strategy) {
    case ConvStrategy::direct:
    case ConvStrategy::depthwise: return {conv::emit_conv_direct(c, plan, ctx)};
    case ConvStrategy::depthwise_tiled: return {conv::emit_conv_depthwise_tiled(c, plan, ctx)};
    case ConvStrategy::depthwise_channels_last: return {conv::emit_conv_depthwise_channels_last(c, plan, ctx)};
    case ConvStrategy::implicit_gemm: return {conv::emit_conv_gemm(c, plan, ctx, "")};
    case ConvStrategy::implicit_gemm_coopmat:
      if (plan.coop().vec == 8) return emit_packed_coopmat(c, plan, ctx, scratch);
      return {conv::emit_conv_gemm(c, plan, ctx, "")};
    case ConvStrategy::split_k: {
      // f32 partial sums of every K slice, [slice, output elements in the output's physical
      // order]: the GEMM dispatch writes them, the reduce dispatch sums them into the fused
      // epilogue.
      std::string partial = ctx.tensor(c.output) + ".split_k";
      scratch.push_back({partial, DType::f32, Shape{int64_t(plan.split_k), c.output->type.numel()}});
      return {conv::emit_conv_gemm(c, plan, ctx, "", partial), conv::emit_conv_split_k_reduce(c, plan, ctx, partial)};
    }
    case ConvStrategy::im2col: {
      // Materialize the [N, G, P, K] column matrix in a scratch tensor, then run the GEMM on it.
      std::string columns = ctx.tensor(c.output) + ".im2col";
      scratch.push_back({columns, c.dtype, Shape{c.g.batch, s.groups, s.positions, s.k}});
      return {conv::emit_im2col_kernel(c, ctx, columns), conv::emit_conv_gemm(c, plan, ctx, columns)};
    }
  }
  throw Error(cat(c.what, ": internal: unplanned conv strategy"));
}

}  // namespace vkc::codegen::kernels
