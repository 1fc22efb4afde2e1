// 16-byte result stores of the GEMM kernels (gemm_core.glsl's STORE_QUADS, fusion.h's
// store_result4): an invocation's four consecutive output positions (NCHW convs) or columns
// (row-major matrices) leave in one store, the epilogue's side operands read once or 16 bytes at a
// time. Where a quad would cross what the epilogue or the output layout keeps together, results
// leave one at a time. Each case checks which way the dispatch took (its `quad_stores` tile
// entry, shown by --report) and the numbers against the float64 reference.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

bool stores_quads(const ModuleImage& m, const std::string& kernel_prefix) {
  for (const DispatchDesc& d : m.manifest.dispatches)
    if (d.kernel.rfind(kernel_prefix, 0) == 0) return d.tiles.count("quad_stores") != 0;
  ADD_FAILURE() << "no dispatch of kernel " << kernel_prefix << "\n" << all_notes(m);
  return false;
}

// conv (+ per-channel bias constant) + side (broadcast or same shape) -> relu, one dispatch.
ir::Graph conv_with_side(Shape x, Shape w, Shape side, std::vector<int64_t> pads) {
  ir::Graph g;
  ir::Value* xv = g.add_input("x", {DType::f32, x});
  ir::Value* wv = g.add_input("w", {DType::f32, w});
  ir::Value* sv = g.add_input("side", {DType::f32, side});
  HostTensor bias(DType::f32, {1, w[0], 1, 1});
  for (int64_t i = 0; i < w[0]; ++i) bias.set_f64(i, 0.05 * double(i % 7) - 0.2);
  ir::Value* y = g.add_op(OpKind::Conv, {xv, wv}, {{"pads", pads}}, "conv")->result();
  y = g.add_op(OpKind::Add, {y, g.add_constant(bias, "bias")}, {}, "bias_add")->result();
  y = g.add_op(OpKind::Add, {y, sv}, {}, "side_add")->result();
  g.add_output(g.add_op(OpKind::Relu, {y})->result(), "y");
  return g;
}

TEST(QuadStores, ConvResidualEpiloguesStoreFourPositionsAtOnce) {
  // 1x1 (ResNet's expansion with its residual) and 3x3, positions 8x8 and 6x10 (a quad crosses
  // a row of the image: positions stay dense across rows).
  for (const auto& [x, w, pads] : {std::tuple{Shape{2, 16, 8, 8}, Shape{32, 16, 1, 1}, std::vector<int64_t>{0, 0, 0, 0}},
                                   std::tuple{Shape{2, 8, 6, 10}, Shape{20, 8, 3, 3}, std::vector<int64_t>{1, 1, 1, 1}}}) {
    Shape y{x[0], w[0], x[2], x[3]};
    ir::Graph g = conv_with_side(x, w, y, pads);
    GpuRunOptions o;
    o.forced_strategy["conv"] = "implicit_gemm=32x32x8/4x4/1";  // small shapes plan 2x2 blocks
    GpuRun run = run_on_gpu(g, random_inputs(g, 5), o);
    EXPECT_TRUE(outputs_match(run, o)) << shape_str(x) << " " << shape_str(w);
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << all_notes(run.module);
    EXPECT_TRUE(stores_quads(run.module, "conv_implicit_gemm")) << shape_str(x) << " " << shape_str(w);
  }
}

// A split conv's raw partial sums have no side operands to read: they leave through workgroup
// memory in whole rows of positions, which measured faster (conv_gemm.cpp).
TEST(QuadStores, SplitConvPartialSumsLeaveThroughWorkgroupMemory) {
  ir::Graph g = conv_with_side({1, 64, 8, 8}, {16, 64, 3, 3}, {1, 16, 8, 8}, {1, 1, 1, 1});
  GpuRunOptions o;
  o.forced_strategy["conv"] = "implicit_gemm=32x32x8/4x4/1/k3";
  GpuRun run = run_on_gpu(g, random_inputs(g, 6), o);
  EXPECT_TRUE(outputs_match(run, o));
  EXPECT_FALSE(stores_quads(run.module, "conv_split_k_gemm")) << all_notes(run.module);
}

TEST(QuadStores, ConvsWhoseQuadsWouldSplitStoreOneAtATime) {
  struct Case {
    const char* why;
    Shape x, w, side;
  };
  for (const Case& c : {
           // 7x7: 49 positions, so a quad of rows would cross into the next image or channel
           Case{"positions not in quads", {2, 8, 7, 7}, {12, 8, 1, 1}, {2, 12, 7, 7}},
           // 2x2 positions are one quad, but the side operand changes along H and not along W in it
           Case{"side operand varies inside a quad", {3, 8, 2, 2}, {12, 8, 1, 1}, {12, 2, 1}},
       }) {
    ir::Graph g = conv_with_side(c.x, c.w, c.side, {0, 0, 0, 0});
    GpuRunOptions o;
    o.forced_strategy["conv"] = "implicit_gemm=32x32x8/4x4/1";
    GpuRun run = run_on_gpu(g, random_inputs(g, 7), o);
    EXPECT_TRUE(outputs_match(run, o)) << c.why;
    EXPECT_FALSE(stores_quads(run.module, "conv_implicit_gemm")) << c.why;
  }
}

// Channel planes of 64 KiB and multiples keep the stores through workgroup memory (the seed
// conv's 512x512 planes measured 15% slower with quads; conv_gemm.cpp, kQuadPlaneBytes). Planned
// for the NVIDIA profile, no GPU needed.
TEST(QuadStores, PowerOfTwoChannelPlanesKeepRowStores) {
  for (const auto& [hw, quads] : {std::pair<int64_t, bool>{512, false}, {128, false}, {56, true}, {120, true}}) {
    ir::Graph g = conv_with_side({8, 64, hw, hw}, {256, 64, 3, 3}, {1}, {1, 1, 1, 1});
    ModuleImage m = compile_for(g, "nvidia");
    EXPECT_EQ(stores_quads(m, "conv_implicit_gemm"), quads) << hw << "x" << hw;
  }
}

// matmul -> + bias[N] -> tanh -> + residual[M, N]
ir::Graph matmul_with_side(int64_t m, int64_t k, int64_t n) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", {DType::f32, {m, k}});
  ir::Value* b = g.add_input("b", {DType::f32, {k, n}});
  ir::Value* bias = g.add_input("bias", {DType::f32, {n}});
  ir::Value* res = g.add_input("res", {DType::f32, {m, n}});
  ir::Value* y = g.add_op(OpKind::MatMul, {a, b})->result();
  y = g.add_op(OpKind::Add, {y, bias})->result();
  y = g.add_op(OpKind::Tanh, {y})->result();
  g.add_output(g.add_op(OpKind::Add, {y, res})->result(), "y");
  return g;
}

TEST(QuadStores, MatmulEpiloguesStoreFourColumnsAtOnce) {
  for (const char* forced : {"tiled=32x32x16/4x4/1", "tiled=32x32x16/4x4/1/k3"}) {
    ir::Graph g = matmul_with_side(40, 96, 36);
    GpuRunOptions o;
    o.forced_strategy["matmul"] = forced;
    GpuRun run = run_on_gpu(g, random_inputs(g, 8), o);
    EXPECT_TRUE(outputs_match(run, o)) << forced;
    EXPECT_TRUE(stores_quads(run.module, "matmul_")) << forced << "\n" << all_notes(run.module);
  }
}

TEST(QuadStores, MatmulsWhoseRowsAreNotQuadsStoreOneAtATime) {
  ir::Graph g = matmul_with_side(40, 24, 38);  // N = 38: a quad would cross into the next row
  GpuRunOptions o;
  o.forced_strategy["matmul"] = "tiled=32x32x16/4x4/1";
  GpuRun run = run_on_gpu(g, random_inputs(g, 9), o);
  EXPECT_TRUE(outputs_match(run, o));
  EXPECT_FALSE(stores_quads(run.module, "matmul_"));
}

}  // namespace
}  // namespace vkc::test
