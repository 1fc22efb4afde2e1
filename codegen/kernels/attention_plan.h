// The attention kernel's tiling (shaders/attention.comp): query rows per workgroup (BQ) and keys
// per tile (BK), chosen against the target's workgroup memory, grid and invocation limits. The
// fusion pass asks it first (codegen/compiler.cpp), so an attention it cannot tile stays the
// unfused matmul/softmax/matmul chain instead of failing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "module/target_limits.h"

namespace vkc::codegen::kernels {

struct AttentionPlan {
  uint32_t bq = 0, bk = 0;          // query rows per workgroup, keys per tile
  uint32_t rm = 0, kc = 0, c4 = 0;  // per invocation: rows, keys of a tile, vec4 chunks of output dims
  uint32_t workgroup_memory_bytes = 0;
  uint32_t workgroups_x = 0, workgroups_y = 0;  // query tiles, batches
};

inline constexpr uint32_t kAttentionRowGroups = 16, kAttentionLanes = 8;  // TY x TX in the shader
inline constexpr uint32_t kAttentionThreads = kAttentionRowGroups * kAttentionLanes;
inline constexpr int64_t kAttentionMaxHeadDim = 256;

// The plan for attention with these extents, or nullopt when no tiling fits the target (or the
// head dims are above kAttentionMaxHeadDim). `forced` ("64x32": BQ x BK; BQ 16, 32 or 64, BK 8, 16 or 32) pins the tiles (tests).
std::optional<AttentionPlan> plan_attention(int64_t batches, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                            const TargetLimits& target, const std::string& forced = "");
// The same for an attention op; nullopt too when one of its tensors is beyond one binding.
std::optional<AttentionPlan> plan_attention(const ir::Op& attention, const TargetLimits& target,
                                            const std::string& forced = "");

}  // namespace vkc::codegen::kernels
