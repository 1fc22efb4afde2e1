// Diamonds in epilogues: elementwise users of an anchor's result that rejoin into one value
// (SiLU as ONNX exports it, x * sigmoid(x); hardswish spelled out) fuse into the anchor's
// dispatch; those that do not rejoin, or whose inner values are used elsewhere, do not. Formation
// without a GPU, numbers on lavapipe against the reference for every conv strategy, matmul and
// pooling, and the binding budget cutting only where one value leaves.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"
#include "kernels/conv_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

TEST(EpilogueDiamondFormation, SiluAfterConvIsOneGroup) {
  const char* ir = R"(graph @g(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>) {
    %c = conv "conv" (%x, %w) {pads = [1, 1, 1, 1]} : tensor<1x8x6x6xf32>
    %s = sigmoid "sig" (%c) : tensor<1x8x6x6xf32>
    %y = mul "mul" (%c, %s) : tensor<1x8x6x6xf32>
    %r = relu "relu" (%y) : tensor<1x8x6x6xf32>
    return %r as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[conv+sig+mul+relu]");
}

TEST(EpilogueDiamondFormation, GeluErfFormWithConstantsAfterItIsOneGroup) {
  // GELU as PyTorch exports it, x * (1 + erf(x / sqrt(2))) * 0.5, after a matmul and its bias, with
  // the constants placed after the matmul (as the ONNX importer places initializers): the diamond
  // joins the matmul's epilogue, so the next matmul reads a stored result, not the GELU (that went
  // to its prologue, recomputed once per column tile, in BERT and ViT).
  const char* ir = R"(graph @g(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %b: tensor<64xf32>, %w2: tensor<64x8xf32>) {
    %h0 = matmul "fc1" (%x, %w1) : tensor<16x64xf32>
    %h = add "bias" (%h0, %b) : tensor<16x64xf32>
    %r2 = constant {value = dense<[1.4142135]> : tensor<1xf32>} : tensor<1xf32>
    %d = div "div" (%h, %r2) : tensor<16x64xf32>
    %e = erf "erf" (%d) : tensor<16x64xf32>
    %one = constant {value = dense<[1.0]> : tensor<1xf32>} : tensor<1xf32>
    %a = add "plus1" (%e, %one) : tensor<16x64xf32>
    %m = mul "mul" (%h, %a) : tensor<16x64xf32>
    %half = constant {value = dense<[0.5]> : tensor<1xf32>} : tensor<1xf32>
    %g = mul "half" (%m, %half) : tensor<16x64xf32>
    %y = matmul "fc2" (%g, %w2) : tensor<16x8xf32>
    return %y as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[fc1+bias+div+erf+plus1+mul+half] [fc2]");
}

TEST(EpilogueDiamondFormation, InnerValueUsedElsewhereStaysOut) {
  // The sigmoid is also a graph output: the group would have to store two values.
  const char* ir = R"(graph @g(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>) {
    %c = conv "conv" (%x, %w) {pads = [1, 1, 1, 1]} : tensor<1x8x6x6xf32>
    %s = sigmoid "sig" (%c) : tensor<1x8x6x6xf32>
    %y = mul "mul" (%c, %s) : tensor<1x8x6x6xf32>
    return %y as "y", %s as "gate"
  })";
  EXPECT_EQ(groups_of(ir), "[conv] [sig] [mul]");
}

TEST(EpilogueDiamondFormation, UsersThatDoNotRejoinStayOut) {
  // Two separate consumers (a fork, not a diamond): the conv result is stored once.
  const char* ir = R"(graph @g(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>) {
    %c = conv "conv" (%x, %w) {pads = [1, 1, 1, 1]} : tensor<1x8x6x6xf32>
    %a = relu "relu" (%c) : tensor<1x8x6x6xf32>
    %b = sigmoid "sig" (%c) : tensor<1x8x6x6xf32>
    return %a as "a", %b as "b"
  })";
  EXPECT_EQ(groups_of(ir), "[conv] [relu] [sig]");
}

TEST(EpilogueDiamondFormation, PoolUserOfTheDiamondKeepsTheExitStored) {
  // Squeeze-excite: SiLU's result feeds both the global pool and the scale. The SiLU fuses into
  // the conv; its result is stored once for both.
  const char* ir = R"(graph @g(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x1x1xf32>) {
    %c = conv "conv" (%x, %w) : tensor<1x8x6x6xf32>
    %s = sigmoid "sig" (%c) : tensor<1x8x6x6xf32>
    %a = mul "silu" (%c, %s) : tensor<1x8x6x6xf32>
    %p = avg_pool "gap" (%a) {global = true} : tensor<1x8x1x1xf32>
    %h = sigmoid "gate" (%p) : tensor<1x8x1x1xf32>
    %y = mul "scale" (%a, %h) : tensor<1x8x6x6xf32>
    return %y as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[conv+sig+silu] [gap+gate] [scale]");
}

// SiLU after every conv strategy lavapipe can run, after a matmul and after a pool.
TEST(EpilogueDiamond, SiluMatchesTheReferenceAfterEveryAnchor) {
  ir::Graph conv = conv_graph(OpKind::Conv, {2, 6, 9, 9}, {8, 6, 3, 3}, true,
                              {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  auto add_silu = [](ir::Graph& g) {
    ir::Value* r = g.outputs()[0].value;
    g.outputs().clear();
    ir::Value* s = g.add_op(OpKind::Sigmoid, {r}, {}, "silu.sig")->result();
    g.add_output(g.add_op(OpKind::Mul, {r, s}, {}, "silu.mul")->result(), "y");
  };
  add_silu(conv);
  for (const std::string& strategy : lavapipe_strategies(conv)) {
    GpuRun run = run_conv(conv, random_inputs(conv, 5), strategy);
    EXPECT_TRUE(outputs_match(run)) << strategy;
    for (const DispatchDesc& d : run.module.manifest.dispatches)
      EXPECT_NE(d.kernel, "elementwise") << strategy << ": the SiLU was not fused\n" << all_notes(run.module);
  }
  ir::Graph mm;
  ir::Value* a = mm.add_input("a", {DType::f32, {24, 16}});
  ir::Value* b = mm.add_input("b", {DType::f32, {16, 40}});
  mm.add_output(mm.add_op(OpKind::MatMul, {a, b}, {}, "mm")->result(), "r");
  add_silu(mm);
  GpuRun mr = run_on_gpu(mm, random_inputs(mm, 6));
  EXPECT_TRUE(outputs_match(mr));
  EXPECT_EQ(mr.module.manifest.dispatches.size(), 1u) << all_notes(mr.module);
  ir::Graph pool;
  ir::Value* x = pool.add_input("x", {DType::f32, {2, 3, 12, 12}});
  pool.add_output(pool.add_op(OpKind::MaxPool, {x}, {{"kernel", std::vector<int64_t>{3, 3}}}, "mp")->result(), "r");
  add_silu(pool);
  GpuRun pr = run_on_gpu(pool, random_inputs(pool, 7));
  EXPECT_TRUE(outputs_match(pr));
  EXPECT_EQ(pr.module.manifest.dispatches.size(), 1u) << all_notes(pr.module);
}

// vulkan-min allows 4 storage buffers: conv x, w and the output take 3, so of
// "SiLU, then add a residual (one more binding)" only the SiLU fits, and the cut falls after the
// diamond, never inside it.
TEST(EpilogueDiamond, BindingBudgetCutsAfterTheDiamond) {
  const char* ir = R"(graph @g(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %res: tensor<1x8x6x6xf32>, %res2: tensor<1x8x6x6xf32>) {
    %c = conv "conv" (%x, %w) {pads = [1, 1, 1, 1]} : tensor<1x8x6x6xf32>
    %s = sigmoid "sig" (%c) : tensor<1x8x6x6xf32>
    %y = mul "mul" (%c, %s) : tensor<1x8x6x6xf32>
    %z = add "res" (%y, %res) : tensor<1x8x6x6xf32>
    %u = add "res2" (%z, %res2) : tensor<1x8x6x6xf32>
    return %u as "y"
  })";
  EXPECT_EQ(groups_of(ir, "vulkan-min"), "[conv+sig+mul+res] [res2]");
  ir::Graph g = ir::parse_graph(ir);
  GpuRunOptions o;
  o.target = "vulkan-min";
  GpuRun run = run_on_gpu(g, random_inputs(g, 8), o);
  EXPECT_TRUE(outputs_match(run, o));
}

// A diamond holding two side operands needs 5 bindings with the conv's 3: it does not fit
// vulkan-min's 4 whole, and no cut inside it is valid (the conv result and the sigmoid would both
// leave the group), so the conv stands alone and the diamond is an elementwise dispatch.
TEST(EpilogueDiamond, NoCutInsideADiamond) {
  const char* ir = R"(graph @g(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>, %res: tensor<1x8x6x6xf32>, %res2: tensor<1x8x6x6xf32>) {
    %c = conv "conv" (%x, %w) {pads = [1, 1, 1, 1]} : tensor<1x8x6x6xf32>
    %s = sigmoid "sig" (%c) : tensor<1x8x6x6xf32>
    %t = mul "t" (%s, %res) : tensor<1x8x6x6xf32>
    %t2 = add "t2" (%t, %res2) : tensor<1x8x6x6xf32>
    %y = mul "y" (%c, %t2) : tensor<1x8x6x6xf32>
    return %y as "y"
  })";
  EXPECT_EQ(groups_of(ir, "vulkan-min"), "[conv] [sig+t+t2+y]");
  EXPECT_EQ(groups_of(ir, "lavapipe"), "[conv+sig+t+t2+y]");
  ir::Graph g = ir::parse_graph(ir);
  GpuRunOptions o;
  o.target = "vulkan-min";
  GpuRun run = run_on_gpu(g, random_inputs(g, 9), o);
  EXPECT_TRUE(outputs_match(run, o));
}

}  // namespace
}  // namespace vkc::test
