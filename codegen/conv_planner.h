// The workgroup-memory budget planner for conv and conv_transpose.
//
// Every conv is seen as a batched GEMM: per group, M = batch x output positions, N = output
// channels per group, K = input channels per group x kernel taps. Tiled strategies stage tiles of
// both operands in workgroup memory, so their footprint depends on the tile shape; the planner
// walks tile configs from the best down and keeps the first that fits the target's workgroup
// memory, invocation, workgroup-size and grid limits. Depthwise convs have no channel reduction
// to tile; their tiled kernel stages an input window instead (conv_planner_depthwise.h). The
// direct and one-output depthwise strategies need no workgroup memory at all, so planning never
// fails because of the budget.
//
// Tile choice also looks at the grid: a GEMM whose output is small (late layers at batch 1) would
// otherwise run a handful of workgroups on a device with a hundred compute units. The planner
// prefers tiles that give each compute unit (TargetLimits::compute_units) two workgroups, and when
// even that needs tiles too small to reuse anything and K is deep, splits the K loop over S
// workgroups per tile ("split_k": f32 partial sums in a scratch tensor, then a reduce dispatch that
// adds them, the bias and the fused epilogue once per output).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/conv_planner_depthwise.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "ir/conv_geometry.h"
#include "module/target_limits.h"

namespace vkc::codegen {

// The conv as a batched GEMM (one batch entry per group).
struct ConvGemmShape {
  int64_t groups = 1;
  int64_t m = 0;          // batch x output positions
  int64_t n = 0;          // output channels per group
  int64_t k = 0;          // input channels per group x kernel taps
  int64_t positions = 0;  // output positions per image (product of output spatial dims)
};
ConvGemmShape conv_gemm_shape(const ir::ConvGeometry& g);

// One tiled-GEMM configuration: a TM x TN output tile per workgroup, K consumed TK at a time, each
// invocation owning an RM x RN register block.
struct GemmTile {
  uint32_t tm = 0, tn = 0, tk = 0, rm = 0, rn = 0;
  uint32_t invocations() const { return (tm / rm) * (tn / rn); }
  // One f32 A tile (TK x TM) plus one f32 B tile (TK x TN).
  uint32_t workgroup_memory_bytes() const { return 4 * tk * (tm + tn); }
};

struct ConvPlan {
  // "direct", "depthwise" (one output per invocation), "depthwise_tiled", "implicit_gemm",
  // "implicit_gemm_coopmat" (float16 data on a target with cooperative matrices: the implicit
  // GEMM on tensor cores, float32 accumulation; chosen by itself where a group's input channels
  // are a multiple of 8, so that it stages 16-byte loads from packed copies, else only when
  // forced: codegen/kernels/gemm_coopmat.h, conv_pack.cpp),
  // "split_k" (implicit GEMM with the K loop split over `split_k` workgroups per tile, then a
  // reduce dispatch) or "im2col" (explicit columns in a scratch tensor, then the same tiled GEMM
  // reading them).
  std::string strategy;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::array<uint32_t, 3> workgroup_count{1, 1, 1};  // of the main (GEMM or direct) dispatch
  uint32_t workgroup_memory_bytes = 0;
  GemmTile tile;  // implicit_gemm, split_k and im2col only
  kernels::CoopTile coop;  // implicit_gemm_coopmat only
  DepthwiseTile depthwise;  // depthwise_tiled only
  uint64_t tile_count = 0;  // tiled strategies: groups x M tiles x N tiles
  // split_k only: K slices per tile (>= 2; slice s covers TK steps [s*steps/S, (s+1)*steps/S)),
  // so the GEMM dispatch runs tile_count x split_k workgroups and writes split_k x output
  // elements of f32 partial sums; the reduce dispatch runs one invocation per output element.
  uint32_t split_k = 1;
  uint64_t partial_elements = 0;
  std::array<uint32_t, 3> reduce_workgroup_size{1, 1, 1};
  std::array<uint32_t, 3> reduce_workgroup_count{1, 1, 1};
  std::map<std::string, int64_t> tiles;  // for reports
  std::string notes;
};

// The strategies that apply to this conv on this target (always includes "direct").
// `element_bytes` sizes the im2col scratch tensor.
std::vector<std::string> applicable_conv_strategies(const ir::ConvGeometry& g, const TargetLimits& t,
                                                    uint32_t element_bytes);

// Plans one conv or conv_transpose. `forced` ("" for the planner's choice) must be one of
// applicable_conv_strategies, else vkc::Error "<what>: strategy 'x' does not apply: <why>".
// "split_k" may also be forced as "split_k:S" (exactly S slices, 2 <= S <= the tile's K steps),
// for tests that need a given S; plain "split_k" takes the planner's S, at least 2.
ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   const std::string& forced, const std::string& what);

// The tile configs the planner tries, best first (exposed for tests and docs).
const std::vector<GemmTile>& gemm_tile_candidates();

}  // namespace vkc::codegen
