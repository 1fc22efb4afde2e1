// The conv budget planner on its own (no device): every plan fits its target, the search falls
// back to direct when no tile fits, and forced strategies are honoured or refused by name.
#include <algorithm>
#include <tuple>

#include <gtest/gtest.h>

#include "codegen/kernels/gemm_core.h"
#include "kernels/conv_test_support.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

ir::ConvGeometry geometry(const Shape& input, const Shape& filter, const ir::AttrMap& attrs = {}) {
  static std::vector<ir::Graph> keep;  // conv_geometry reads the op's operands
  keep.push_back(conv_graph(OpKind::Conv, input, filter, false, attrs));
  return ir::conv_geometry(only_conv(keep.back()));
}

// Every tile the planner may choose is one the shared GEMM loop (gemm_core.glsl) runs with its
// fallback staging order (M-/N-fast), so no plan can reach codegen and be refused there.
TEST(ConvPlanner, EveryGemmTileCandidateStagesEvenly) {
  int simt = 0;
  for (const codegen::GemmTileEntry& e : codegen::gemm_tile_table()) {
    const codegen::SimtTile* t = std::get_if<codegen::SimtTile>(&e.tile);
    if (t == nullptr) continue;
    ++simt;
    codegen::kernels::GemmCoreShape core{*t};
    EXPECT_TRUE(codegen::kernels::gemm_core_supports(core)) << t->str();
    core.b_kfast = core.stages_evenly(t->tn, true);
    EXPECT_TRUE(codegen::kernels::gemm_core_supports(core)) << t->str();
  }
  EXPECT_GT(simt, 0);
}

TEST(ConvPlanner, EveryPlanFitsEveryProfile) {
  std::vector<ir::ConvGeometry> shapes{
      geometry({1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
      geometry({8, 3, 224, 224}, {64, 3, 7, 7}, {{"strides", std::vector<int64_t>{2, 2}}}),
      geometry({1, 512, 7, 7}, {2048, 512, 1, 1}),
      geometry({1, 32, 56, 56}, {32, 1, 3, 3}, {{"groups", int64_t(32)}}),
      geometry({1, 1, 32, 32, 32}, {16, 1, 9, 9, 1})};
  for (const std::string& name : known_targets()) {
    const TargetLimits& t = find_target(name).limits;
    for (const ir::ConvGeometry& g : shapes)
      for (const std::string& s : applicable_strategy_names(g, t, 4)) {
        codegen::ConvPlan p = codegen::plan_conv(g, t, 4, s, "conv");
        EXPECT_EQ(p.strategy_name(), s);
        EXPECT_LE(p.workgroup_memory_bytes, t.max_compute_shared_memory_size) << name << " " << s;
        EXPECT_LE(p.workgroup_size[0] * p.workgroup_size[1] * p.workgroup_size[2],
                  t.max_compute_work_group_invocations) << name << " " << s;
        for (int a = 0; a < 3; ++a) EXPECT_LE(p.workgroup_count[a], t.max_compute_work_group_count[a]);
      }
  }
}

TEST(ConvPlanner, NoTileFitsMeansDirectNeverAnError) {
  TargetLimits tiny = find_target("vulkan-min").limits;
  tiny.name = "tiny";
  tiny.max_compute_shared_memory_size = 256;  // below the smallest tile
  ir::ConvGeometry g = geometry({1, 64, 64, 64}, {128, 64, 3, 3});
  codegen::ConvPlan p = codegen::plan_conv(g, tiny, 4, "", "conv");
  EXPECT_EQ(p.strategy_name(), "direct");
  EXPECT_EQ(p.workgroup_memory_bytes, 0u);
  EXPECT_EQ(applicable_strategy_names(g, tiny, 4), std::vector<std::string>{"direct"});
  try {
    codegen::plan_conv(g, tiny, 4, "implicit_gemm", "conv 'c'");
    ADD_FAILURE() << "implicit_gemm cannot fit 256 bytes";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "conv 'c': strategy 'implicit_gemm' does not apply: no GEMM tile fits target 'tiny'");
  }
}

TEST(ConvPlanner, SmallerBudgetsPickSmallerTiles) {
  ir::ConvGeometry g = geometry({1, 64, 128, 128}, {256, 64, 3, 3});
  uint32_t previous = UINT32_MAX;
  for (const char* name : {"amd-cdna3", "nvidia", "lavapipe", "vulkan-min"}) {
    // Budgets only: compute units would shrink tiles to fill the device (see the tests below),
    // and a vendor's own tiles (NVIDIA's 256x128) follow its register file, not the budget.
    TargetLimits t = find_target(name).limits;
    t.compute_units = 0;
    t.vendor = Vendor::unknown;
    codegen::ConvPlan p = codegen::plan_conv(g, t, 4, "", "conv");
    EXPECT_EQ(p.strategy_name(), "implicit_gemm") << name;
    EXPECT_LE(p.workgroup_memory_bytes, previous) << name;
    previous = p.workgroup_memory_bytes;
  }
}

TEST(ConvPlanner, Im2colNeedsItsMatrixToFitTheBufferRange) {
  // [1,64,512,512] x 3x3: the column matrix is 262144 x 576 floats = 576 MiB.
  ir::ConvGeometry g = geometry({1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  std::vector<std::string> s = applicable_strategy_names(g, find_target("vulkan-min").limits, 4);
  EXPECT_EQ(s, (std::vector<std::string>{"direct", "implicit_gemm"}));
}

// The depthwise benchmark shapes on the nvidia profile: whole W rows per tile, the whole channel
// multiplier per workgroup, and at least the planner's 128 workgroups (about one per SM of a
// large GPU; the 3-D case has only 32768 output positions).
TEST(ConvPlanner, DepthwiseTiledPlansForTheBenchmarkShapes) {
  const TargetLimits& t = find_target("nvidia").limits;
  ir::ConvGeometry dw = geometry({8, 144, 56, 56}, {144, 1, 3, 3},
                                 {{"groups", int64_t(144)}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  ir::ConvGeometry fan = geometry({1, 1, 32, 32, 32}, {16, 1, 9, 9, 1},
                                  {{"pads", std::vector<int64_t>{4, 4, 0, 4, 4, 0}}});
  for (const ir::ConvGeometry* g : {&dw, &fan}) {
    codegen::ConvPlan p = codegen::plan_conv(*g, t, 4, "", "conv");
    ASSERT_EQ(p.strategy_name(), "depthwise_tiled");
    const codegen::DepthwiseTile& d = p.depthwise;
    EXPECT_EQ(d.out[2], uint32_t(g->out_spatial.back()));
    EXPECT_EQ(d.channels, uint32_t(g->out_channels_per_group()));
    EXPECT_GE(d.workgroups, 128u);
    // 3x3 of one channel reads the input directly (no workgroup memory); 9x9 taps x 16 channels
    // are too many for registers and are staged.
    EXPECT_EQ(d.direct, g == &dw);
    EXPECT_EQ(p.workgroup_memory_bytes, d.direct ? 0u : 4 * (d.input_elements() + d.taps * d.channels));
    EXPECT_LE(d.slots * d.channels, 32u);  // accumulators per invocation
    EXPECT_GE(uint64_t(d.invocations) * d.slots, d.positions());
    EXPECT_GE(d.tiles[2] * d.out[2], uint32_t(g->out_spatial.back()));
  }
  // Each staged input value feeds all 16 channels of the fan-out conv.
  EXPECT_EQ(codegen::plan_conv(fan, t, 4, "", "conv").depthwise.lanes, 4u);
}

TEST(ConvPlanner, DepthwiseTiledFallsBackToOneOutputPerInvocation) {
  // 7x7 taps are too many to hold in registers, so the tiled kernel stages its window.
  ir::ConvGeometry g = geometry({1, 8, 64, 64}, {8, 1, 7, 7}, {{"groups", int64_t(8)}});
  TargetLimits tiny = find_target("vulkan-min").limits;
  tiny.name = "tiny";
  tiny.max_compute_shared_memory_size = 256;  // below any staged tile: its window spans 7 input rows
  // 5x5 reads its input directly and needs no workgroup memory at all.
  codegen::ConvPlan five = codegen::plan_conv(geometry({1, 8, 64, 64}, {8, 1, 5, 5}, {{"groups", int64_t(8)}}),
                                              tiny, 4, "", "conv");
  EXPECT_EQ(five.strategy_name(), "depthwise_tiled");
  EXPECT_TRUE(five.depthwise.direct);
  EXPECT_EQ(five.workgroup_memory_bytes, 0u);
  EXPECT_EQ(codegen::plan_conv(g, tiny, 4, "", "conv").strategy_name(), "depthwise");
  std::vector<std::string> s = applicable_strategy_names(g, tiny, 4);
  EXPECT_EQ(std::count(s.begin(), s.end(), "depthwise_tiled"), 0);
  try {
    codegen::plan_conv(g, tiny, 4, "depthwise_tiled", "conv 'c'");
    ADD_FAILURE() << "no depthwise tile fits 256 bytes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv 'c': strategy 'depthwise_tiled' does not apply: no depthwise tile"),
              std::string::npos) << e.what();
  }
  // Channels-last: the tiled kernel applies (forced) but the planner takes the channels-last one,
  // whose invocations walk the channels; with only one side channels-last, the one-output kernel,
  // whose stores follow the physical order.
  ir::ConvGeometry nhwc = geometry({1, 64, 64, 8}, {8, 1, 7, 7},
                                   {{"groups", int64_t(8)}, {"input_layout", std::string("NHWC")},
                                    {"output_layout", std::string("NHWC")}});
  const TargetLimits& lv = find_target("lavapipe").limits;
  std::vector<std::string> ls = applicable_strategy_names(nhwc, lv, 4);
  EXPECT_EQ(std::count(ls.begin(), ls.end(), "depthwise_tiled"), 1);
  EXPECT_EQ(codegen::plan_conv(nhwc, lv, 4, "", "conv").strategy_name(), "depthwise_channels_last");
  ir::ConvGeometry half = geometry({1, 64, 64, 8}, {8, 1, 7, 7},
                                   {{"groups", int64_t(8)}, {"input_layout", std::string("NHWC")}});
  EXPECT_EQ(codegen::plan_conv(half, lv, 4, "", "conv").strategy_name(), "depthwise");
}

// The channels-last depthwise kernel: W runs of 4 outputs where the grid stays large, shorter
// ones where it would not fill a large GPU, balanced over the row (7 = 4 + 3); it applies to any
// forward depthwise conv (forced, in NCHW too) and to no other conv.
TEST(ConvPlanner, DepthwiseChannelsLastRuns) {
  const TargetLimits& nv = find_target("nvidia").limits;
  auto nhwc_dw = [](int64_t n, int64_t c, int64_t hw, int64_t k, int64_t stride) {
    return geometry({n, hw, hw, c}, {c, 1, k, k},
                    {{"groups", c}, {"pads", std::vector<int64_t>(4, k / 2)}, {"strides", std::vector<int64_t>{stride, stride}},
                     {"input_layout", std::string("NHWC")}, {"output_layout", std::string("NHWC")}});
  };
  codegen::ConvPlan big = codegen::plan_conv(nhwc_dw(32, 96, 56, 3, 1), nv, 2, "", "conv");
  ASSERT_EQ(big.strategy_name(), "depthwise_channels_last");
  EXPECT_EQ(big.run_w, 4u);
  EXPECT_EQ(big.workgroup_memory_bytes, 0u);
  EXPECT_EQ(big.tiles.at("outputs_per_invocation"), 4);
  EXPECT_EQ(codegen::plan_conv(nhwc_dw(32, 576, 14, 5, 2), nv, 2, "", "conv").run_w, 4u);  // 7 = 4 + 3
  EXPECT_EQ(codegen::plan_conv(nhwc_dw(1, 96, 14, 3, 1), nv, 2, "", "conv").run_w, 1u);     // 18816 outputs
  ir::ConvGeometry nchw = geometry({1, 8, 64, 64}, {8, 1, 3, 3}, {{"groups", int64_t(8)}});
  std::vector<std::string> s = applicable_strategy_names(nchw, nv, 4);
  EXPECT_EQ(std::count(s.begin(), s.end(), "depthwise_channels_last"), 1);
  EXPECT_EQ(codegen::plan_conv(nchw, nv, 4, "", "conv").strategy_name(), "depthwise_tiled");
  std::vector<std::string> dense = applicable_strategy_names(geometry({1, 8, 16, 16}, {8, 8, 3, 3}, {}), nv, 4);
  EXPECT_EQ(std::count(dense.begin(), dense.end(), "depthwise_channels_last"), 0);
}

// The convs of torchvision's ResNet-18 at batch 1 (224x224 input), as exported to ONNX.
std::vector<std::pair<std::string, ir::ConvGeometry>> resnet18_batch1() {
  ir::AttrMap p1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  ir::AttrMap s2p1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}};
  ir::AttrMap s2{{"strides", std::vector<int64_t>{2, 2}}};
  return {
      {"conv1", geometry({1, 3, 224, 224}, {64, 3, 7, 7},
                         {{"pads", std::vector<int64_t>{3, 3, 3, 3}}, {"strides", std::vector<int64_t>{2, 2}}})},
      {"layer1 3x3", geometry({1, 64, 56, 56}, {64, 64, 3, 3}, p1)},
      {"layer2.0 3x3 s2", geometry({1, 64, 56, 56}, {128, 64, 3, 3}, s2p1)},
      {"layer2.0 downsample", geometry({1, 64, 56, 56}, {128, 64, 1, 1}, s2)},
      {"layer2 3x3", geometry({1, 128, 28, 28}, {128, 128, 3, 3}, p1)},
      {"layer3.0 3x3 s2", geometry({1, 128, 28, 28}, {256, 128, 3, 3}, s2p1)},
      {"layer3.0 downsample", geometry({1, 128, 28, 28}, {256, 128, 1, 1}, s2)},
      {"layer3 3x3", geometry({1, 256, 14, 14}, {256, 256, 3, 3}, p1)},
      {"layer4.0 3x3 s2", geometry({1, 256, 14, 14}, {512, 256, 3, 3}, s2p1)},
      {"layer4.0 downsample", geometry({1, 256, 14, 14}, {512, 256, 1, 1}, s2)},
      {"layer4 3x3", geometry({1, 512, 7, 7}, {512, 512, 3, 3}, p1)},
  };
}

int64_t workgroups(const codegen::ConvPlan& p) { return p.tiles.at("workgroups"); }

TargetLimits with_compute_units(const std::string& profile, uint32_t units) {
  TargetLimits t = find_target(profile).limits;
  t.compute_units = units;
  return t;
}

// The planner's tile and split for a plain M x N x K matmul that may split K.
codegen::GemmChoice choose_matmul(const TargetLimits& t, int64_t m, int64_t n, int64_t k) {
  codegen::GemmProblem p{m, n, k};
  p.matrix_operands = true;
  p.allow_split = true;
  std::optional<codegen::GemmChoice> c = codegen::choose_gemm(p, t);
  EXPECT_TRUE(c.has_value());
  return c.value_or(codegen::GemmChoice{});
}

// One table serves conv and matmul. NVIDIA's 256x128 two-stage tiles were measured on plain
// matrices, and on convs only with one tap per slice, a deep K and at least three waves of tiles
// (bench/RESULTS.md, session 23): the seed conv takes the 8-deep one, a matmul of the same GEMM
// shape the 16-deep one, and convs outside those bounds keep the tiles they had.
TEST(ConvPlanner, LargestTilesReachConvsOnlyWhereMeasured) {
  const TargetLimits& nv = find_target("nvidia").limits;
  const std::vector<int64_t> same{1, 1, 1, 1};
  ir::ConvGeometry g = geometry({1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", same}});
  codegen::ConvPlan p = codegen::plan_conv(g, nv, 4, "", "conv");
  ASSERT_EQ(p.strategy_name(), "implicit_gemm");
  EXPECT_EQ(p.simt(), (codegen::SimtTile{256, 128, 8, 16, 8, 2}));
  EXPECT_TRUE(codegen::conv_slices_hold_one_tap(g, p));
  codegen::GemmProblem matmul = codegen::conv_gemm_problem(g, codegen::ConvStrategy::implicit_gemm, 4);
  matmul.matrix_operands = true;
  matmul.tap_channels = 0;
  std::optional<codegen::GemmChoice> c = codegen::choose_gemm(matmul, nv);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(std::get<codegen::SimtTile>(c->tile), (codegen::SimtTile{256, 128, 16, 8, 8, 2}));
  const codegen::SimtTile base{128, 128, 16, 8, 8, 1};
  auto tile = [&](const ir::ConvGeometry& geo) { return codegen::plan_conv(geo, nv, 4, "", "conv").simt(); };
  // 60 channels: slices of 8 straddle taps (per-element gathers).
  EXPECT_EQ(tile(geometry({1, 60, 512, 512}, {256, 60, 3, 3}, {{"pads", same}})), base);
  // K = 256 (a 1x1 expansion): too shallow; at 500x500 it takes the 128-invocation 128x64 tile that
  // one-tap convs of any depth take where results leave in quads (session 32); at 512x512 (1 MiB
  // planes, stored through workgroup memory) the 256-invocation 128x64 tile.
  const codegen::SimtTile t128x64{128, 64, 16, 8, 8, 2};
  EXPECT_EQ(tile(geometry({1, 256, 500, 500}, {256, 256, 1, 1})), t128x64);
  EXPECT_EQ(tile(geometry({1, 256, 512, 512}, {256, 256, 1, 1})), (codegen::SimtTile{128, 64, 16, 8, 4, 1}));
  // ResNet's 8x256x56x56 3x3: 196 tiles of 256x128, under 2.75 waves of 132 compute units; it
  // takes 256x64 (K 2304: the GEMM of ResNet-50's batch-128 layer-3 3x3, session 33).
  EXPECT_EQ(tile(geometry({8, 256, 56, 56}, {256, 256, 3, 3}, {{"pads", same}})),
            (codegen::SimtTile{256, 64, 16, 8, 8, 2}));
  // ResNet-50's batch-128 layer-2 3x3: 392 tiles of 256x128, 2.97 waves: taken.
  EXPECT_EQ(tile(geometry({128, 128, 28, 28}, {128, 128, 3, 3}, {{"pads", same}})), (codegen::SimtTile{256, 128, 8, 16, 8, 2}));
  int matrix_only = 0, conv_too = 0;
  for (const codegen::GemmTileEntry& e : codegen::gemm_tile_table()) {
    matrix_only += e.matrix_operands_only && !e.one_tap_convs;
    conv_too += e.matrix_operands_only && e.one_tap_convs;
  }
  EXPECT_GT(matrix_only, 0);
  EXPECT_EQ(conv_too, 4);  // two of them for convs only (DeepOneTapConvsTakeTheirMeasuredTilesOnNvidia)
}

// Matmul K splits on the nvidia profile, as measured on the H200 (bench/RESULTS.md, session 17):
// the 1024- and 1576-row fc2 products (K 3072) split 128x64 tiles into 4 slices of 768; shallower
// products and 128-row ones keep the 64x64 splits, whose slices may be 4 steps deep.
TEST(ConvPlanner, TransformerMatmulSplitsOnTheNvidiaProfile) {
  const TargetLimits& nv = find_target("nvidia").limits;
  auto choose = [&](int64_t m, int64_t n, int64_t k) { return choose_matmul(nv, m, n, k); };
  const codegen::SimtTile t128x64{128, 64, 16, 8, 8, 2}, t64x64{64, 64, 16, 8, 4, 2};
  for (int64_t m : {1024, 1576}) {
    SCOPED_TRACE(m);
    codegen::GemmChoice fc2 = choose(m, 768, 3072);
    EXPECT_EQ(std::get<codegen::SimtTile>(fc2.tile), t128x64);
    EXPECT_EQ(fc2.split, 4u);
    codegen::GemmChoice proj = choose(m, 768, 768);  // 48 steps: one 768-deep slice, so 64x64 splits
    EXPECT_EQ(std::get<codegen::SimtTile>(proj.tile), t64x64);
    EXPECT_GT(proj.split, 1u);
  }
  codegen::GemmChoice thin = choose(128, 768, 3072);
  EXPECT_EQ(std::get<codegen::SimtTile>(thin.tile), t64x64);
  EXPECT_EQ(thin.split, 8u);
  // Where the unsplit grid already fills the device nothing splits.
  EXPECT_EQ(choose(1576, 3072, 768).split, 1u);
}

// Rated matrix tiles are weighed by the work of the busiest compute unit (gemm_planner.h). On the
// nvidia profile (132 units) ViT-B/16 b8's in-projection takes 64x64 tiles (900 workgroups, 7 on
// the busiest unit against 6.8 on average) over 128x64 (468: 4 against 3.5), and its output
// projection three slices (900 workgroups) over two (600: 5 against 4.5), as measured on the H200;
// its MLP products keep the tiles they had. With 117 units 468 workgroups divide evenly (4 each)
// and 128x64 stays.
TEST(ConvPlanner, MatmulTilesBalanceTheBusiestUnit) {
  const codegen::SimtTile t128x64{128, 64, 16, 8, 8, 2}, t64x64{64, 64, 16, 8, 4, 2};
  const auto& choose = choose_matmul;
  const TargetLimits& nv = find_target("nvidia").limits;
  ASSERT_EQ(nv.compute_units, 132u);
  auto expect = [&](const TargetLimits& t, int64_t m, int64_t n, int64_t k, const codegen::SimtTile& tile,
                    uint64_t split) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " on " << t.compute_units << " units");
    codegen::GemmChoice c = choose(t, m, n, k);
    EXPECT_EQ(std::get<codegen::SimtTile>(c.tile), tile);
    EXPECT_EQ(c.split, split);
  };
  expect(nv, 1576, 2304, 768, t64x64, 1);   // in-projection
  expect(nv, 1576, 768, 768, t64x64, 3);    // output projection
  expect(nv, 1576, 3072, 768, t128x64, 1);  // fc1: 624 workgroups, 5 against 4.7
  expect(nv, 1576, 768, 3072, t128x64, 4);  // fc2: within the margin of 64x64 in 3 slices
  const TargetLimits even = with_compute_units("nvidia", 117);
  expect(even, 1576, 2304, 768, t128x64, 1);
  expect(even, 1576, 768, 768, t64x64, 3);  // 900 on 117: 8 against 7.7; 600 in 2 slices: 6 against 5.1
  // Whatever the unit count, the choice runs: its tile fits, its split is one the kernel accepts.
  for (uint32_t units : {1u, 7u, 32u, 64u, 96u, 108u, 132u, 304u}) {
    const TargetLimits t = with_compute_units("nvidia", units);
    for (int64_t m : {128, 197, 1024, 1576, 4096})
      for (int64_t n : {64, 768, 2304, 3072})
        for (int64_t k : {64, 768, 3072}) {
          SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " on " << units << " units");
          codegen::GemmChoice c = choose(t, m, n, k);
          EXPECT_EQ(codegen::tile_misfit(c.tile, t), "");
          if (c.split > 1) {
            EXPECT_EQ(codegen::split_misfit(c.tile, codegen::GemmProblem{m, n, k}, t, c.split), "");
          }
        }
  }
}

// On NVIDIA, convs whose 16-deep slices hold one tap and whose results leave in quads take the
// 128-invocation 128x64 tile with two stages where its grid fills the device (gemm_planner.cpp;
// ResNet-50's convs of layers 1-3 at batch 32 and 128, 4-16% faster than the tiles they had on
// the H200, session 32). Other convs
// with K <= 256 skip the 128x128 tile (kShortConvMaxK) and keep 128x64 on 256 invocations; other
// vendors' plans are unchanged.
TEST(ConvPlanner, ShortConvsSkipTheLargestSquareTileOnNvidia) {
  const TargetLimits& nv = find_target("nvidia").limits;
  const std::vector<int64_t> same{1, 1, 1, 1};
  const codegen::SimtTile t128x128{128, 128, 16, 8, 8, 1}, t128x64{128, 64, 16, 8, 4, 1},
      one_tap{128, 64, 16, 8, 8, 2};
  auto tile = [](const ir::ConvGeometry& g, const TargetLimits& t) {
    codegen::ConvPlan p = codegen::plan_conv(g, t, 4, "", "conv");
    EXPECT_EQ(p.strategy_name(), "implicit_gemm");
    return p.simt();
  };
  // ResNet-50's expansions (K 64-256), a reduction (K 512) and a 3x3 (K 1152) at batch 32; the
  // batch-128 shapes measured.
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 56}, {128, 28}, {256, 14}}) {
    SCOPED_TRACE(c);
    EXPECT_EQ(tile(geometry({32, c, hw, hw}, {4 * c, c, 1, 1}), nv), one_tap);
  }
  EXPECT_EQ(tile(geometry({32, 512, 28, 28}, {256, 512, 1, 1}), nv), one_tap);
  EXPECT_EQ(tile(geometry({32, 128, 28, 28}, {128, 128, 3, 3}, {{"pads", same}}), nv), one_tap);
  EXPECT_EQ(tile(geometry({128, 64, 56, 56}, {256, 64, 1, 1}), nv), one_tap);
  EXPECT_EQ(tile(geometry({128, 128, 28, 28}, {512, 128, 1, 1}), nv), one_tap);
  EXPECT_EQ(tile(geometry({128, 64, 56, 56}, {64, 64, 3, 3}, {{"pads", same}}), nv), one_tap);  // K 576
  // Not where results do not leave in quads (layer 4's 7x7 outputs; an NHWC output) or its grid
  // does not fill the device (layer 3's 3x3 at batch 32: 196 tiles of 128x64 for 132 units).
  EXPECT_NE(tile(geometry({128, 512, 7, 7}, {512, 512, 3, 3}, {{"pads", same}}), nv), one_tap);
  EXPECT_NE(tile(geometry({32, 512, 7, 7}, {2048, 512, 1, 1}), nv), one_tap);
  EXPECT_NE(tile(geometry({32, 64, 56, 56}, {256, 64, 1, 1}, {{"output_layout", std::string("NHWC")}}), nv), one_tap);
  EXPECT_NE(codegen::plan_conv(geometry({32, 256, 14, 14}, {256, 256, 3, 3}, {{"pads", same}}), nv, 4, "", "conv").tile,
            codegen::GemmTile{one_tap});
  EXPECT_TRUE(codegen::conv_positions_in_quads(geometry({32, 256, 14, 14}, {256, 256, 3, 3}, {{"pads", same}}), 4));
  EXPECT_FALSE(codegen::conv_positions_in_quads(geometry({32, 512, 7, 7}, {2048, 512, 1, 1}), 4));
  // Nor where its channel planes are a multiple of 64 KiB (128x128 float32 outputs), whose results
  // conv_gemm.cpp keeps storing through workgroup memory; float16 ones (32 KiB planes) leave in quads.
  const ir::ConvGeometry planes = geometry({8, 64, 128, 128}, {128, 64, 1, 1});
  EXPECT_FALSE(codegen::conv_positions_in_quads(planes, 4));
  EXPECT_TRUE(codegen::conv_positions_in_quads(planes, 2));
  EXPECT_EQ(tile(planes, nv), t128x64);
  EXPECT_EQ(tile(geometry({8, 64, 120, 128}, {128, 64, 1, 1}), nv), one_tap);
  // 40 channels (16-deep slices cross taps): K 40 skips 128x128, K 360 keeps it.
  EXPECT_EQ(tile(geometry({32, 40, 56, 56}, {256, 40, 1, 1}), nv), t128x64);
  EXPECT_EQ(tile(geometry({32, 40, 56, 56}, {256, 40, 3, 3}, {{"pads", same}}), nv), t128x128);
  for (const char* other : {"amd-rdna3", "intel-xe2"}) {
    SCOPED_TRACE(other);
    EXPECT_EQ(tile(geometry({32, 64, 56, 56}, {256, 64, 1, 1}), find_target(other).limits), t128x128);
  }
}

// On NVIDIA, one-tap convs with K >= 1024 whose results leave in quads take 256x64 (256
// invocations; N >= 128) where its grid fills the device, else 128x32 (128 invocations) where that one's
// does, unsplit rather than split in K (gemm_planner.cpp kDeepFmaConvMinK; ResNet-50's shapes
// forced on the H200, session 33). Shallower convs, outputs without quads, plain matrices and other
// vendors keep their plans.
TEST(ConvPlanner, DeepOneTapConvsTakeTheirMeasuredTilesOnNvidia) {
  const TargetLimits& nv = find_target("nvidia").limits;
  const std::vector<int64_t> same{1, 1, 1, 1};
  const codegen::SimtTile wide{256, 64, 16, 8, 8, 2}, narrow{128, 32, 16, 8, 4, 2};
  auto plan = [&](const ir::ConvGeometry& g, const TargetLimits& t) { return codegen::plan_conv(g, t, 4, "", "conv"); };
  const ir::ConvGeometry l3_b128 = geometry({128, 256, 14, 14}, {256, 256, 3, 3}, {{"pads", same}}),
                         reduce_b128 = geometry({128, 1024, 14, 14}, {256, 1024, 1, 1}),
                         l3_b32 = geometry({32, 256, 14, 14}, {256, 256, 3, 3}, {{"pads", same}}),
                         reduce_b32 = geometry({32, 1024, 14, 14}, {256, 1024, 1, 1});
  for (const ir::ConvGeometry& g : {l3_b128, reduce_b128}) {
    codegen::ConvPlan p = plan(g, nv);
    EXPECT_EQ(p.strategy_name(), "implicit_gemm");
    EXPECT_EQ(p.simt(), wide);
    EXPECT_EQ(p.tile_count, 392u);
  }
  // At batch 32 these were split in 3 slices of 128x128; 128x32 fills the device unsplit.
  for (const ir::ConvGeometry& g : {l3_b32, reduce_b32}) {
    codegen::ConvPlan p = plan(g, nv);
    EXPECT_EQ(p.strategy_name(), "implicit_gemm");
    EXPECT_EQ(p.split_k, 1u);
    EXPECT_EQ(p.simt(), narrow);
    EXPECT_TRUE(codegen::conv_positions_in_quads(g, 4));
  }
  // 256x64 not below N 128 (r3d_18's layer-1 convs, K 1728 and N 64, lost on it): 128x64 there.
  EXPECT_EQ(plan(geometry({32, 128, 56, 56}, {64, 128, 3, 3}, {{"pads", same}}), nv).simt(),
            (codegen::SimtTile{128, 64, 16, 8, 8, 2}));
  // Not below K 1024 (layer 2's 1x1 reduction, K 512, at batch 32: 196 tiles of 128x64), nor where
  // results do not leave in quads (layer 4's 7x7 outputs stay split), nor on other vendors.
  const ir::ConvGeometry shallow = geometry({32, 512, 28, 28}, {128, 512, 1, 1});
  EXPECT_NE(plan(shallow, nv).tile, codegen::GemmTile{narrow});
  EXPECT_NE(plan(shallow, nv).tile, codegen::GemmTile{wide});
  EXPECT_EQ(plan(geometry({32, 512, 7, 7}, {512, 512, 3, 3}, {{"pads", same}}), nv).strategy_name(), "split_k");
  for (const char* other : {"amd-rdna3", "intel-xe2"})
    for (const ir::ConvGeometry& g : {l3_b128, l3_b32}) {
      SCOPED_TRACE(other);
      codegen::ConvPlan p = plan(g, find_target(other).limits);
      EXPECT_NE(p.tile, codegen::GemmTile{narrow});
      EXPECT_NE(p.tile, codegen::GemmTile{wide});
    }
  // Plain matrices never take them, whatever their shape.
  for (int64_t m : {1576, 6272, 25088})
    for (int64_t n : {256, 768, 3072}) {
      codegen::GemmProblem mm{m, n, 2304};
      mm.matrix_operands = true;
      std::optional<codegen::GemmChoice> c = codegen::choose_gemm(mm, nv);
      ASSERT_TRUE(c.has_value());
      EXPECT_NE(c->tile, codegen::GemmTile{narrow});
      EXPECT_NE(c->tile, codegen::GemmTile{wide});
    }
}

// On NVIDIA, convs whose results do not leave in quads (ResNet's 7x7 layer 4) and whose K is
// under 1024 give up the largest tile where its last round of workgroups would be under 90% full,
// for the 128-invocation 128x64 tile where its grid holds two occupancy targets
// (gemm_planner.cpp kNonQuadLargestTileMinK; ResNet-50's batch-128 layer-4 expansions, 400 tiles
// of 256x128 in four rounds on 132 SMs, 0.667 -> 0.514 ms on the H200, session 42). Full rounds,
// a deep K, smaller grids, convs whose results leave in quads and other vendors keep their plans.
TEST(ConvPlanner, NonQuadConvsLeaveTheLargestTileWhereItsLastRoundIsShort) {
  const TargetLimits& nv = find_target("nvidia").limits;
  const codegen::SimtTile largest{256, 128, 8, 16, 8, 2}, one_tap{128, 64, 16, 8, 8, 2};
  auto plan = [&](const ir::ConvGeometry& g, const TargetLimits& t) { return codegen::plan_conv(g, t, 4, "", "conv"); };
  const ir::ConvGeometry expansion_b128 = geometry({128, 512, 7, 7}, {2048, 512, 1, 1}),
                         downsample_b128 = geometry({128, 1024, 14, 14}, {2048, 1024, 1, 1},
                                                    {{"strides", std::vector<int64_t>{2, 2}}}),
                         expansion_b32 = geometry({32, 512, 7, 7}, {2048, 512, 1, 1}),
                         full_rounds = geometry({168, 512, 7, 7}, {1536, 512, 1, 1});
  for (const ir::ConvGeometry& g : {expansion_b128, downsample_b128, expansion_b32, full_rounds})
    EXPECT_FALSE(codegen::conv_positions_in_quads(g, 4));
  codegen::ConvPlan p = plan(expansion_b128, nv);
  EXPECT_EQ(p.strategy_name(), "implicit_gemm");
  EXPECT_EQ(p.simt(), one_tap);
  EXPECT_EQ(p.tile_count, 1568u);
  // 8232 x 1536: 33 x 12 = 396 tiles of 256x128, three full rounds.
  EXPECT_EQ(plan(full_rounds, nv).simt(), largest);
  EXPECT_EQ(plan(downsample_b128, nv).simt(), largest);  // K 1024, the same 400 tiles
  // 112 tiles of 256x128 at batch 32: under 2.75 waves, so never the largest tile, and 416 of
  // 128x64 are under two targets (264 workgroups each): unchanged.
  EXPECT_NE(plan(expansion_b32, nv).tile, codegen::GemmTile{one_tap});
  // The seed conv (64 KiB planes, K 576): 2048 tiles, 16 rounds 97% full.
  const std::vector<int64_t> same{1, 1, 1, 1};
  const ir::ConvGeometry seed = geometry({1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", same}});
  EXPECT_FALSE(codegen::conv_positions_in_quads(seed, 4));
  EXPECT_EQ(plan(seed, nv).simt(), largest);
  // A K-512 conv whose results leave in quads keeps the largest tile (ResNet-50's batch-128
  // layer-3.0 1x1 reduction, 784 tiles of 256x128).
  const ir::ConvGeometry quads = geometry({128, 512, 28, 28}, {256, 512, 1, 1});
  EXPECT_TRUE(codegen::conv_positions_in_quads(quads, 4));
  EXPECT_EQ(plan(quads, nv).simt(), largest);
  for (const char* other : {"amd-rdna3", "intel-xe2"}) {
    SCOPED_TRACE(other);
    EXPECT_NE(plan(expansion_b128, find_target(other).limits).tile, codegen::GemmTile{one_tap});
  }
}

// An empty GEMM (a zero-sized batch or channel count) still gets a tile: nothing is wasted, so
// the first tile that fits, never a NaN efficiency that matches no rule.
TEST(ConvPlanner, EmptyGemmStillGetsATile) {
  for (codegen::GemmProblem p : {codegen::GemmProblem{0, 64, 64}, codegen::GemmProblem{64, 64, 0}}) {
    std::optional<codegen::GemmChoice> c = codegen::choose_gemm(p, find_target("nvidia").limits);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->split, 1u);
  }
}

// The late layers (M = 49..784 output positions, K >= 1152) ran 4-7 workgroups on 132 SMs when
// tiles were chosen for padding alone; now every layer fills at least one wave, and the ones with
// K >= 512 split K and reach two workgroups per SM.
TEST(ConvPlanner, ResNet18Batch1FillsTheNvidiaProfile) {
  const TargetLimits& nv = find_target("nvidia").limits;
  const TargetLimits blind = with_compute_units("nvidia", 0);  // the padding-only choice
  ASSERT_GT(nv.compute_units, 0u);
  int split_layers = 0;
  for (const auto& [name, g] : resnet18_batch1()) {
    SCOPED_TRACE(name);
    codegen::ConvGemmShape s = codegen::conv_gemm_shape(g);
    codegen::ConvPlan p = codegen::plan_conv(g, nv, 4, "", "conv");
    codegen::ConvPlan old = codegen::plan_conv(g, blind, 4, "", "conv");
    ASSERT_EQ(old.strategy_name(), "implicit_gemm");  // unknown compute units never split
    EXPECT_GE(workgroups(p), int64_t(nv.compute_units));
    EXPECT_GE(workgroups(p), workgroups(old));
    if (s.k >= 512) {
      ++split_layers;
      EXPECT_LT(workgroups(old), int64_t(nv.compute_units));  // the problem being fixed
      EXPECT_EQ(p.strategy_name(), "split_k");
      EXPECT_GE(p.split_k, 2u);
      EXPECT_EQ(workgroups(p), int64_t(p.tile_count * p.split_k));
      EXPECT_GE(workgroups(p), int64_t(2 * nv.compute_units));
      // Each slice keeps at least 4 steps of the K loop.
      EXPECT_GE(p.tiles.at("k_steps_per_split"), 4);
      EXPECT_EQ(p.partial_elements, uint64_t(s.groups * s.m * s.n) * p.split_k);
    } else {
      EXPECT_EQ(p.strategy_name(), "implicit_gemm");  // shallow K: smaller tiles, never split
      EXPECT_LE(p.simt().tm * p.simt().tn, old.simt().tm * old.simt().tn);
    }
  }
  EXPECT_EQ(split_layers, 7);
}

// A GEMM that fills the device with its best tile keeps it: occupancy only ever shrinks tiles of
// small outputs.
TEST(ConvPlanner, LargeOutputsKeepTheirTile) {
  for (const ir::ConvGeometry& g : {geometry({32, 64, 56, 56}, {64, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
                                    geometry({1, 64, 512, 512}, {256, 64, 3, 3})}) {
    for (const char* profile : {"nvidia", "amd-cdna3", "lavapipe"}) {
      codegen::ConvPlan p = codegen::plan_conv(g, find_target(profile).limits, 4, "", "conv");
      codegen::ConvPlan old = codegen::plan_conv(g, with_compute_units(profile, 0), 4, "", "conv");
      EXPECT_EQ(p.strategy_name(), "implicit_gemm") << profile;
      EXPECT_EQ(p.simt().tm, old.simt().tm) << profile;
      EXPECT_EQ(p.simt().tn, old.simt().tn) << profile;
      EXPECT_EQ(p.split_k, 1u) << profile;
    }
  }
}

// Every ResNet-18 layer, planned unforced and with split_k forced, stays within every profile's
// limits: workgroup memory and size, both grids, and the partial sums within maxStorageBufferRange.
TEST(ConvPlanner, SplitKPlansFitEveryProfile) {
  for (const std::string& name : known_targets()) {
    const TargetLimits& t = find_target(name).limits;
    for (const auto& [layer, g] : resnet18_batch1()) {
      std::vector<std::string> strategies{""};
      std::vector<std::string> applicable = applicable_strategy_names(g, t, 4);
      if (std::count(applicable.begin(), applicable.end(), "split_k")) strategies.push_back("split_k");
      EXPECT_EQ(strategies.size(), 2u) << name << " " << layer << ": K >= 64 always splits in two";
      for (const std::string& forced : strategies) {
        SCOPED_TRACE(cat(name, " ", layer, " '", forced, "'"));
        codegen::ConvPlan p = codegen::plan_conv(g, t, 4, forced, "conv");
        EXPECT_LE(p.workgroup_memory_bytes, t.max_compute_shared_memory_size);
        EXPECT_LE(p.workgroup_size[0], t.max_compute_work_group_invocations);
        EXPECT_LE(p.workgroup_size[0], t.max_compute_work_group_size[0]);
        for (int a = 0; a < 3; ++a) EXPECT_LE(p.workgroup_count[a], t.max_compute_work_group_count[a]);
        EXPECT_GE(uint64_t(p.workgroup_count[0]) * p.workgroup_count[1], p.tile_count * p.split_k);
        if (p.strategy_name() != "split_k") continue;
        EXPECT_GE(p.split_k, 2u);
        EXPECT_LE(p.partial_elements * 4, t.max_storage_buffer_range);
        EXPECT_LE(p.reduce_workgroup_size[0], t.max_compute_work_group_invocations);
        for (int a = 0; a < 3; ++a) EXPECT_LE(p.reduce_workgroup_count[a], t.max_compute_work_group_count[a]);
        uint64_t outputs = p.partial_elements / p.split_k;
        EXPECT_GE(uint64_t(p.reduce_workgroup_count[0]) * p.reduce_workgroup_count[1] * p.reduce_workgroup_size[0],
                  outputs);
      }
    }
  }
}

TEST(ConvPlanner, ForcedSplitKHonoursSOrSaysWhyNot) {
  ir::ConvGeometry g = geometry({1, 256, 14, 14}, {256, 256, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const TargetLimits& lv = find_target("lavapipe").limits;
  codegen::ConvPlan p = codegen::plan_conv(g, lv, 4, "split_k:5", "conv");
  EXPECT_EQ(p.strategy_name(), "split_k");
  EXPECT_EQ(p.split_k, 5u);
  uint64_t steps = (2304 + p.simt().tk - 1) / p.simt().tk;
  ASSERT_NE(steps % 5, 0u);  // unequal slices: balanced to within one step
  EXPECT_EQ(p.tiles.at("k_steps_per_split"), int64_t((steps + 4) / 5));
  auto why = [&](const ir::ConvGeometry& geo, const TargetLimits& t, const std::string& s) {
    try {
      codegen::plan_conv(geo, t, 4, s, "conv 'c'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(why(g, lv, "split_k:1"), "conv 'c': strategy 'split_k:1' does not apply: split_k needs at least 2 slices, got 1");
  EXPECT_NE(why(g, lv, "split_k:1000").find("fewer than 1000 slices"), std::string::npos);
  EXPECT_NE(why(g, lv, "split_k:x").find("unknown strategy"), std::string::npos);
  // K = 4 (4 channels, 1x1) is one step of any tile: nothing to split.
  ir::ConvGeometry shallow = geometry({1, 4, 8, 8}, {8, 4, 1, 1});
  std::vector<std::string> s = applicable_strategy_names(shallow, lv, 4);
  EXPECT_EQ(std::count(s.begin(), s.end(), "split_k"), 0);
  EXPECT_NE(why(shallow, lv, "split_k").find("fewer than 2 slices"), std::string::npos);
  // The partial sums are budgeted against maxStorageBufferRange.
  TargetLimits small = lv;
  small.max_storage_buffer_range = 1 << 18;  // the 196 x 256 output is 200704 bytes: 2 slices do not fit
  EXPECT_NE(why(g, small, "split_k").find("above maxStorageBufferRange"), std::string::npos);
  EXPECT_NE(codegen::plan_conv(g, small, 4, "", "conv").strategy_name(), "split_k");
}

// "implicit_gemm=TILE" forces one FMA tile (the form matmul's "tiled=" takes), "/kS" with split_k:
// how tiles are measured against each other on convs (bench/vkc_bench.cpp --force).
TEST(ConvPlanner, ForcedTileIsTakenOrSaysWhyNot) {
  ir::ConvGeometry g = geometry({1, 64, 56, 56}, {128, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const TargetLimits& lv = find_target("lavapipe").limits;
  const TargetLimits& nv = find_target("nvidia").limits;
  codegen::ConvPlan p = codegen::plan_conv(g, nv, 4, "implicit_gemm=256x128x16/16x8/2", "conv");
  EXPECT_EQ(p.strategy_name(), "implicit_gemm");
  EXPECT_EQ(p.simt(), (codegen::SimtTile{256, 128, 16, 16, 8, 2}));
  EXPECT_EQ(p.workgroup_memory_bytes, 2u * 4 * 16 * (256 + 128));
  EXPECT_EQ(p.tiles.at("stages"), 2);
  codegen::ConvPlan split = codegen::plan_conv(g, lv, 4, "implicit_gemm=64x64x16/8x4/2/k3", "conv");
  EXPECT_EQ(split.strategy_name(), "split_k");
  EXPECT_EQ(split.split_k, 3u);
  EXPECT_EQ(split.simt(), (codegen::SimtTile{64, 64, 16, 8, 4, 2}));
  auto why = [&](const TargetLimits& t, const std::string& s) {
    try {
      codegen::plan_conv(g, t, 4, s, "conv 'c'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // 48 KiB of workgroup memory against lavapipe's 32 KiB.
  EXPECT_NE(why(lv, "implicit_gemm=256x128x16/16x8/2").find("does not fit target 'lavapipe'"), std::string::npos);
  EXPECT_NE(why(lv, "implicit_gemm=256x128x16/16x8/2").find("bytes of workgroup memory"), std::string::npos);
  EXPECT_NE(why(lv, "implicit_gemm=64x64x16/4x4").find("is not TMxTNxTK/RMxRN/STAGES"), std::string::npos);
  EXPECT_NE(why(lv, "implicit_gemm=64x64x16/4x4/1/k1000").find("fewer than 1000 slices"), std::string::npos);
}

// "implicit_gemm_coopmat=TILE" forces one tensor-core tile (matmul's "coopmat=" form), staged as a
// planned one: the target's subgroup and fragment, 16-byte K-fast loads where a group's channels
// are a multiple of 8, else one element at a time.
TEST(ConvPlanner, ForcedTensorCoreTileIsTakenOrSaysWhyNot) {
  ir::ConvGeometry g = geometry({1, 64, 56, 56}, {128, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const TargetLimits& nv = find_target("nvidia").limits;
  const TargetLimits& lv = find_target("lavapipe").limits;
  codegen::ConvPlan p = codegen::plan_conv(g, nv, 2, "implicit_gemm_coopmat=128x64x64/2x2", "conv");
  EXPECT_EQ(p.strategy_name(), "implicit_gemm_coopmat");
  const codegen::CoopTile* c = std::get_if<codegen::CoopTile>(&p.tile);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(std::tie(c->tm, c->tn, c->tk, c->wm, c->wn, c->stages), std::make_tuple(128u, 64u, 64u, 2u, 2u, 1u));
  EXPECT_EQ(std::tie(c->subgroup, c->vec, c->a_kfast, c->b_kfast), std::make_tuple(32u, 8u, true, true));
  EXPECT_EQ(p.workgroup_size[0], 128u);
  EXPECT_EQ(p.tile_count, uint64_t((56 * 56 + 127) / 128) * 2);
  EXPECT_EQ(p.tiles.at("subgroups_n"), 2);
  // The planner's own choice for the same conv differs (so the forced tile is not a coincidence).
  EXPECT_NE(codegen::plan_conv(g, nv, 2, "", "conv").tile, p.tile);
  // 20 channels: one-element staging, A M-fast.
  ir::ConvGeometry odd = geometry({1, 20, 30, 30}, {32, 20, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const codegen::ConvPlan odd_plan = codegen::plan_conv(odd, nv, 2, "implicit_gemm_coopmat=64x64x32/2x2", "conv");
  const codegen::CoopTile* o = std::get_if<codegen::CoopTile>(&odd_plan.tile);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(std::tie(o->vec, o->a_kfast), std::make_tuple(1u, false));
  auto why = [&](const ir::ConvGeometry& geo, const TargetLimits& t, uint32_t bytes, const std::string& s) {
    try {
      codegen::plan_conv(geo, t, bytes, s, "conv 'c'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(why(g, lv, 2, "implicit_gemm_coopmat=128x64x64/2x2").find("conv 'c': tile 128x64x64"), std::string::npos);
  EXPECT_NE(why(g, nv, 4, "implicit_gemm_coopmat=128x64x64/2x2").find("not float16"), std::string::npos);
  EXPECT_NE(why(g, nv, 2, "implicit_gemm_coopmat=128x64x64").find("is not TMxTNxTK/WMxWN"), std::string::npos);
  // Two copies of 128 x 128 x 64 exceed 48 KiB.
  EXPECT_NE(why(g, nv, 2, "implicit_gemm_coopmat=128x128x64/2x4/s2").find("bytes of workgroup memory"), std::string::npos);
}

}  // namespace
}  // namespace vkc::test
