// The conv budget planner on its own (no device): every plan fits its target, the search falls
// back to direct when no tile fits, and forced strategies are honoured or refused by name.
#include <algorithm>

#include <gtest/gtest.h>

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

TEST(ConvPlanner, EveryPlanFitsEveryProfile) {
  std::vector<ir::ConvGeometry> shapes{
      geometry({1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
      geometry({8, 3, 224, 224}, {64, 3, 7, 7}, {{"strides", std::vector<int64_t>{2, 2}}}),
      geometry({1, 512, 7, 7}, {2048, 512, 1, 1}),
      geometry({1, 32, 56, 56}, {32, 1, 3, 3}, {{"groups", int64_t(32)}}),
      geometry({1, 1, 32, 32, 32}, {16, 1, 9, 9, 1})};
  for (const std::string& name : codegen::known_targets()) {
    const TargetLimits& t = codegen::find_target(name).limits;
    for (const ir::ConvGeometry& g : shapes)
      for (const std::string& s : codegen::applicable_conv_strategies(g, t, 4)) {
        codegen::ConvPlan p = codegen::plan_conv(g, t, 4, s, "conv");
        EXPECT_EQ(p.strategy, s);
        EXPECT_LE(p.workgroup_memory_bytes, t.max_compute_shared_memory_size) << name << " " << s;
        EXPECT_LE(p.workgroup_size[0] * p.workgroup_size[1] * p.workgroup_size[2],
                  t.max_compute_work_group_invocations) << name << " " << s;
        for (int a = 0; a < 3; ++a) EXPECT_LE(p.workgroup_count[a], t.max_compute_work_group_count[a]);
      }
  }
}

TEST(ConvPlanner, NoTileFitsMeansDirectNeverAnError) {
  TargetLimits tiny = codegen::find_target("vulkan-min").limits;
  tiny.name = "tiny";
  tiny.max_compute_shared_memory_size = 256;  // below the smallest tile
  ir::ConvGeometry g = geometry({1, 64, 64, 64}, {128, 64, 3, 3});
  codegen::ConvPlan p = codegen::plan_conv(g, tiny, 4, "", "conv");
  EXPECT_EQ(p.strategy, "direct");
  EXPECT_EQ(p.workgroup_memory_bytes, 0u);
  EXPECT_EQ(codegen::applicable_conv_strategies(g, tiny, 4), std::vector<std::string>{"direct"});
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
    codegen::ConvPlan p = codegen::plan_conv(g, codegen::find_target(name).limits, 4, "", "conv");
    EXPECT_EQ(p.strategy, "implicit_gemm") << name;
    EXPECT_LE(p.workgroup_memory_bytes, previous) << name;
    previous = p.workgroup_memory_bytes;
  }
}

TEST(ConvPlanner, Im2colNeedsItsMatrixToFitTheBufferRange) {
  // [1,64,512,512] x 3x3: the column matrix is 262144 x 576 floats = 576 MiB.
  ir::ConvGeometry g = geometry({1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  std::vector<std::string> s = codegen::applicable_conv_strategies(g, codegen::find_target("vulkan-min").limits, 4);
  EXPECT_EQ(s, (std::vector<std::string>{"direct", "implicit_gemm"}));
}

// The depthwise benchmark shapes on the nvidia profile: whole W rows per tile, the whole channel
// multiplier per workgroup, and at least the planner's 128 workgroups (about one per SM of a
// large GPU; the 3-D case has only 32768 output positions).
TEST(ConvPlanner, DepthwiseTiledPlansForTheBenchmarkShapes) {
  const TargetLimits& t = codegen::find_target("nvidia").limits;
  ir::ConvGeometry dw = geometry({8, 144, 56, 56}, {144, 1, 3, 3},
                                 {{"groups", int64_t(144)}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  ir::ConvGeometry fan = geometry({1, 1, 32, 32, 32}, {16, 1, 9, 9, 1},
                                  {{"pads", std::vector<int64_t>{4, 4, 0, 4, 4, 0}}});
  for (const ir::ConvGeometry* g : {&dw, &fan}) {
    codegen::ConvPlan p = codegen::plan_conv(*g, t, 4, "", "conv");
    ASSERT_EQ(p.strategy, "depthwise_tiled");
    const codegen::DepthwiseTile& d = p.depthwise;
    EXPECT_EQ(d.out[2], uint32_t(g->out_spatial.back()));
    EXPECT_EQ(d.channels, uint32_t(g->out_channels_per_group()));
    EXPECT_GE(d.workgroups, 128u);
    EXPECT_EQ(p.workgroup_memory_bytes, 4 * (d.input_elements() + d.taps * d.channels));
    EXPECT_LE(d.slots * d.channels, 32u);  // accumulators per invocation
    EXPECT_GE(uint64_t(d.invocations) * d.slots, d.positions());
    EXPECT_GE(d.tiles[2] * d.out[2], uint32_t(g->out_spatial.back()));
  }
  // Each staged input value feeds all 16 channels of the fan-out conv.
  EXPECT_EQ(codegen::plan_conv(fan, t, 4, "", "conv").depthwise.lanes, 4u);
}

TEST(ConvPlanner, DepthwiseTiledFallsBackToOneOutputPerInvocation) {
  ir::ConvGeometry g = geometry({1, 8, 64, 64}, {8, 1, 5, 5}, {{"groups", int64_t(8)}});
  TargetLimits tiny = codegen::find_target("vulkan-min").limits;
  tiny.name = "tiny";
  tiny.max_compute_shared_memory_size = 256;  // below any tile: its window spans 5 input rows
  EXPECT_EQ(codegen::plan_conv(g, tiny, 4, "", "conv").strategy, "depthwise");
  std::vector<std::string> s = codegen::applicable_conv_strategies(g, tiny, 4);
  EXPECT_EQ(std::count(s.begin(), s.end(), "depthwise_tiled"), 0);
  try {
    codegen::plan_conv(g, tiny, 4, "depthwise_tiled", "conv 'c'");
    ADD_FAILURE() << "no depthwise tile fits 256 bytes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv 'c': strategy 'depthwise_tiled' does not apply: no depthwise tile"),
              std::string::npos) << e.what();
  }
  // Channels-last: the tiled kernel applies (forced) but the planner keeps the one-output kernel,
  // whose stores follow the physical order.
  ir::ConvGeometry nhwc = geometry({1, 64, 64, 8}, {8, 1, 5, 5},
                                   {{"groups", int64_t(8)}, {"input_layout", std::string("NHWC")},
                                    {"output_layout", std::string("NHWC")}});
  const TargetLimits& lv = codegen::find_target("lavapipe").limits;
  std::vector<std::string> ls = codegen::applicable_conv_strategies(nhwc, lv, 4);
  EXPECT_EQ(std::count(ls.begin(), ls.end(), "depthwise_tiled"), 1);
  EXPECT_EQ(codegen::plan_conv(nhwc, lv, 4, "", "conv").strategy, "depthwise");
}

}  // namespace
}  // namespace vkc::test
