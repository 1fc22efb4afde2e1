// The SIMT GEMM conv whose K slices each hold one kernel tap (codegen/conv_planner.h,
// conv_slices_hold_one_tap; codegen/kernels/conv_gemm.cpp): tap-major columns, the tap and the
// row's bounds test decoded once per slice. Random convs rarely have a group's input channels a
// multiple of the slice (conv_differential_test.cpp draws 1-5), so these cases pick them: 1-D,
// 2-D and 3-D, groups, strides, dilations, asymmetric pads, channels-last inputs and outputs,
// filters as inputs in several layouts and as constants (which the compiler stores output
// channels, taps, input channels), implicit_gemm and split_k with an S that does not divide the
// slices. Each runs against the float64 reference with its outputs poisoned.
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "codegen/conv_planner.h"
#include "kernels/conv_test_support.h"
#include "module/target_profiles.h"

namespace vkc::test {
namespace {

using ir::OpKind;

struct OneTapCase {
  std::string name;
  Shape input, filter;
  ir::AttrMap attrs;
  bool bias = false;
  bool constant_filter = false;
};

void PrintTo(const OneTapCase& c, std::ostream* os) { *os << c.name; }

// conv_graph with the filter a constant of seeded random values (the graph's other inputs random
// too, by random_inputs).
ir::Graph one_tap_graph(const OneTapCase& c, uint32_t seed) {
  ir::Graph g = conv_graph(OpKind::Conv, c.input, c.filter, c.bias, c.attrs);
  if (!c.constant_filter) return g;
  ir::Graph with_constant;
  std::map<std::string, HostTensor> values = random_inputs(g, seed);
  auto w = std::make_shared<const HostTensor>(values.at("w"));
  std::vector<ir::Value*> operands{with_constant.add_input("x", {DType::f32, c.input}),
                                   with_constant.add_op(OpKind::Constant, {}, {{"value", w}}, "w")->result()};
  if (c.bias) operands.push_back(with_constant.add_input("b", only_conv(g).operand(2)->type));
  with_constant.add_output(with_constant.add_op(OpKind::Conv, operands, c.attrs, "conv")->result(), "y");
  return with_constant;
}

std::vector<OneTapCase> cases() {
  using Ints = std::vector<int64_t>;
  auto s = [](const char* text) { return std::string(text); };
  return {
      {"nchw_3x3_bias", {2, 32, 9, 11}, {24, 32, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true},
      {"nchw_3x3_constant_filter", {2, 32, 9, 11}, {24, 32, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, true},
      {"nhwc_hwcf_strided_dilated",
       {1, 13, 12, 32},
       {3, 3, 32, 20},
       {{"input_layout", s("NHWC")},
        {"filter_layout", s("HWCF")},
        {"strides", Ints{2, 1}},
        {"dilations", Ints{2, 2}},
        {"pads", Ints{2, 0, 1, 2}}}},
      {"nhwc_constant_filter_nhwc_out",
       {2, 7, 8, 48},
       {16, 48, 3, 2},
       {{"input_layout", s("NHWC")}, {"output_layout", s("NHWC")}, {"pads", Ints{0, 1, 2, 0}}},
       true,
       true},
      {"grouped", {1, 64, 8, 8}, {40, 32, 3, 3}, {{"groups", int64_t(2)}, {"pads", Ints{1, 1, 1, 1}}}, true},
      {"grouped_constant_filter",
       {2, 64, 6, 5},
       {24, 16, 3, 3},
       {{"groups", int64_t(4)}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
       false,
       true},
      {"one_dim", {2, 16, 20}, {8, 16, 5}, {{"pads", Ints{2, 1}}}, true},
      {"three_dim_constant_filter", {1, 16, 5, 6, 7}, {8, 16, 3, 3, 3}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}}, false, true},
      {"pointwise_strided", {2, 32, 7, 7}, {16, 32, 1, 1}, {{"strides", Ints{2, 2}}}, true},
      {"filter_cfhw_layout", {1, 32, 6, 9}, {32, 12, 3, 3}, {{"filter_layout", s("CFHW")}, {"pads", Ints{1, 1, 1, 1}}}},
  };
}

class ConvOneTap : public ::testing::TestWithParam<OneTapCase> {};

TEST_P(ConvOneTap, MatchesTheReference) {
  const OneTapCase& c = GetParam();
  ir::Graph g = one_tap_graph(c, 97);
  const ir::ConvGeometry geo = ir::conv_geometry(only_conv(g));
  const TargetLimits lavapipe = find_target("lavapipe").limits;
  for (const std::string strategy : {"implicit_gemm", "split_k:3"}) {
    SCOPED_TRACE(strategy);
    // On lavapipe's plan the slices hold one tap, so CI runs the path these cases are for.
    codegen::ConvPlan plan = codegen::plan_conv(geo, lavapipe, 4, strategy, c.name);
    EXPECT_TRUE(codegen::conv_slices_hold_one_tap(geo, plan));
    GpuRun run = run_conv(g, random_inputs(g, 5), strategy);
    EXPECT_TRUE(outputs_match(run));
  }
  // The compiler's passes store a constant filter of more than one tap output channels, taps, input
  // channels (the layout in which the slices' quads of channels are contiguous) where the planner's
  // own choice holds one tap per slice (not a direct conv, as for the small grouped case).
  ir::Graph passed = g.clone();
  codegen::default_pass_pipeline({}, &lavapipe, Precision::fp32).run(passed);
  const std::string packed = "F" + ir::spatial_letters(geo.spatial_rank) + "C";
  const bool is_packed = ir::conv_geometry(only_conv(passed)).filter_layout == packed;
  const bool chosen = codegen::conv_slices_hold_one_tap(geo, codegen::plan_conv(geo, lavapipe, 4, "", c.name));
  EXPECT_EQ(is_packed, c.constant_filter && shape_numel(geo.kernel) > 1 && chosen);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvOneTap, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<OneTapCase>& i) { return i.param.name; });

// Results of an NCHW conv leave the GEMM loop in 16-byte stores of four positions where the
// positions come in whole quads (STORE_QUADS; tests/fusion/quad_store_test.cpp), else through
// workgroup memory with neighbouring invocations on neighbouring output positions (gemm_core.glsl,
// STORE_M_FAST) where the tile has a multiple of 32 rows: 41x35 positions, and split_k's partial
// sums. lavapipe's own tiles for these small convs are narrower, so they are planned with NVIDIA's
// tile list (within lavapipe's limits): 128-row tiles, the one-tap loads and the generic ones (3
// input channels), a bias, and a channels-last output that keeps the column-wise stores.
TEST(ConvStoreMFast, NvidiaTilesMatchTheReference) {
  using Ints = std::vector<int64_t>;
  const std::vector<OneTapCase> convs = {
      {"nchw_one_tap", {2, 32, 40, 36}, {72, 32, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true},
      {"nchw_odd_positions", {1, 32, 41, 35}, {64, 32, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true},
      {"nchw_three_channels", {1, 3, 66, 70}, {48, 3, 3, 3}, {{"pads", Ints{1, 0, 1, 2}}}, true},
      {"nhwc_output", {1, 32, 48, 40}, {64, 32, 3, 3}, {{"output_layout", std::string("NHWC")}}, true},
  };
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) { t.vendor = Vendor::nvidia; };
  for (const OneTapCase& c : convs) {
    for (const std::string strategy : {"implicit_gemm", "split_k"}) {
      SCOPED_TRACE(c.name + " " + strategy);
      ir::Graph g = one_tap_graph(c, 31);
      TargetLimits t = find_target("lavapipe").limits;
      o.adjust_target(t);
      codegen::ConvPlan plan = codegen::plan_conv(ir::conv_geometry(only_conv(g)), t, 4, strategy, c.name);
      EXPECT_EQ(codegen::tile_m(plan.tile) % 32, 0u) << codegen::tile_m(plan.tile) << "x" << codegen::tile_n(plan.tile);
      o.forced_strategy = {{"conv", strategy}};
      EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 7), o), o));
    }
  }
}

// Forced FMA tiles (conv_planner.h, "implicit_gemm=TILE"): the two-stage tiles the planner offers
// matmuls only, with 8x8 and 8x4 blocks, alone and split, on the one-tap loads, the generic ones
// (3 input channels), the stores through workgroup memory (with one-tap loads too) and a
// channels-last output; and the deep convs' 128x32 and 256x64 tiles (gemm_planner.cpp
// kDeepFmaConvMinK; 256x64 8-deep here, as the 16-deep one NVIDIA takes needs 40 KiB of workgroup
// memory and lavapipe has 32).
TEST(ConvForcedTile, TwoStageTilesMatchTheReference) {
  using Ints = std::vector<int64_t>;
  const std::vector<OneTapCase> convs = {
      {"nchw_one_tap", {2, 32, 20, 18}, {72, 32, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true},
      {"nchw_three_channels", {1, 3, 33, 35}, {48, 3, 3, 3}, {{"pads", Ints{1, 0, 1, 2}}}, true},
      {"nhwc_output", {1, 32, 24, 20}, {64, 32, 3, 3}, {{"output_layout", std::string("NHWC")}}, true},
      // One-tap loads with results through workgroup memory (7x7 positions, not in quads), as
      // ResNet-50's batch-128 layer-4 expansions run on 128x64 (gemm_planner.cpp kNonQuadLargestTileMinK).
      {"nchw_one_tap_7x7", {3, 64, 7, 7}, {80, 64, 1, 1}, {}, true},
  };
  for (const OneTapCase& c : convs) {
    for (const std::string tile : {"128x64x16/8x8/2", "64x64x16/8x4/2", "128x64x16/8x8/2/k2", "256x128x8/16x8/2",
                                   "128x32x16/8x4/2", "256x64x8/8x8/2"}) {
      SCOPED_TRACE(c.name + " " + tile);
      ir::Graph g = one_tap_graph(c, 43);
      GpuRun run = run_conv(g, random_inputs(g, 11), "implicit_gemm=" + tile);
      EXPECT_TRUE(outputs_match(run));
    }
  }
}

// Slices that would straddle two taps keep the per-element decode: a group's input channels not
// a multiple of the slice, a conv_transpose, the explicit im2col strategy.
TEST(ConvOneTapPlan, OnlyWhereASliceHoldsOneTap) {
  const TargetLimits t = find_target("lavapipe").limits;
  auto holds = [&](OpKind kind, const Shape& x, const Shape& w, const std::string& strategy) {
    ir::Graph g = conv_graph(kind, x, w, false, {});
    const ir::ConvGeometry geo = ir::conv_geometry(only_conv(g));
    return codegen::conv_slices_hold_one_tap(geo, codegen::plan_conv(geo, t, 4, strategy, "conv"));
  };
  EXPECT_TRUE(holds(OpKind::Conv, {1, 32, 8, 8}, {16, 32, 3, 3}, "implicit_gemm"));
  EXPECT_FALSE(holds(OpKind::Conv, {1, 12, 8, 8}, {16, 12, 3, 3}, "implicit_gemm"));
  EXPECT_FALSE(holds(OpKind::Conv, {1, 3, 8, 8}, {16, 3, 3, 3}, "implicit_gemm"));
  EXPECT_FALSE(holds(OpKind::Conv, {1, 32, 8, 8}, {16, 32, 3, 3}, "im2col"));
  EXPECT_FALSE(holds(OpKind::ConvTranspose, {1, 32, 8, 8}, {32, 16, 3, 3}, "implicit_gemm"));
}

}  // namespace
}  // namespace vkc::test
