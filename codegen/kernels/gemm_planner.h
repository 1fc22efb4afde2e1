// Tile plans for the tiled GEMM (codegen/kernels/contraction.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "module/target_limits.h"

namespace vkc::codegen::kernels {

// A workgroup computes a tile_m x tile_n output tile, staging tile_k-deep slices of A and B in
// workgroup memory (`stages` copies of them, gemm_core.glsl); each invocation owns a reg_m x reg_n
// block of accumulators.
struct GemmTile {
  int64_t tile_m, tile_n, tile_k, reg_m, reg_n;
  int64_t stages = 1;
  uint32_t invocations() const { return uint32_t((tile_m / reg_m) * (tile_n / reg_n)); }
  uint32_t workgroup_memory_bytes() const { return uint32_t((tile_m + tile_n) * tile_k * 4 * stages); }
  std::string str() const;
};

// The largest tile (from 128x128x16 with 8x8 register blocks down to 16x16x8 with 2x2; on NVIDIA
// first 256x128 with 16x8 blocks and two stages) that fits the
// target's invocation, workgroup-size and workgroup-memory limits, does not overshoot the
// problem by much and gives `batches` x tiles >= 2 workgroups per compute unit
// (TargetLimits::compute_units; a small problem thus takes smaller tiles to fill the device, and
// when none reaches that, the tile with the most workgroups); nullopt when none fits (the caller
// falls back to the naive kernel).
std::optional<GemmTile> plan_gemm_tile(int64_t m, int64_t n, const TargetLimits& target, int64_t batches = 1);

// The tile the contraction kernel uses for an M x N x K problem when no strategy is forced:
// plan_gemm_tile's, unless the problem is too thin for tiles to pay (then nullopt: naive kernel).
// Dispatch formation asks the same question to estimate what a fused prologue costs.
std::optional<GemmTile> default_gemm_tile(int64_t m, int64_t n, int64_t k, const TargetLimits& target,
                                          int64_t batches = 1);

}  // namespace vkc::codegen::kernels
