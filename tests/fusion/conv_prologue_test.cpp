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

// x * scale + shift, then ReLU, per input channel (a pre-activation batch norm that cannot fold
// into the conv's weights: DenseNet's) before a conv of `k` x `k` taps.
ir::Graph preactivation_conv(int64_t channels, int64_t size, int64_t k, int64_t stride) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {2, channels, size, size}});
  ir::Value* scale = g.add_input("scale", {DType::f32, {channels, 1, 1}});
  ir::Value* shift = g.add_input("shift", {DType::f32, {channels, 1, 1}});
  ir::Value* w = g.add_input("w", {DType::f32, {24, channels, k, k}});
  ir::Value* m = g.add_op(OpKind::Mul, {x, scale}, {}, "bn_scale")->result();
  ir::Value* a = g.add_op(OpKind::Add, {m, shift}, {}, "bn_shift")->result();
  ir::Value* r = g.add_op(OpKind::Relu, {a}, {}, "relu")->result();
  std::vector<int64_t> pads(4, k / 2);
  const std::vector<int64_t> strides{stride, stride};
  g.add_output(g.add_op(OpKind::Conv, {r, w}, {{"pads", pads}, {"strides", strides}}, "conv")->result(), "y");
  return g;
}

bool finishes_at_store(const ModuleImage& m) {
  for (const DispatchDesc& d : m.manifest.dispatches)
    if (auto it = d.tiles.find("prologue_at_store"); it != d.tiles.end() && it->second == 1) return true;
  return false;
}

// Where the conv's K slices each hold one tap, the prologue's arithmetic runs where the loaded
// values are stored to workgroup memory (codegen/kernels/gemm_core.h, a_finish), not where they
// are loaded; the padding outside the input stays 0 after it (ReLU(shift) is not). The lavapipe
// profile's plans finish at the store (the 3x3 conv too: at 28x28 its prologue fuses there, not on
// NVIDIA's), and every strategy lavapipe runs matches the reference on the test's device.
TEST(ConvPrologue, PreactivationBatchNormReluMatchesTheReferenceFinishedAtTheStore) {
  struct Case {
    int64_t channels, size, k, stride;
  };
  for (const Case& c : {Case{32, 9, 1, 1}, Case{48, 7, 1, 2}, Case{32, 28, 3, 1}}) {
    ir::Graph g = preactivation_conv(c.channels, c.size, c.k, c.stride);
    const std::string what = cat("C ", c.channels, " k ", c.k, " stride ", c.stride);
    EXPECT_TRUE(finishes_at_store(compile_for(g, "lavapipe"))) << what;
    for (const std::string& strategy : lavapipe_strategies(g)) {
      GpuRun run = run_conv(g, random_inputs(g, 40 + c.k), strategy);
      EXPECT_TRUE(outputs_match(run)) << what << " " << strategy;
    }
  }
}

// A prologue that reads its tensor at another index too (x + x reversed along W) cannot be
// finished from the one raw value: it keeps computing at the load, and still matches.
TEST(ConvPrologue, APrologueThatReadsItsTensorTwiceIsNotFinishedAtTheStore) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {2, 32, 8, 8}});
  ir::Value* w = g.add_input("w", {DType::f32, {16, 32, 1, 1}});
  ir::Value* rev = g.add_op(OpKind::Reverse, {x}, {{"axes", std::vector<int64_t>{3}}}, "rev")->result();
  ir::Value* sum = g.add_op(OpKind::Add, {x, rev}, {}, "sum")->result();
  g.add_output(g.add_op(OpKind::Conv, {sum, w}, {}, "conv")->result(), "y");
  GpuRun run = run_conv(g, random_inputs(g, 7), "implicit_gemm");
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << all_notes(run.module);
  EXPECT_FALSE(finishes_at_store(run.module));
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
