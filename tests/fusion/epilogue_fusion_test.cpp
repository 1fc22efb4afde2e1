// Epilogue and prologue fusion into conv and matmul kernels, and elementwise fusion across
// reshape views: dispatch counts per target and numbers against the reference.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

TEST(EpilogueFusion, ConvBiasLeakyReluClipResidualIsOneDispatch) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {2, 4, 9, 9}});
  ir::Value* w = g.add_input("w", {DType::f32, {8, 4, 3, 3}});
  ir::Value* res = g.add_input("res", {DType::f32, {2, 8, 9, 9}});
  HostTensor bias(DType::f32, {1, 8, 1, 1});
  for (int64_t i = 0; i < 8; ++i) bias.set_f64(i, 0.1 * double(i) - 0.3);
  ir::Value* y = g.add_op(OpKind::Conv, {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv")->result();
  y = g.add_op(OpKind::Add, {y, g.add_constant(bias, "bias")}, {}, "bias_add")->result();
  y = g.add_op(OpKind::LeakyRelu, {y}, {{"alpha", 0.1}})->result();
  y = g.add_op(OpKind::Clip, {y}, {{"min", -0.5}, {"max", 1.5}})->result();
  g.add_output(g.add_op(OpKind::Add, {y, res}, {}, "residual")->result(), "out");
  GpuRun run = run_on_gpu(g, random_inputs(g, 3));
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << all_notes(run.module);
  EXPECT_NE(run.module.manifest.dispatches[0].notes.find("epilogue"), std::string::npos);
  // Every strategy stores through the same epilogue.
  for (const char* s : {"direct", "implicit_gemm", "im2col"}) {
    GpuRunOptions o;
    o.forced_strategy["conv"] = s;
    EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 4), o))) << s;
  }
}

TEST(EpilogueFusion, MatmulBiasReluIsOneDispatch) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", {DType::f32, {32, 24}});
  ir::Value* b = g.add_input("b", {DType::f32, {24, 40}});
  ir::Value* bias = g.add_input("bias", {DType::f32, {40}});
  ir::Value* y = g.add_op(OpKind::MatMul, {a, b})->result();
  y = g.add_op(OpKind::Add, {y, bias})->result();
  g.add_output(g.add_op(OpKind::Relu, {y})->result(), "y");
  for (const char* s : {"tiled", "naive"}) {
    GpuRunOptions o;
    o.forced_strategy["matmul"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, 9), o);
    EXPECT_TRUE(outputs_match(run, o)) << s;
    EXPECT_EQ(run.module.manifest.dispatches.size(), 1u) << s;
  }
}

TEST(EpilogueFusion, DepthwiseConvWithDequantizePrologueAndQuantizeEpilogue) {
  ir::Graph g;
  ir::Value* xq = g.add_input("xq", {DType::u8, {1, 6, 10, 10}});
  ir::Value* w = g.add_input("w", {DType::f32, {6, 1, 3, 3}});
  HostTensor s(DType::f32, {}), zp(DType::u8, {}), sy(DType::f32, {6});
  s.set_f64(0, 0.1);
  zp.set_f64(0, 3);
  for (int64_t i = 0; i < 6; ++i) sy.set_f64(i, 0.05 * double(i + 1));
  ir::Value* x = g.add_op(OpKind::Dequantize, {xq, g.add_constant(s), g.add_constant(zp)})->result();
  ir::Value* y = g.add_op(OpKind::Conv, {x, w}, {{"groups", int64_t(6)}})->result();
  g.add_output(g.add_op(OpKind::Quantize, {y, g.add_constant(sy)}, {{"to", std::string("u8")}})->result(), "q");
  for (const char* target : {"", "vulkan-min"}) {
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(g, random_inputs(g, 2), o);
    EXPECT_TRUE(outputs_match(run, o)) << target;
    EXPECT_EQ(run.module.manifest.dispatches.size(), 1u) << target << "\n" << all_notes(run.module);
  }
}

TEST(ReshapeFolding, ElementwiseCollapseElementwiseIsOneKernel) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {2, 3, 4, 5}});
  ir::Value* b = g.add_input("b", {DType::f32, {20}});
  ir::Value* t = g.add_op(OpKind::Tanh, {x})->result();
  ir::Value* c = g.add_op(OpKind::CollapseShape, {t},
                          {{"reassociation", ir::IntsList{{0, 1}, {2, 3}}}})->result();
  ir::Value* s = g.add_op(OpKind::Add, {c, b})->result();  // b broadcasts over the collapsed shape
  ir::Value* e = g.add_op(OpKind::ExpandShape, {s},
                          {{"reassociation", ir::IntsList{{0}, {1, 2}}}, {"shape", std::vector<int64_t>{6, 4, 5}}})
                     ->result();
  ir::Value* scale = g.add_input("scale", {DType::f32, {4, 1}});
  g.add_output(g.add_op(OpKind::Mul, {e, scale})->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 8));
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << all_notes(run.module);
  EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 5u);  // tanh, collapse, add, expand, mul
}

TEST(ReshapeFolding, ReshapeIsAViewNeverACopy) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {4, 6}});
  ir::Value* r = g.add_op(OpKind::Relu, {x})->result();
  ir::Value* v = g.add_op(OpKind::Reshape, {r}, {{"shape", std::vector<int64_t>{2, 12}}})->result();
  g.add_output(g.add_op(OpKind::Softmax, {v})->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 1));
  EXPECT_TRUE(outputs_match(run));
  for (const DispatchDesc& d : run.module.manifest.dispatches) EXPECT_EQ(d.kernel.find("copy"), std::string::npos);
}

TEST(ConstantFolding, BatchNormFoldsIntoConvWeights) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {1, 3, 8, 8}});
  std::mt19937 rng(3);
  HostTensor w = random_tensor(DType::f32, {4, 3, 3, 3}, rng), b = random_tensor(DType::f32, {4}, rng);
  HostTensor s = random_tensor(DType::f32, {4, 1, 1}, rng), t = random_tensor(DType::f32, {1, 4, 1, 1}, rng);
  ir::Value* y = g.add_op(OpKind::Conv, {x, g.add_constant(w), g.add_constant(b)})->result();
  y = g.add_op(OpKind::Mul, {y, g.add_constant(s)})->result();
  g.add_output(g.add_op(OpKind::Add, {g.add_constant(t), y})->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 2));
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u);
  EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 1u);  // the conv alone: mul/add are folded
}

}  // namespace
}  // namespace vkc::test
