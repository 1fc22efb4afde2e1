#include "codegen/conv_planner.h"

#include <algorithm>
#include <optional>

#include "codegen/grid.h"
#include "codegen/kernels/gemm_core.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

constexpr uint64_t kMaxIndex = UINT32_MAX;  // kernels index with 32-bit unsigned integers
constexpr uint32_t kDirectWorkgroup = 64;
constexpr uint32_t kReduceWorkgroup = 256;
// Occupancy target: two workgroups per compute unit, so that one workgroup's barrier and load
// stalls overlap another's math, and a last partial wave costs at most half the run; and at
// least kInvocationsPerUnit invocations per unit, because small workgroups fill nothing: 392
// workgroups of 32 invocations (ResNet-18 layer1 at batch 1) left 3 warps per SM on the H200
// and ran at 2.7 TFLOP/s.
constexpr uint64_t kWorkgroupsPerUnit = 2;
constexpr uint64_t kInvocationsPerUnit = 256;
// Split K only when the reduction is deep enough that the S x output partial sums (written once
// and read once more) stay small next to the operand traffic and products of the GEMM itself.
constexpr int64_t kSplitMinK = 512;
// Each slice of a planner-chosen split keeps at least this many TK steps of products.
constexpr uint64_t kMinSliceSteps = 4;

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t grid_capacity(const TargetLimits& t) {
  return uint64_t(t.max_compute_work_group_count[0]) * t.max_compute_work_group_count[1];
}

uint64_t tiles_of(const GemmTile& tile, const ConvGemmShape& s) {
  return uint64_t(s.groups) * ceil_div(uint64_t(s.m), tile.tm) * ceil_div(uint64_t(s.n), tile.tn);
}

uint64_t k_steps_of(const GemmTile& tile, const ConvGemmShape& s) { return ceil_div(uint64_t(s.k), tile.tk); }

uint64_t output_elements(const ConvGemmShape& s) { return uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.n); }

// Why the tiled GEMM cannot run with `tile` on `t` ("" when it can).
std::string tile_misfit(const GemmTile& tile, const ConvGemmShape& s, const TargetLimits& t) {
  if (!kernels::gemm_core_supports({tile.tm, tile.tn, tile.tk, tile.rm, tile.rn}))
    return "the GEMM loop cannot stage this tile evenly";
  if (tile.workgroup_memory_bytes() > t.max_compute_shared_memory_size)
    return cat(tile.workgroup_memory_bytes(), " bytes of workgroup memory > ",
               t.max_compute_shared_memory_size);
  if (tile.invocations() > t.max_compute_work_group_invocations || tile.invocations() > t.max_compute_work_group_size[0])
    return cat(tile.invocations(), " invocations > ", t.max_compute_work_group_invocations);
  uint64_t tiles = tiles_of(tile, s);
  if (tiles > grid_capacity(t)) return cat(tiles, " workgroups exceed the grid limit");
  return "";
}

// Why `tile` cannot split K into `split` slices on `t` ("" when it can): every slice needs a TK
// step, the grid must hold tiles x slices workgroups, and the f32 partial sums (slices x output
// elements) must fit 32-bit indexing and maxStorageBufferRange.
std::string split_misfit(const GemmTile& tile, const ConvGemmShape& s, const TargetLimits& t, uint64_t split) {
  if (split < 2) return cat("split_k needs at least 2 slices, got ", split);
  if (k_steps_of(tile, s) < split)
    return cat("K = ", s.k, " has ", k_steps_of(tile, s), " steps of the ", tile.tk, "-deep tile, fewer than ",
               split, " slices");
  if (tiles_of(tile, s) * split > grid_capacity(t))
    return cat(tiles_of(tile, s) * split, " workgroups exceed the grid limit");
  uint64_t partials = output_elements(s) * split;
  if (partials > kMaxIndex) return cat("its partial sums have ", partials, " elements, above 32-bit indexing");
  if (partials * 4 > t.max_storage_buffer_range)
    return cat("its partial sums need ", partials * 4, " bytes, above maxStorageBufferRange ",
               t.max_storage_buffer_range);
  return "";
}

// The most slices (each at least `min_steps` TK steps) `tile` may split K into on `t`.
uint64_t split_limit(const GemmTile& tile, const ConvGemmShape& s, const TargetLimits& t, uint64_t min_steps) {
  uint64_t limit = k_steps_of(tile, s) / min_steps;
  uint64_t tiles = tiles_of(tile, s), out = output_elements(s);
  if (tiles == 0 || out == 0) return 0;  // an empty output has nothing to split
  limit = std::min({limit, grid_capacity(t) / tiles, kMaxIndex / out, t.max_storage_buffer_range / (4 * out)});
  return limit;
}

// Fraction of the padded tile work that is useful (1.0: the tiles cover M, N, K exactly).
double tile_efficiency(const GemmTile& tile, const ConvGemmShape& s) {
  double padded = double(ceil_div(uint64_t(s.m), tile.tm) * tile.tm) *
                  double(ceil_div(uint64_t(s.n), tile.tn) * tile.tn) *
                  double(ceil_div(uint64_t(s.k), tile.tk) * tile.tk);
  return double(s.m) * double(s.n) * double(s.k) / padded;
}

struct GemmChoice {
  GemmTile tile;
  uint64_t split = 1;  // K slices per tile
};

// The tile (and, when `allow_split`, the K split) for the GEMM. Candidates that waste more than a
// quarter of their work on padding are out (unless all do: then the least wasteful one, unsplit).
// Of the rest, best first, the first whose grid reaches the occupancy target (kWorkgroupsPerUnit
// workgroups and kInvocationsPerUnit invocations per compute unit) wins;
// a tile short of that may split K (when K >= kSplitMinK) into as many slices as reach it, each
// at least kMinSliceSteps deep. So a small output takes the largest tile that, split, fills the
// device, and a shallow K falls to smaller tiles instead. When nothing reaches the target, the
// choice with the most invocations. Unknown compute units (0) take the first tile, unsplit.
// False when no tile fits at all.
bool choose_gemm(const ConvGemmShape& s, const TargetLimits& t, bool allow_split, GemmChoice& out) {
  std::vector<GemmTile> efficient;
  bool found = false;
  double least_waste = -1;
  for (const GemmTile& tile : gemm_tile_candidates()) {
    if (!tile_misfit(tile, s, t).empty()) continue;
    double e = tile_efficiency(tile, s);
    if (e >= 0.75) efficient.push_back(tile);
    if (e > least_waste) {
      least_waste = e;
      out = {tile, 1};
      found = true;
    }
  }
  if (efficient.empty()) return found;
  const bool may_split = allow_split && s.k >= kSplitMinK;
  uint64_t best = 0, best_workgroups = 0;
  for (const GemmTile& tile : efficient) {
    // Workgroups of this tile that make up the occupancy target.
    const uint64_t want = std::max(kWorkgroupsPerUnit * t.compute_units,
                                   ceil_div(kInvocationsPerUnit * t.compute_units, tile.invocations()));
    uint64_t tiles = tiles_of(tile, s), split = 1;
    if (tiles > 0 && tiles < want && may_split)
      split = std::max<uint64_t>(1, std::min(ceil_div(want, tiles), split_limit(tile, s, t, kMinSliceSteps)));
    if (tiles * split >= want) {
      out = {tile, split};
      return true;
    }
    // Otherwise the most invocations; among equals (4x4 blocks all give M x N / 16), the most
    // workgroups.
    const uint64_t score = tiles * split * tile.invocations(), workgroups = tiles * split;
    if (score > best || (score == best && workgroups > best_workgroups)) {
      best = score;
      best_workgroups = workgroups;
      out = {tile, split};
    }
  }
  return true;
}

// "split_k:S" -> S; plain "split_k" -> 0 (the planner's S). Anything else after the colon is an error.
bool parse_forced_split(const std::string& strategy, uint64_t& split) {
  split = 0;
  if (strategy == "split_k") return true;
  const std::string prefix = "split_k:";
  if (strategy.rfind(prefix, 0) != 0 || strategy.size() == prefix.size() || strategy.size() > prefix.size() + 6)
    return false;
  for (size_t i = prefix.size(); i < strategy.size(); ++i) {
    if (strategy[i] < '0' || strategy[i] > '9') return false;
    split = split * 10 + uint64_t(strategy[i] - '0');
  }
  return true;
}

// The split of a split_k plan: the forced S, else the planner's, at least 2 (within the limits).
uint64_t split_for(const GemmChoice& c, const ConvGemmShape& s, const TargetLimits& t, uint64_t forced) {
  if (forced != 0) return forced;
  return std::min(std::max<uint64_t>(2, c.split), std::max<uint64_t>(2, split_limit(c.tile, s, t, 1)));
}

uint64_t im2col_elements(const ir::ConvGeometry& g) {
  ConvGemmShape s = conv_gemm_shape(g);
  return uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k);
}

// The fp16 tensor-core tile for this conv. When a group's input channels are a multiple of 8, A
// and B are staged K-fast with 16-byte loads from packed copies (codegen/kernels/conv_pack.cpp);
// else one element per load: A M-fast, B K-fast unless the filter's output channels are its
// innermost dim, as in conv_gemm_core_shape.
std::optional<kernels::CoopTile> coop_tile_for(const ir::ConvGeometry& g, const TargetLimits& t) {
  ConvGemmShape s = conv_gemm_shape(g);
  if (g.in_channels_per_group() % 8 == 0) return kernels::plan_coop_tile(s.m, s.n, t, s.groups, true, true, 8);
  bool b_kfast = g.filter_pos[0] != int(g.filter_pos.size()) - 1;
  return kernels::plan_coop_tile(s.m, s.n, t, s.groups, false, b_kfast);
}

// Why a strategy does not apply ("" when it does).
std::string misfit(const std::string& strategy, const ir::ConvGeometry& g, const TargetLimits& t,
                   uint32_t element_bytes) {
  ConvGemmShape s = conv_gemm_shape(g);
  if (strategy == "direct") return "";
  if (strategy == "depthwise")
    return g.in_channels_per_group() == 1 && g.groups == g.in_channels
               ? ""
               : cat("groups ", g.groups, " != input channels ", g.in_channels);
  if (strategy == "depthwise_tiled") {
    DepthwiseTile tile;
    return plan_depthwise_tile(g, t, tile);
  }
  if (strategy == "implicit_gemm_coopmat") {
    std::string why = kernels::coopmat_misfit(t);
    if (!why.empty()) return why;
    if (element_bytes != 2) return cat("its data is not float16 (", element_bytes, "-byte elements)");
    std::optional<kernels::CoopTile> c = coop_tile_for(g, t);
    if (!c) return cat("no fp16 tile fits target '", t.name, "'");
    if (tiles_of(GemmTile{c->tm, c->tn, c->tk, 16, 16}, s) > grid_capacity(t)) return "its tiles exceed the grid limit";
    return "";
  }
  uint64_t forced_split = 0;
  if (parse_forced_split(strategy, forced_split)) {
    GemmChoice c;
    if (!choose_gemm(s, t, true, c)) return cat("no GEMM tile fits target '", t.name, "'");
    return split_misfit(c.tile, s, t, split_for(c, s, t, forced_split));
  }
  if (strategy == "implicit_gemm" || strategy == "im2col") {
    GemmChoice c;
    if (!choose_gemm(s, t, false, c)) return cat("no GEMM tile fits target '", t.name, "'");
    if (strategy == "implicit_gemm") return "";
    uint64_t elements = im2col_elements(g);
    if (elements > kMaxIndex)
      return cat("its im2col matrix has ", elements, " elements, above 32-bit indexing");
    if (elements * element_bytes > t.max_storage_buffer_range)
      return cat("its im2col matrix needs ", elements * element_bytes,
                 " bytes, above maxStorageBufferRange ", t.max_storage_buffer_range);
    return "";
  }
  return "unknown strategy (expected direct, implicit_gemm, implicit_gemm_coopmat, split_k, split_k:S, depthwise, "
         "depthwise_tiled or im2col)";
}

void plan_one_per_output(ConvPlan& p, const ir::ConvGeometry& g, const TargetLimits& t,
                         const std::string& what) {
  uint64_t outputs = uint64_t(g.batch) * uint64_t(g.out_channels) * uint64_t(product(g.out_spatial));
  uint32_t wg = fit_workgroup_size_x(kDirectWorkgroup, t);
  p.workgroup_size = {wg, 1, 1};
  p.workgroup_count = linear_grid(outputs, wg, t, what);
  p.workgroup_memory_bytes = 0;
  p.tiles["outputs_per_invocation"] = 1;
  p.tiles["workgroup"] = wg;
}

void plan_depthwise_tiled(ConvPlan& p, const ir::ConvGeometry& g, const TargetLimits& t,
                          const std::string& what) {
  std::string why = plan_depthwise_tile(g, t, p.depthwise);
  check(why.empty(), what, ": internal: ", why);
  const DepthwiseTile& d = p.depthwise;
  p.workgroup_size = {d.invocations, 1, 1};
  p.workgroup_count = linear_grid(d.workgroups * d.invocations, d.invocations, t, what);
  p.workgroup_memory_bytes = d.workgroup_memory_bytes();
  p.tile_count = d.workgroups;
  p.tiles = {{"tile_d", d.out[0]},          {"tile_h", d.out[1]},
             {"tile_w", d.out[2]},          {"input_tile_d", d.in[0]},
             {"input_tile_h", d.in[1]},     {"input_tile_w", d.in[2]},
             {"outputs_per_invocation", d.slots}, {"channels_per_workgroup", d.channels},
             {"channel_blocks", d.channel_blocks}, {"workgroup", d.invocations},
             {"workgroups", int64_t(d.workgroups)}};
}

}  // namespace

ConvGemmShape conv_gemm_shape(const ir::ConvGeometry& g) {
  ConvGemmShape s;
  s.groups = g.groups;
  s.positions = product(g.out_spatial);
  s.m = g.batch * s.positions;
  s.n = g.out_channels_per_group();
  s.k = g.in_channels_per_group() * product(g.kernel);
  return s;
}

const std::vector<GemmTile>& gemm_tile_candidates() {
  // Largest reuse first: bigger output tiles read each staged element more times. Register blocks
  // of 4x4 (8x8 on the largest tile) keep 16-64 accumulators per invocation.
  static const std::vector<GemmTile> tiles{
      {128, 128, 16, 8, 8},  // 256 invocations, 16 KiB
      {128, 64, 16, 8, 4},   // 256 invocations, 12 KiB
      {64, 128, 16, 4, 8},   // 256 invocations, 12 KiB
      {64, 64, 16, 4, 4},    // 256 invocations, 8 KiB
      {64, 32, 16, 4, 4},    // 128 invocations, 6 KiB
      {32, 64, 16, 4, 4},    // 128 invocations, 6 KiB
      {32, 32, 16, 4, 4},    // 64 invocations, 4 KiB
      {32, 16, 16, 4, 4},    // 32 invocations, 3 KiB
      {16, 32, 16, 4, 4},    // 32 invocations, 3 KiB
      {16, 16, 8, 2, 2},     // 64 invocations, 1 KiB
      {16, 8, 8, 2, 2},      // 32 invocations, 768 B
      {8, 16, 8, 2, 2},      // 32 invocations, 768 B
  };
  return tiles;
}

std::vector<std::string> applicable_conv_strategies(const ir::ConvGeometry& g, const TargetLimits& t,
                                                    uint32_t element_bytes) {
  std::vector<std::string> out;
  for (const char* s : {"direct", "implicit_gemm", "implicit_gemm_coopmat", "split_k", "depthwise", "depthwise_tiled", "im2col"})
    if (misfit(s, g, t, element_bytes).empty()) out.push_back(s);
  return out;
}

ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   const std::string& forced, const std::string& what) {
  ConvPlan p;
  ConvGemmShape s = conv_gemm_shape(g);
  uint64_t forced_split = 0;
  if (!forced.empty()) {
    std::string why = misfit(forced, g, t, element_bytes);
    check(why.empty(), what, ": strategy '", forced, "' does not apply: ", why);
    p.strategy = parse_forced_split(forced, forced_split) ? "split_k" : forced;
  } else if (misfit("depthwise", g, t, element_bytes).empty()) {
    // K per output channel is only the kernel taps: no GEMM to tile, but the tiled kernel reuses
    // each input element across taps and channel multiplier from workgroup memory and registers.
    // Layouts whose W is not innermost keep the one-output kernel, whose stores follow the
    // output's physical order.
    bool tiled = misfit("depthwise_tiled", g, t, element_bytes).empty() && depthwise_tile_coalesced(g);
    p.strategy = tiled ? "depthwise_tiled" : "depthwise";
    if (!tiled) p.notes = "depthwise: W is not innermost or no depthwise tile fits the target";
  } else {
    // Tiles pay off once each staged element is reused: enough K, and M, N beyond a few rows.
    GemmChoice c;
    bool tiled = s.k >= 8 && s.m >= 16 && s.n >= 8 && choose_gemm(s, t, true, c);
    p.strategy = !tiled ? "direct" : c.split > 1 ? "split_k" : "implicit_gemm";
    if (!tiled) p.notes = "direct: problem too small for tiles or no tile fits the target";
    // float16 data on tensor cores where they stage 16 bytes per load: 3-5x the FMA kernels on the
    // H200 (bench/RESULTS.md, Run N). One-element staging stays opt-in: it was no faster (Run I).
    std::optional<kernels::CoopTile> coop;
    if (tiled && misfit("implicit_gemm_coopmat", g, t, element_bytes).empty()) coop = coop_tile_for(g, t);
    if (coop && coop->vec == 8) p.strategy = "implicit_gemm_coopmat";
  }
  if (p.strategy == "direct" || p.strategy == "depthwise") {
    plan_one_per_output(p, g, t, what);
    return p;
  }
  if (p.strategy == "depthwise_tiled") {
    plan_depthwise_tiled(p, g, t, what);
    return p;
  }
  if (p.strategy == "implicit_gemm_coopmat") {
    p.coop = *coop_tile_for(g, t);
    const kernels::CoopTile& c = p.coop;
    p.tile = GemmTile{c.tm, c.tn, c.tk, 16, 16};  // the tile grid (tiles_of); no register blocks
    p.tile_count = tiles_of(p.tile, s);
    p.workgroup_size = {c.invocations(), 1, 1};
    p.workgroup_count = linear_grid(p.tile_count * c.invocations(), c.invocations(), t, what);
    p.workgroup_memory_bytes = c.workgroup_memory_bytes();
    p.tiles = {{"tile_m", c.tm}, {"tile_n", c.tn}, {"tile_k", c.tk}, {"subgroups_m", c.wm},
               {"subgroups_n", c.wn}, {"staging_load_halves", c.vec}, {"gemm_m", s.m}, {"gemm_n", s.n}, {"gemm_k", s.k},
               {"groups", s.groups}, {"workgroups", int64_t(p.tile_count)}};
    return p;
  }
  const bool split = p.strategy == "split_k";
  GemmChoice c;
  check(choose_gemm(s, t, split, c), what, ": internal: no GEMM tile fits");
  p.tile = c.tile;
  const GemmTile& tile = p.tile;
  p.tile_count = tiles_of(tile, s);
  p.split_k = split ? uint32_t(split_for(c, s, t, forced_split)) : 1;
  check(!split || split_misfit(tile, s, t, p.split_k).empty(), what, ": internal: ", split_misfit(tile, s, t, p.split_k));
  uint64_t workgroups = p.tile_count * p.split_k;
  p.workgroup_size = {tile.invocations(), 1, 1};
  p.workgroup_count = linear_grid(workgroups * tile.invocations(), tile.invocations(), t, what);
  p.workgroup_memory_bytes = tile.workgroup_memory_bytes();
  p.tiles = {{"tile_m", tile.tm}, {"tile_n", tile.tn}, {"tile_k", tile.tk},
             {"thread_m", tile.rm}, {"thread_n", tile.rn}, {"gemm_m", s.m},
             {"gemm_n", s.n},       {"gemm_k", s.k},       {"groups", s.groups},
             {"workgroups", int64_t(workgroups)}};
  if (split) {
    p.partial_elements = output_elements(s) * p.split_k;
    uint32_t wg = fit_workgroup_size_x(kReduceWorkgroup, t);
    p.reduce_workgroup_size = {wg, 1, 1};
    p.reduce_workgroup_count = linear_grid(output_elements(s), wg, t, what);
    p.tiles["split_k"] = p.split_k;
    p.tiles["k_steps_per_split"] = int64_t(ceil_div(k_steps_of(tile, s), p.split_k));
    if (forced.empty())
      p.notes = cat("split_k: ", p.tile_count, " tiles for ", t.compute_units,
                    " compute units; K split in ", p.split_k, " slices, partial sums reduced by a second dispatch");
  }
  return p;
}

}  // namespace vkc::codegen
