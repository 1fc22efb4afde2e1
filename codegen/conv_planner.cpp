#include "codegen/conv_planner.h"

#include <algorithm>

#include "codegen/grid.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

constexpr uint64_t kMaxIndex = UINT32_MAX;  // kernels index with 32-bit unsigned integers
constexpr uint32_t kDirectWorkgroup = 64;

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

bool grid_fits(uint64_t workgroups, const TargetLimits& t) {
  return workgroups <= uint64_t(t.max_compute_work_group_count[0]) * t.max_compute_work_group_count[1];
}

// Why the tiled GEMM cannot run with `tile` on `t` ("" when it can).
std::string tile_misfit(const GemmTile& tile, const ConvGemmShape& s, const TargetLimits& t) {
  if (tile.workgroup_memory_bytes() > t.max_compute_shared_memory_size)
    return cat(tile.workgroup_memory_bytes(), " bytes of workgroup memory > ",
               t.max_compute_shared_memory_size);
  if (tile.invocations() > t.max_compute_work_group_invocations || tile.invocations() > t.max_compute_work_group_size[0])
    return cat(tile.invocations(), " invocations > ", t.max_compute_work_group_invocations);
  uint64_t tiles = uint64_t(s.groups) * ceil_div(uint64_t(s.m), tile.tm) * ceil_div(uint64_t(s.n), tile.tn);
  if (!grid_fits(tiles, t)) return cat(tiles, " workgroups exceed the grid limit");
  return "";
}

// Fraction of the padded tile work that is useful (1.0: the tiles cover M, N, K exactly).
double tile_efficiency(const GemmTile& tile, const ConvGemmShape& s) {
  double padded = double(ceil_div(uint64_t(s.m), tile.tm) * tile.tm) *
                  double(ceil_div(uint64_t(s.n), tile.tn) * tile.tn) *
                  double(ceil_div(uint64_t(s.k), tile.tk) * tile.tk);
  return double(s.m) * double(s.n) * double(s.k) / padded;
}

// Best fitting tile: the first candidate (best first) that wastes at most a quarter of its work
// on padding; failing that, the fitting one that wastes least. False when none fits.
bool choose_tile(const ConvGemmShape& s, const TargetLimits& t, GemmTile& out) {
  bool found = false;
  double best = -1;
  for (const GemmTile& tile : gemm_tile_candidates()) {
    if (!tile_misfit(tile, s, t).empty()) continue;
    double e = tile_efficiency(tile, s);
    if (e >= 0.75) {
      out = tile;
      return true;
    }
    if (e > best) {
      best = e;
      out = tile;
      found = true;
    }
  }
  return found;
}

uint64_t im2col_elements(const ir::ConvGeometry& g) {
  ConvGemmShape s = conv_gemm_shape(g);
  return uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k);
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
  if (strategy == "implicit_gemm" || strategy == "im2col") {
    GemmTile tile;
    if (!choose_tile(s, t, tile)) return cat("no GEMM tile fits target '", t.name, "'");
    if (strategy == "implicit_gemm") return "";
    uint64_t elements = im2col_elements(g);
    if (elements > kMaxIndex)
      return cat("its im2col matrix has ", elements, " elements, above 32-bit indexing");
    if (elements * element_bytes > t.max_storage_buffer_range)
      return cat("its im2col matrix needs ", elements * element_bytes,
                 " bytes, above maxStorageBufferRange ", t.max_storage_buffer_range);
    return "";
  }
  return "unknown strategy (expected direct, implicit_gemm, depthwise, depthwise_tiled or im2col)";
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
  for (const char* s : {"direct", "implicit_gemm", "depthwise", "depthwise_tiled", "im2col"})
    if (misfit(s, g, t, element_bytes).empty()) out.push_back(s);
  return out;
}

ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   const std::string& forced, const std::string& what) {
  ConvPlan p;
  ConvGemmShape s = conv_gemm_shape(g);
  if (!forced.empty()) {
    std::string why = misfit(forced, g, t, element_bytes);
    check(why.empty(), what, ": strategy '", forced, "' does not apply: ", why);
    p.strategy = forced;
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
    GemmTile tile;
    bool tiled = s.k >= 8 && s.m >= 16 && s.n >= 8 && choose_tile(s, t, tile);
    p.strategy = tiled ? "implicit_gemm" : "direct";
    if (!tiled) p.notes = "direct: problem too small for tiles or no tile fits the target";
  }
  if (p.strategy == "direct" || p.strategy == "depthwise") {
    plan_one_per_output(p, g, t, what);
    return p;
  }
  if (p.strategy == "depthwise_tiled") {
    plan_depthwise_tiled(p, g, t, what);
    return p;
  }
  check(choose_tile(s, t, p.tile), what, ": internal: no GEMM tile fits");
  const GemmTile& tile = p.tile;
  p.tile_count = uint64_t(s.groups) * ceil_div(uint64_t(s.m), tile.tm) * ceil_div(uint64_t(s.n), tile.tn);
  p.workgroup_size = {tile.invocations(), 1, 1};
  p.workgroup_count = linear_grid(p.tile_count * tile.invocations(), tile.invocations(), t, what);
  p.workgroup_memory_bytes = tile.workgroup_memory_bytes();
  p.tiles = {{"tile_m", tile.tm}, {"tile_n", tile.tn}, {"tile_k", tile.tk},
             {"thread_m", tile.rm}, {"thread_n", tile.rn}, {"gemm_m", s.m},
             {"gemm_n", s.n},       {"gemm_k", s.k},       {"groups", s.groups}};
  return p;
}

}  // namespace vkc::codegen
