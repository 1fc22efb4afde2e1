// The fp16 tensor-core GEMM loop (shaders/gemm_coopmat.glsl): its tile plans and specialization.
// Used by the conv strategy "implicit_gemm_coopmat" (conv_planner.cpp) and the contraction
// strategy "coopmat" (contraction.cpp) for float16 operands on targets with cooperative matrices
// (TargetLimits::cooperative_matrix_nv). Products accumulate in float32.
//
// Operands are staged either one element per call (any operand, through its fused prologue) or 8
// float16 values per 16-byte load (vec 8: operands whose fast dim is contiguous and a multiple
// of 8; the conv kernel packs its input and filter into such a form first). On the H200 the
// one-element form was no faster than the FMA kernels (bench/RESULTS.md, Run I: its staging
// arithmetic, not the MMAs, bounded it); the 16-byte form is what makes tensor cores pay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "module/target_limits.h"

namespace vkc::codegen::kernels {

// A TM x TN output tile per workgroup of WM x WN subgroups, K staged TK at a time.
struct CoopTile {
  uint32_t tm = 0, tn = 0, tk = 0, wm = 0, wn = 0;
  uint32_t subgroup = 0;  // the target's (fixed) subgroup size
  // Staging order per operand, as in gemm_core.h: K-fast when the operand's k is contiguous.
  bool a_kfast = false, b_kfast = false;
  // float16 values per staged load: 1 (a_load / b_load) or 8 (a_load8 / b_load8, a uvec4).
  uint32_t vec = 1;
  uint32_t invocations() const { return wm * wn * subgroup; }
  // Both float16 operand tiles (rows padded by 8 halves) and one float 16 x 16 scratch per subgroup:
  // exactly the shader's shared arrays.
  uint32_t workgroup_memory_bytes() const;
  std::string str() const;
};

// Why the target cannot run the loop at all ("" when it can): cooperative matrices, float16
// arithmetic, and one fixed subgroup size (the loop's staging assumes it).
std::string coopmat_misfit(const TargetLimits& t);

// The largest tile (128 x 128 down to 32 x 32) that fits the target's workgroup memory and
// invocation limits and, when one does, gives at least one workgroup per compute unit for
// `batches` x tiles; else the fitting tile with the most workgroups. nullopt when none fits.
std::optional<CoopTile> plan_coop_tile(int64_t m, int64_t n, const TargetLimits& t, int64_t batches,
                                       bool a_kfast, bool b_kfast, uint32_t vec = 1);

// The GLSL for a kernel's ${GEMM_CORE}; store_m_fast: results leave walking M fastest.
std::string gemm_coopmat_glsl(const CoopTile& tile, bool store_m_fast);


}  // namespace vkc::codegen::kernels
