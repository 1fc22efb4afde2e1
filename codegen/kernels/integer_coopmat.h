// conv_integer and matmul_integer on int8 tensor cores (shaders/integer_coopmat.glsl): int8
// products with exact int32 sums, the same results as the SIMT kernel (integer_product.cpp) and
// the int64 reference, bit for bit after requantization.
//
// The cooperative matrices multiply signed int8 only (vkc uses the i8*i8+i32 shape), so:
// - u8 activations become s8 by x ^ 0x80, which moves the zero point by 128: x - zp = s - z' with
//   s = x - 128 and z' = zp - 128;
// - with the weights' zero points 0 (ORT's default for weights) the sum splits into
//   sum_k s_k * w_k - z' * sum_k w_k: the tensor cores sum the first, the second is one constant
//   per output channel, folded at compile time from the constant weights;
// - conv padding must contribute 0, i.e. read as z' (not 0): the packed input holds s ^ z' per
//   byte, the gather returns 0 in the padding, and the loader XORs z' back (padding -> z').
// Where any of this does not hold (nonzero or run-time weight zero points, u8 weights, a
// run-time activation zero point, a run-time filter with z' != 0, channels per group not a
// multiple of 16, no int8 cooperative-matrix shape on the target) the SIMT kernel runs; the
// planner's reason is in the dispatch's notes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/gemm_planner.h"
#include "codegen/kernel_context.h"

namespace vkc::codegen::kernels {

// The tile for `op` on the target, or the reason why the int8 tensor-core kernel cannot or
// should not run it (then `why` is set and the SIMT kernel runs). `forced`: "" (the planner),
// "coopmat" (an error where it cannot run), "coopmat=TMxTNxTK" (that tile of the table).
struct IntegerCoopPlan {
  std::optional<GemmChoice> choice;
  std::string why;
};
IntegerCoopPlan plan_integer_coopmat(const ir::Op& op, const TargetLimits& target, const std::string& forced);

// The dispatches: pack input and filter into 16-byte int8 runs (conv), then the GEMM.
std::vector<EmittedKernel> emit_integer_coopmat(const ir::Op& op, const GemmChoice& choice, const KernelContext& ctx,
                                                std::vector<ScratchTensor>& scratch);

// The GLSL of the loop for `tile` (a CoopTile with vec 16); for_khr as gemm_coopmat_glsl.
// a_rows: A through the kernel's row hooks (conv::packed_row_fns with 16 values per load).
std::string integer_coopmat_glsl(const CoopTile& tile, bool store_m_fast, bool for_khr, bool a_rows = false);

}  // namespace vkc::codegen::kernels
