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

// The tensor-core form (shaders/attention_coopmat.comp, codegen/kernels/attention_coopmat.cpp):
// float16 q, k and v, float32 sums. WARPS subgroups of FRAG_M query rows each (BQ = WARPS x fm),
// keys in tiles of BK; head dims padded to whole fragments (hdp, dvp).
struct AttentionCoopPlan {
  uint32_t warps = 0, bk = 0, subgroup = 0;
  uint32_t fm = 0, fn = 0, fk = 0;
  uint32_t hdp = 0, dvp = 0;
  uint32_t workgroup_memory_bytes = 0;
  uint32_t workgroups_x = 0, workgroups_y = 0;  // query tiles, batches
  uint32_t bq() const { return warps * fm; }
  uint32_t invocations() const { return warps * subgroup; }
};
inline constexpr int64_t kAttentionCoopMaxHeadDim = 128;  // the output accumulators stay in registers

// The tensor-core plan, or nullopt with `why` saying what does not fit (no cooperative matrices,
// head dims above kAttentionCoopMaxHeadDim, no tile within the workgroup memory). `tiles`: ""
// (the planner's choice) or "BQxBK" to pin one (tests, benchmarks).
std::optional<AttentionCoopPlan> plan_attention_coopmat(int64_t batches, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                                        const TargetLimits& target, const std::string& tiles,
                                                        std::string& why);

// Whether the FMA kernel combines its rows' maxima over a key tile with subgroup shuffles (the
// TX lanes of a row group inside one subgroup) instead of through workgroup memory and a barrier.
bool attention_row_max_by_shuffle(const TargetLimits& target);

// The plan for attention with these extents, or nullopt when no tiling fits the target (or the
// head dims are above kAttentionMaxHeadDim). `forced` ("64x32": BQ x BK; BQ 16, 32 or 64, BK 8, 16 or 32) pins the tiles (tests).
std::optional<AttentionPlan> plan_attention(int64_t batches, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                            const TargetLimits& target, const std::string& forced = "");
// The same for an attention op; nullopt too when one of its tensors is beyond one binding.
std::optional<AttentionPlan> plan_attention(const ir::Op& attention, const TargetLimits& target,
                                            const std::string& forced = "");

}  // namespace vkc::codegen::kernels
