// What the contraction kernels (MatMul, BatchMatMul, Gemm; contraction.cpp) may run, and the
// tile they take unforced, for the kernel and for dispatch formation's cost estimates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codegen/gemm_planner.h"

namespace vkc::codegen::kernels {

// Names appear only at the edges (the forced-strategy option, reports).
enum class ContractionStrategy {
  tiled,    // FMA tiles in workgroup memory (gemm_core.glsl)
  coopmat,  // float16 operands on tensor cores, float32 sums (gemm_coopmat.glsl)
  dot,      // thin problems: K split over a workgroup (matmul_dot.comp)
  naive,    // one invocation per output, no workgroup memory
};
std::string_view contraction_strategy_name(ContractionStrategy s);
// vkc::Error naming `what` and the strategies for any other text.
ContractionStrategy parse_contraction_strategy(const std::string& text, const std::string& what);

// The FMA tile and K split an M x N x K problem takes when nothing is forced: the GEMM planner's
// (K split where the output's tiles do not fill the device), or nullopt where the problem is too
// thin for tiles to pay (the dot or naive kernel).
std::optional<GemmChoice> contraction_choice(int64_t m, int64_t n, int64_t k, const TargetLimits& target,
                                             int64_t batches = 1);
// The tile of contraction_choice (fusion budgets and planner tests read only the tile).
// The FMA tile an M x N x K problem takes when nothing is forced: the GEMM planner's, unless the
// problem is too thin for tiles to pay (then nullopt: the dot or naive kernel).
std::optional<SimtTile> contraction_tile(int64_t m, int64_t n, int64_t k, const TargetLimits& target,
                                         int64_t batches = 1);

}  // namespace vkc::codegen::kernels
