// Elementwise math fused into a conv's input loader (the prologue): the squeeze-excite scale
// x * gate[n, c] before a 1x1 conv, where the conv's kernel reads each input element a few times;
// refused where it would be recomputed many times (codegen/fusion_budget.h).
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"
#include "kernels/conv_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

// The squeeze-excite scale x * gate[n, c] fuses into the next conv's input loader where that conv
// reads each input element a few times (a 1x1 GEMM conv), for every strategy lavapipe runs.
TEST(ConvPrologue, SqueezeExciteScaleMatchesTheReferenceForEveryStrategy) {
  for (int64_t k : {1, 3}) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {2, 6, 7, 7}});
    ir::Value* gate = g.add_input("gate", {DType::f32, {2, 6, 1, 1}});
    ir::Value* w = g.add_input("w", {DType::f32, {8, 6, k, k}});
    ir::Value* scaled = g.add_op(OpKind::Mul, {x, gate}, {}, "scale")->result();
    std::vector<int64_t> pads(4, k / 2);
    g.add_output(g.add_op(OpKind::Conv, {scaled, w}, {{"pads", pads}}, "conv")->result(), "y");
    for (const std::string& strategy : lavapipe_strategies(g)) {
      GpuRun run = run_conv(g, random_inputs(g, 10), strategy);
      EXPECT_TRUE(outputs_match(run)) << "k " << k << " " << strategy;
      // Fused or not is decided by the planner's own choice, so every forced kernel runs the
      // same prologue: with k = 1 it is fused.
      bool fused = true;
      for (const DispatchDesc& d : run.module.manifest.dispatches) fused = fused && d.kernel != "elementwise";
      if (k == 1) {
        EXPECT_TRUE(fused) << strategy << "\n" << all_notes(run.module);
      }
    }
  }
}

TEST(ConvPrologueFormation, ScaleFusesIntoAOneByOneConvButNotIntoAWideDirectOne) {
  const char* one_by_one = R"(graph @g(%x: tensor<1x32x14x14xf32>, %h: tensor<1x32x1x1xf32>, %w: tensor<64x32x1x1xf32>) {
    %s = mul "scale" (%x, %h) : tensor<1x32x14x14xf32>
    %y = conv "conv" (%s, %w) : tensor<1x64x14x14xf32>
    return %y as "y"
  })";
  EXPECT_EQ(groups_of(one_by_one, "nvidia"), "[scale+conv]");
  // A tiny conv runs on the direct kernel, which reads each input element once per output
  // channel and tap: 9 x 64 reads would recompute the scale 576 times.
  const char* direct = R"(graph @g(%x: tensor<1x2x3x3xf32>, %h: tensor<1x2x1x1xf32>, %w: tensor<64x2x3x3xf32>) {
    %s = mul "scale" (%x, %h) : tensor<1x2x3x3xf32>
    %y = conv "conv" (%s, %w) {pads = [1, 1, 1, 1]} : tensor<1x64x3x3xf32>
    return %y as "y"
  })";
  EXPECT_EQ(groups_of(direct, "nvidia"), "[scale] [conv]");
}

}  // namespace
}  // namespace vkc::test
