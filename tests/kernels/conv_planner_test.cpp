// The conv budget planner on its own (no device): every plan fits its target, the search falls
// back to direct when no tile fits, and forced strategies are honoured or refused by name.
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

}  // namespace
}  // namespace vkc::test
