// The conv planner: what is particular to conv and conv_transpose.
//
// Every conv is seen as a batched GEMM: per group, M = batch x output positions, N = output
// channels per group, K = input channels per group x kernel taps, and its tile comes from the one
// GEMM planner (codegen/gemm_planner.h), FMA or tensor-core. What this planner adds is the
// choice among the conv's own kernels: the implicit GEMM (gathering A from the input as it
// stages), the same with K split over several workgroups per tile and a reduce dispatch
// ("split_k": f32 partial sums in a scratch tensor, then a second dispatch adds them, the bias and
// the fused epilogue once per output; taken where the output's tiles do not fill the device),
// explicit im2col + GEMM, and the kernels that need no GEMM: depthwise convs have no channel
// reduction to tile, so their tiled kernel stages an input window instead
// (conv_planner_depthwise.h), and the direct and one-output depthwise kernels need no workgroup
// memory at all, so planning never fails because of the budget.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/conv_planner_depthwise.h"
#include "codegen/gemm_planner.h"
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
  int64_t phases = 1;     // a strided conv_transpose: phases per conv group (codegen/conv_phases.h);
                          // groups, positions and k are then per phase
};
ConvGemmShape conv_gemm_shape(const ir::ConvGeometry& g);

// The conv's kernels. Names appear only at the edges: the forced-strategy option, reports and
// the manifest (conv_strategy_name / parse_conv_strategy).
enum class ConvStrategy {
  direct,                 // one output per invocation, no workgroup memory
  depthwise,              // likewise, for depthwise convs
  depthwise_tiled,        // depthwise: a tile of outputs per workgroup, input window staged
  depthwise_channels_last,  // depthwise, channels innermost: invocations over channels, a W run each
  implicit_gemm,          // GEMM with A gathered from the input while staging (FMA tiles)
  implicit_gemm_coopmat,  // the same on fp16 tensor cores, f32 sums (kernels/gemm_coopmat.h)
  split_k,                // implicit GEMM with K split over workgroups, then a reduce dispatch
  im2col,                 // explicit columns in a scratch tensor, then the GEMM reading them
};
inline constexpr ConvStrategy kConvStrategies[] = {
    ConvStrategy::direct,        ConvStrategy::implicit_gemm, ConvStrategy::implicit_gemm_coopmat,
    ConvStrategy::split_k,       ConvStrategy::depthwise,     ConvStrategy::depthwise_tiled,
    ConvStrategy::depthwise_channels_last, ConvStrategy::im2col};
std::string_view conv_strategy_name(ConvStrategy s);
inline bool is_gemm(ConvStrategy s) {
  return s == ConvStrategy::implicit_gemm || s == ConvStrategy::implicit_gemm_coopmat ||
         s == ConvStrategy::split_k || s == ConvStrategy::im2col;
}

// A forced strategy as the user wrote it: a name, and for split_k an optional slice count
// ("split_k:S", exactly S slices); or one FMA tile, "implicit_gemm=TMxTNxTK/RMxRN/STAGES[/kSPLIT]"
// (split_k with S slices when SPLIT > 1), to measure tiles against each other on convs as
// "tiled=..." does on matmuls. vkc::Error for anything else, listing the forms.
struct ForcedConvStrategy {
  ConvStrategy strategy;
  uint64_t split = 0;  // split_k:S -> S; 0: the planner's
  // implicit_gemm=... (a SimtTile) or implicit_gemm_coopmat=... (a CoopTile, its subgroup size,
  // fragment and staging taken from the target and conv as a planned one's): this tile instead of
  // the planner's.
  std::optional<GemmTile> tile;
};
ForcedConvStrategy parse_conv_strategy(const std::string& text, const std::string& what);

struct ConvPlan {
  ConvStrategy strategy = ConvStrategy::direct;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::array<uint32_t, 3> workgroup_count{1, 1, 1};  // of the main (GEMM or direct) dispatch
  uint32_t workgroup_memory_bytes = 0;
  // GEMM strategies: the tile (a CoopTile for implicit_gemm_coopmat, else a SimtTile).
  GemmTile tile;
  DepthwiseTile depthwise;  // depthwise_tiled only
  // depthwise_channels_last only: consecutive W outputs of one channel per invocation.
  uint32_t run_w = 1;
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
  const SimtTile& simt() const { return std::get<SimtTile>(tile); }
  std::string_view strategy_name() const { return conv_strategy_name(strategy); }
  const CoopTile& coop() const { return std::get<CoopTile>(tile); }
};

// The strategies that apply to this conv on this target (always includes direct).
// `element_bytes` sizes the im2col scratch tensor.
std::vector<ConvStrategy> applicable_conv_strategies(const ir::ConvGeometry& g, const TargetLimits& t,
                                                    uint32_t element_bytes);

// Plans one conv or conv_transpose. `forced` (nullopt for the planner's choice) must be one of
// applicable_conv_strategies, else vkc::Error "<what>: strategy 'x' does not apply: <why>". A
// forced split_k with `split` S takes exactly S slices (2 <= S <= the tile's K steps), for tests
// that need a given S; 0 takes the planner's S, at least 2.
ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   std::optional<ForcedConvStrategy> forced, const std::string& what);
// The same with the forced strategy as text ("" for none), as the forced-strategy option gives it.
ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   const std::string& forced, const std::string& what);

// Whether the SIMT GEMM kernel of `p` (implicit_gemm or split_k, forward conv) walks its columns
// tap-major (k = tap * Cg + c) with one kernel tap per K slice: a group's input channels are a
// multiple of the slice. Each invocation then decodes the tap and tests its row's position once
// per slice, not once per staged element (codegen/kernels/conv_gemm.cpp), and a filter stored
// output channels, taps, input channels (ir/passes/pack_conv_filters.cpp) is read contiguously.
bool conv_slices_hold_one_tap(const ir::ConvGeometry& g, const ConvPlan& p);

// Whether a forward conv's FMA results can leave 4 output positions at a time: each image's
// positions lie densely, the last spatial dim fastest, and come in whole quads, and its channel
// planes (of `element_bytes` elements) are not a multiple of kQuadPlaneBytes. kernels/conv_gemm.cpp
// stores in quads where this holds and the epilogue allows it; the planner offers the tiles
// measured that way only where it holds (GemmProblem::quad_positions).
bool conv_positions_in_quads(const ir::ConvGeometry& g, uint32_t element_bytes);

// The conv as the GEMM planner sees it, with the loops its operands allow for `strategy`.
GemmProblem conv_gemm_problem(const ir::ConvGeometry& g, ConvStrategy strategy, uint32_t element_bytes);

}  // namespace vkc::codegen
