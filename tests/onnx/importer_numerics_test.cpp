// ONNX import + GPU: imported models run on the device (lavapipe in CI) and match the reference
// interpreter; BatchNormalization folding keeps the numerics of the unfolded form.
#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "ir/interpreter.h"
#include "onnx/importer.h"
#include "onnx_model_builder.h"

namespace vkc::test {
namespace {

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * float(int(i % 7) - 3);
  return v;
}

// x -> Conv(w, b) -> BatchNormalization -> y; with `conv_is_output` the conv result is also a
// graph output, which forbids folding.
std::string conv_bn_model(const std::string& dir, bool conv_is_output) {
  OnnxModel m(15);
  m.input("x", {1, 3, 6, 6});
  m.initializer("w", {4, 3, 3, 3}, ramp(108, 0.1f));
  m.initializer("b", {4}, {0.5f, -0.5f, 0.25f, 0});
  m.initializer("scale", {4}, {1.5f, 0.5f, -1, 2});
  m.initializer("shift", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  m.initializer("mean", {4}, {0.05f, -0.1f, 0.2f, 0});
  m.initializer("var", {4}, {1, 2, 0.5f, 4});
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  OnnxModel::attr_ints(conv, "pads", {1, 1, 1, 1});
  auto* bn = m.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"}, "bn");
  OnnxModel::attr_float(bn, "epsilon", 1e-3f);
  m.output("y");
  if (conv_is_output) m.output("c");
  return m.write(dir);
}

TEST(OnnxNumerics, BatchNormFoldsIntoConvWeights) {
  ir::Graph folded = onnx::import_model(conv_bn_model(scratch_dir("bn_fold"), false));
  ir::Graph unfolded = onnx::import_model(conv_bn_model(scratch_dir("bn_nofold"), true));
  int computing_folded = 0, computing_unfolded = 0;
  for (const ir::Op* op : folded.ops()) computing_folded += op->kind != ir::OpKind::Constant;
  for (const ir::Op* op : unfolded.ops()) computing_unfolded += op->kind != ir::OpKind::Constant;
  EXPECT_EQ(computing_folded, 1);    // the conv alone
  EXPECT_EQ(computing_unfolded, 3);  // conv, mul, add
  auto inputs = random_inputs(folded, 7);
  HostTensor a = ir::interpret(folded, inputs).at("y");
  HostTensor b = ir::interpret(unfolded, inputs).at("y");
  Comparison c = compare(a, b, 1e-5, 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
  GpuRun run = run_on_gpu(folded, inputs);
  EXPECT_TRUE(outputs_match(run, {{}, 1e-4, 1e-5, "", {}}));
}

TEST(OnnxNumerics, BatchNormWithoutConvIsMulAdd) {
  OnnxModel m(15);
  m.input("x", {2, 3, 4});
  for (const char* n : {"s", "b", "mean", "var"}) m.initializer(n, {3}, {0.5f, 1, 2});
  m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"});
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("bn_plain")));
  auto inputs = random_inputs(g, 3);
  GpuRun run = run_on_gpu(g, inputs);
  EXPECT_TRUE(outputs_match(run, {{}, 1e-4, 1e-5, "", {}}));
  // x * s/sqrt(var+eps) + (b - mean * s/sqrt(var+eps)) for channel 2 (all params 2).
  double a = 2 / std::sqrt(2 + 1e-5), x = inputs.at("x").get_f64(2 * 4);
  EXPECT_NEAR(run.reference.at("y").get_f64(2 * 4), x * a + (2 - 2 * a), 1e-5);
}

TEST(OnnxNumerics, SmallNetworkRunsOnTheDevice) {
  OnnxModel m(13);
  m.input("input", {1, 2, 8, 8});
  m.initializer("w", {4, 2, 3, 3}, ramp(72, 0.2f));
  auto* conv = m.node("Conv", {"input", "w"}, {"c"});
  OnnxModel::attr_ints(conv, "strides", {2, 2});
  m.node("Relu", {"c"}, {"r"});
  auto* pool = m.node("MaxPool", {"r"}, {"p"});
  OnnxModel::attr_ints(pool, "kernel_shape", {2, 2});
  OnnxModel::attr_ints(pool, "strides", {1, 1});
  OnnxModel::attr_int(m.node("Flatten", {"p"}, {"f"}), "axis", 1);
  m.initializer("fc", {4, 16}, ramp(64, 0.05f));
  m.initializer("fc_b", {4}, {1, 2, 3, 4});
  OnnxModel::attr_int(m.node("Gemm", {"f", "fc", "fc_b"}, {"g"}), "transB", 1);
  m.node("Softmax", {"g"}, {"probs"});
  m.output("probs");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("small_net")));
  EXPECT_EQ(g.outputs()[0].value->type.shape, (Shape{1, 4}));
  GpuRun run = run_on_gpu(g, random_inputs(g, 11));
  EXPECT_TRUE(outputs_match(run, {{}, 1e-4, 1e-5, "", {}}));
  EXPECT_TRUE(run.outputs.count("probs"));
}

TEST(OnnxNumerics, NearestResizeByIntegerScaleRepeatsElements) {
  OnnxModel m(13);
  m.input("x", {1, 1, 2, 2});
  m.initializer("scales", {4}, {1, 1, 2, 3});
  auto* r = m.node("Resize", {"x", "", "scales"}, {"y"});
  OnnxModel::attr_string(r, "mode", "nearest");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("resize")));
  std::map<std::string, HostTensor> in{{"x", make_f32({1, 1, 2, 2}, {1, 2, 3, 4})}};
  GpuRun run = run_on_gpu(g, in);
  EXPECT_TRUE(outputs_match(run));
  const HostTensor& y = run.outputs.at("y");
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 6}));
  std::vector<double> row0{1, 1, 1, 2, 2, 2}, row3{3, 3, 3, 4, 4, 4};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(y.get_f64(i), row0[size_t(i)]);
    EXPECT_EQ(y.get_f64(18 + i), row3[size_t(i)]);
  }
}

}  // namespace
}  // namespace vkc::test
