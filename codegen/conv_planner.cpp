#include "codegen/conv_planner.h"

#include <algorithm>
#include <optional>

#include "codegen/conv_phases.h"
#include "codegen/grid.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace {

constexpr uint64_t kMaxIndex = UINT32_MAX;  // kernels index with 32-bit unsigned integers
constexpr uint32_t kDirectWorkgroup = 64;
constexpr uint32_t kReduceWorkgroup = 256;

uint64_t output_elements(const ir::ConvGeometry& g) {
  return uint64_t(g.batch) * uint64_t(g.out_channels) * uint64_t(product(g.out_spatial));
}

// The split of a split_k plan: the forced S, else the planner's, at least 2 (within the limits).
uint64_t split_for(const GemmChoice& c, const GemmProblem& p, const TargetLimits& t, uint64_t forced) {
  if (forced != 0) return forced;
  return std::min(std::max<uint64_t>(2, c.split), std::max<uint64_t>(2, split_limit(c.tile, p, t, 1)));
}

uint64_t im2col_elements(const ir::ConvGeometry& g) {
  ConvGemmShape s = conv_gemm_shape(g);
  return uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k);
}

// Why a strategy does not apply ("" when it does); `forced_split` as in ForcedConvStrategy.
std::string misfit(ConvStrategy strategy, const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   uint64_t forced_split = 0) {
  const GemmProblem problem = conv_gemm_problem(g, strategy, element_bytes);
  switch (strategy) {
    case ConvStrategy::direct: return "";
    case ConvStrategy::depthwise:
      return g.in_channels_per_group() == 1 && g.groups == g.in_channels
                 ? ""
                 : cat("groups ", g.groups, " != input channels ", g.in_channels);
    case ConvStrategy::depthwise_tiled: {
      DepthwiseTile tile;
      return plan_depthwise_tile(g, t, tile);
    }
    case ConvStrategy::depthwise_channels_last:
      if (g.in_channels_per_group() != 1 || g.groups != g.in_channels)
        return cat("groups ", g.groups, " != input channels ", g.in_channels);
      return g.transposed ? "conv_transpose has no fixed input window per output run" : "";
    case ConvStrategy::implicit_gemm_coopmat: {
      std::string why = kernels::coopmat_misfit(t);
      if (!why.empty()) return why;
      if (element_bytes != 2) return cat("its data is not float16 (", element_bytes, "-byte elements)");
      if (!choose_gemm(problem, t)) return cat("no fp16 tile fits target '", t.name, "'");
      return "";
    }
    case ConvStrategy::split_k: {
      std::optional<GemmChoice> c = choose_gemm(problem, t);
      if (!c) return cat("no GEMM tile fits target '", t.name, "'");
      return split_misfit(c->tile, problem, t, split_for(*c, problem, t, forced_split));
    }
    case ConvStrategy::implicit_gemm: return choose_gemm(problem, t) ? "" : cat("no GEMM tile fits target '", t.name, "'");
    case ConvStrategy::im2col: {
      if (conv_phases(g).on) return "a strided conv_transpose runs phase by phase, with no column matrix";
      if (!choose_gemm(problem, t)) return cat("no GEMM tile fits target '", t.name, "'");
      uint64_t elements = im2col_elements(g);
      if (elements > kMaxIndex) return cat("its im2col matrix has ", elements, " elements, above 32-bit indexing");
      if (elements * element_bytes > t.max_storage_buffer_range)
        return cat("its im2col matrix needs ", elements * element_bytes, " bytes, above maxStorageBufferRange ",
                   t.max_storage_buffer_range);
      return "";
    }
  }
  return "";
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

// One invocation per run of plan.run_w outputs along W, channels fastest.
void plan_depthwise_channels_last(ConvPlan& p, const ir::ConvGeometry& g, const TargetLimits& t,
                                  const std::string& what) {
  p.run_w = depthwise_run_w(g);
  const uint64_t runs = uint64_t(g.batch) * uint64_t(g.out_channels) *
                        uint64_t(product(g.out_spatial) / g.out_spatial.back()) *
                        ceil_div(uint64_t(g.out_spatial.back()), p.run_w);
  uint32_t wg = fit_workgroup_size_x(kDirectWorkgroup, t);
  p.workgroup_size = {wg, 1, 1};
  p.workgroup_count = linear_grid(runs, wg, t, what);
  p.workgroup_memory_bytes = 0;
  p.tiles["outputs_per_invocation"] = p.run_w;
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

// The planner's own choice (nothing forced).
ConvStrategy choose_strategy(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                             std::string& notes) {
  if (misfit(ConvStrategy::depthwise, g, t, element_bytes).empty()) {
    // K per output channel is only the kernel taps: no GEMM to tile, but the tiled kernel reuses
    // each input element across taps and channel multiplier from workgroup memory and registers.
    // Channels innermost (the fp16 channels-last regions): invocations over channels. Other
    // layouts whose W is not innermost keep the one-output kernel, whose stores follow the
    // output's physical order.
    if (channels_innermost(g) && !g.transposed) return ConvStrategy::depthwise_channels_last;
    bool tiled = misfit(ConvStrategy::depthwise_tiled, g, t, element_bytes).empty() && depthwise_tile_coalesced(g);
    if (!tiled) notes = "depthwise: W is not innermost or no depthwise tile fits the target";
    return tiled ? ConvStrategy::depthwise_tiled : ConvStrategy::depthwise;
  }
  // Tiles pay off once each staged element is reused: enough K, and M, N beyond a few rows.
  ConvGemmShape s = conv_gemm_shape(g);
  std::optional<GemmChoice> c;
  if (s.k >= 8 && s.m >= 16 && s.n >= 8) {
    // Splitting is allowed here, and the tiles offered only where results leave in quads are
    // offered as the unsplit kernel would run them: they never split (their grid fills the device
    // by itself), so where one is taken the conv runs unsplit, with quads. ResNet-50's layer-3 3x3
    // at batch 32 took 0.299 ms on 128x32 that way against 0.405 split in 3 (H200, session 33).
    GemmProblem problem = conv_gemm_problem(g, ConvStrategy::split_k, element_bytes);
    problem.quad_positions = !g.transposed && conv_positions_in_quads(g, element_bytes);
    c = choose_gemm(problem, t);
  }
  if (!c) {
    notes = "direct: problem too small for tiles or no tile fits the target";
    return ConvStrategy::direct;
  }
  // float16 data on tensor cores where they stage 16 bytes per load: 3-5x the FMA kernels on the
  // H200 (bench/RESULTS.md, Run N). One-element staging stays opt-in: it was no faster (Run I).
  if (g.in_channels_per_group() % 8 == 0 && misfit(ConvStrategy::implicit_gemm_coopmat, g, t, element_bytes).empty())
    return ConvStrategy::implicit_gemm_coopmat;
  // A target with cooperative matrices but not the loop's shape (Intel's M = 8): say why.
  if (element_bytes == 2 && !t.cooperative_matrix_shapes.empty())
    if (std::string why = kernels::coopmat_misfit(t); !why.empty()) notes = "no tensor cores: " + why;
  return c->split > 1 ? ConvStrategy::split_k : ConvStrategy::implicit_gemm;
}

}  // namespace

std::string_view conv_strategy_name(ConvStrategy s) {
  switch (s) {
    case ConvStrategy::direct: return "direct";
    case ConvStrategy::depthwise: return "depthwise";
    case ConvStrategy::depthwise_tiled: return "depthwise_tiled";
    case ConvStrategy::depthwise_channels_last: return "depthwise_channels_last";
    case ConvStrategy::implicit_gemm: return "implicit_gemm";
    case ConvStrategy::implicit_gemm_coopmat: return "implicit_gemm_coopmat";
    case ConvStrategy::split_k: return "split_k";
    case ConvStrategy::im2col: return "im2col";
  }
  return "";
}

ForcedConvStrategy parse_conv_strategy(const std::string& text, const std::string& what) {
  for (ConvStrategy s : kConvStrategies)
    if (text == conv_strategy_name(s)) return {s, 0, std::nullopt};
  // "implicit_gemm_coopmat=TMxTNxTK/WMxWN[/sSTAGES]": one tensor-core tile (to measure tiles
  // against each other, e.g. bench/vkc_bench --force conv=...).
  const std::string coop = "implicit_gemm_coopmat=";
  if (text.rfind(coop, 0) == 0)
    return {ConvStrategy::implicit_gemm_coopmat, 0,
            GemmTile{parse_coop_tile(text.substr(coop.size()), cat(what, ": strategy '", text, "'"))}};
  const std::string tiled = "implicit_gemm=";
  if (text.rfind(tiled, 0) == 0) {
    GemmChoice c = parse_simt_tile(text.substr(tiled.size()), cat(what, ": strategy '", text, "'"));
    return {c.split > 1 ? ConvStrategy::split_k : ConvStrategy::implicit_gemm, c.split > 1 ? c.split : 0,
            c.tile};
  }
  // "split_k:S" with S of at most 6 digits.
  const std::string prefix = "split_k:";
  bool digits = text.rfind(prefix, 0) == 0 && text.size() > prefix.size() && text.size() <= prefix.size() + 6;
  uint64_t split = 0;
  for (size_t i = prefix.size(); digits && i < text.size(); ++i) {
    digits = text[i] >= '0' && text[i] <= '9';
    split = split * 10 + uint64_t(text[i] - '0');
  }
  check(digits, what, ": strategy '", text, "' does not apply: unknown strategy (expected direct, implicit_gemm, ",
        "implicit_gemm=TMxTNxTK/RMxRN/STAGES[/kSPLIT], implicit_gemm_coopmat, ",
        "implicit_gemm_coopmat=TMxTNxTK/WMxWN[/sSTAGES], split_k, split_k:S, depthwise, ",
        "depthwise_tiled, depthwise_channels_last or im2col)");
  check(split >= 2, what, ": strategy '", text, "' does not apply: split_k needs at least 2 slices, got ", split);
  return {ConvStrategy::split_k, split, std::nullopt};
}

ConvGemmShape conv_gemm_shape(const ir::ConvGeometry& g) {
  ConvGemmShape s;
  s.groups = g.groups;
  s.positions = product(g.out_spatial);
  s.m = g.batch * s.positions;
  s.n = g.out_channels_per_group();
  s.k = g.in_channels_per_group() * product(g.kernel);
  // A strided conv_transpose runs phase by phase (codegen/conv_phases.h): each phase a group of
  // the GEMM with its share of the outputs and taps.
  if (ConvPhases ph = conv_phases(g); ph.on) {
    s.phases = ph.count;
    s.groups = g.groups * ph.count;
    s.positions = product(ph.positions);
    s.m = g.batch * s.positions;
    s.k = g.in_channels_per_group() * product(ph.taps);
  }
  return s;
}

bool conv_slices_hold_one_tap(const ir::ConvGeometry& g, const ConvPlan& p) {
  if (p.strategy != ConvStrategy::implicit_gemm && p.strategy != ConvStrategy::split_k) return false;
  const SimtTile* t = std::get_if<SimtTile>(&p.tile);
  return t != nullptr && !g.transposed && g.in_channels_per_group() % int64_t(t->tk) == 0;
}

// Channel planes of this many bytes (and multiples) keep the stores through workgroup memory: an
// invocation's 16-byte stores go to up to 16 channels at once, which at a 1 MiB plane (the seed
// conv's 512x512 output) made the conv 15% slower (2.32 -> 2.66 ms, H200, session 30), perhaps
// because addresses a power of two apart meet in the same memory partition; at ResNet's 12544-byte
// planes the same stores were faster. Only the 1 MiB plane was measured.
constexpr int64_t kQuadPlaneBytes = 64 * 1024;

bool conv_positions_in_quads(const ir::ConvGeometry& g, uint32_t element_bytes) {
  const std::vector<int64_t> ys = ir::logical_strides(g.output_shape(), g.output_pos);
  if ((ys[1] * int64_t(element_bytes)) % kQuadPlaneBytes == 0) return false;
  int64_t expect = 1;
  for (size_t i = size_t(g.spatial_rank); i-- > 0;) {
    if (ys[2 + i] != expect) return false;
    expect *= g.out_spatial[i];
  }
  return expect % 4 == 0;
}

GemmProblem conv_gemm_problem(const ir::ConvGeometry& g, ConvStrategy strategy, uint32_t element_bytes) {
  ConvGemmShape s = conv_gemm_shape(g);
  GemmProblem p{s.m, s.n, s.k, s.groups};
  p.allow_split = strategy == ConvStrategy::split_k;
  // implicit_gemm and split_k slices hold one tap where TK divides a group's channels (a
  // strided conv_transpose's phases, and im2col's column matrix, do not take that path).
  if ((strategy == ConvStrategy::implicit_gemm || strategy == ConvStrategy::split_k) && !g.transposed) {
    p.tap_channels = g.in_channels_per_group();
    p.quad_positions = strategy == ConvStrategy::implicit_gemm && conv_positions_in_quads(g, element_bytes);
  }
  if (strategy == ConvStrategy::implicit_gemm_coopmat) {
    // When a group's input channels are a multiple of 8, A and B are staged K-fast with 16-byte
    // loads from packed copies (codegen/kernels/conv_pack.cpp); else one element per load: A
    // M-fast, B K-fast unless the filter's output channels are its innermost dim, as in
    // conv_gemm_core_shape.
    p.simt = false;
    bool vec8 = g.in_channels_per_group() % 8 == 0;
    p.coop_vec = vec8 ? 8 : 1;
    p.a_kfast = vec8;
    p.b_kfast = vec8 || g.filter_pos[0] != int(g.filter_pos.size()) - 1;
    if (vec8 && !g.transposed) p.tap_channels = g.in_channels_per_group();
  }
  return p;
}

std::vector<ConvStrategy> applicable_conv_strategies(const ir::ConvGeometry& g, const TargetLimits& t,
                                                     uint32_t element_bytes) {
  std::vector<ConvStrategy> out;
  for (ConvStrategy s : kConvStrategies)
    if (misfit(s, g, t, element_bytes).empty()) out.push_back(s);
  return out;
}

ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes, const std::string& forced,
                   const std::string& what) {
  std::optional<ForcedConvStrategy> f;
  if (!forced.empty()) f = parse_conv_strategy(forced, what);
  return plan_conv(g, t, element_bytes, f, what);
}

ConvPlan plan_conv(const ir::ConvGeometry& g, const TargetLimits& t, uint32_t element_bytes,
                   std::optional<ForcedConvStrategy> forced, const std::string& what) {
  ConvPlan p;
  const uint64_t forced_split = forced ? forced->split : 0;
  std::optional<GemmTile> forced_tile = forced ? forced->tile : std::nullopt;
  if (forced && forced_tile) {
    const GemmProblem problem = conv_gemm_problem(g, forced->strategy, element_bytes);
    std::string why;
    if (CoopTile* c = std::get_if<CoopTile>(&*forced_tile)) {
      // As the planner would run it: the conv's staging (16-byte where channels allow) and order,
      // the target's subgroup and fragment.
      c->vec = problem.coop_vec;
      *c = coop_tile_for(*c, problem, t);
      why = misfit(forced->strategy, g, t, element_bytes);
    }
    if (why.empty()) why = tile_misfit(*forced_tile, t);
    if (why.empty() && forced_split > 1) why = split_misfit(*forced_tile, problem, t, forced_split);
    check(why.empty(), what, ": tile ", describe(*forced_tile), " does not fit target '", t.name, "': ", why);
  }
  if (forced) {
    std::string why = forced_tile ? "" : misfit(forced->strategy, g, t, element_bytes, forced_split);
    std::string name(conv_strategy_name(forced->strategy));
    if (forced_split != 0) name += cat(":", forced_split);
    check(why.empty(), what, ": strategy '", name, "' does not apply: ", why);
    p.strategy = forced->strategy;
  } else {
    p.strategy = choose_strategy(g, t, element_bytes, p.notes);
  }
  switch (p.strategy) {
    case ConvStrategy::direct:
    case ConvStrategy::depthwise: plan_one_per_output(p, g, t, what); return p;
    case ConvStrategy::depthwise_tiled: plan_depthwise_tiled(p, g, t, what); return p;
    case ConvStrategy::depthwise_channels_last: plan_depthwise_channels_last(p, g, t, what); return p;
    case ConvStrategy::implicit_gemm:
    case ConvStrategy::implicit_gemm_coopmat:
    case ConvStrategy::split_k:
    case ConvStrategy::im2col: break;
  }
  const ConvGemmShape s = conv_gemm_shape(g);
  const GemmProblem problem = conv_gemm_problem(g, p.strategy, element_bytes);
  std::optional<GemmChoice> c = forced_tile ? std::optional<GemmChoice>(GemmChoice{*forced_tile, forced_split ? forced_split : 1})
                                            : choose_gemm(problem, t);
  check(c.has_value(), what, ": internal: no GEMM tile fits");
  p.tile = c->tile;
  p.tile_count = tiles_of(p.tile, problem);
  const bool split = p.strategy == ConvStrategy::split_k;
  p.split_k = split ? uint32_t(split_for(*c, problem, t, forced_split)) : 1;
  check(!split || split_misfit(p.tile, problem, t, p.split_k).empty(), what, ": internal: ",
        split_misfit(p.tile, problem, t, p.split_k));
  const uint32_t inv = invocations(p.tile);
  const uint64_t workgroups = p.tile_count * p.split_k;
  p.workgroup_size = {inv, 1, 1};
  p.workgroup_count = linear_grid(workgroups * inv, inv, t, what);
  p.workgroup_memory_bytes = workgroup_memory_bytes(p.tile);
  p.tiles = {{"tile_m", tile_m(p.tile)}, {"tile_n", tile_n(p.tile)}, {"tile_k", tile_k(p.tile)},
             {"gemm_m", s.m},           {"gemm_n", s.n},           {"gemm_k", s.k},
             {"groups", s.groups},      {"workgroups", int64_t(workgroups)}};
  if (s.phases > 1) p.tiles["phases"] = s.phases;  // conv_transpose phase by phase: groups counts them
  if (const CoopTile* coop = std::get_if<CoopTile>(&p.tile)) {
    p.tiles["subgroups_m"] = coop->wm;
    p.tiles["subgroups_n"] = coop->wn;
    p.tiles["staging_load_halves"] = coop->vec;
    if (coop->stages > 1) p.tiles["stages"] = coop->stages;
    if (!coop->default_fragment())  // Intel's: the report shows them (others keep their plans' text)
      p.tiles["fragment_m"] = coop->fm, p.tiles["fragment_n"] = coop->fn, p.tiles["fragment_k"] = coop->fk;
  } else {
    p.tiles["thread_m"] = p.simt().rm;
    p.tiles["thread_n"] = p.simt().rn;
    if (p.simt().stages > 1) p.tiles["stages"] = p.simt().stages;
  }
  if (split) {
    p.partial_elements = output_elements(g) * p.split_k;
    uint32_t wg = fit_workgroup_size_x(kReduceWorkgroup, t);
    p.reduce_workgroup_size = {wg, 1, 1};
    p.reduce_workgroup_count = linear_grid(output_elements(g), wg, t, what);
    p.tiles["split_k"] = p.split_k;
    p.tiles["k_steps_per_split"] = int64_t(ceil_div(k_steps_of(p.tile, problem), p.split_k));
    if (!forced)
      p.notes = cat("split_k: ", p.tile_count, " tiles for ", t.compute_units,
                    " compute units; K split in ", p.split_k, " slices, partial sums reduced by a second dispatch");
  }
  return p;
}

}  // namespace vkc::codegen
