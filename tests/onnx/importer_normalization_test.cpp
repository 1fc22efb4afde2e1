// ONNX import of the normalizations and reductions group (issue 23): LayerNormalization (with its
// Mean and InvStdDev outputs, a broadcast Scale, a residual Add fused in front),
// GroupNormalization in its opset 18 and 21 forms, InstanceNormalization, CumSum, and the Reduce
// ops with axes as an attribute (opset 13) and as an input (18); refusals name node and attribute.
#include <gtest/gtest.h>

#include <cmath>

#include "common/gpu_harness.h"
#include "ir/interpreter.h"
#include "onnx/importer.h"
#include "onnx_model_builder.h"

namespace vkc::test {
namespace {

using ir::OpKind;

std::vector<OpKind> compute_kinds(const ir::Graph& g) {
  std::vector<OpKind> kinds;
  for (const ir::Op* op : g.ops())
    if (op->kind != OpKind::Constant && op->kind != OpKind::Reshape) kinds.push_back(op->kind);
  return kinds;
}

std::vector<float> ramp(size_t n, float scale, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * float(int(i % 5) - 2);
  return v;
}

const GpuRunOptions kTol{{}, 1e-4, 1e-5, "", {}};

TEST(OnnxNormalization, LayerNormWithMeanAndInvStdDev) {
  OnnxModel m(17);
  m.input("x", {2, 3, 8});
  m.initializer("w", {8}, ramp(8, 0.5f, 1));
  m.initializer("b", {8}, ramp(8, 0.25f));
  auto* ln = m.node("LayerNormalization", {"x", "w", "b"}, {"y", "mean", "inv_std"}, "ln");
  OnnxModel::attr_int(ln, "axis", -1);
  OnnxModel::attr_float(ln, "epsilon", 1e-3f);
  m.output("y");
  m.output("mean");
  m.output("inv_std");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("ln_stats")));
  EXPECT_EQ(g.outputs()[1].value->type.shape, (Shape{2, 3, 1}));
  EXPECT_EQ(g.outputs()[2].value->type.shape, (Shape{2, 3, 1}));
  auto inputs = random_inputs(g, 5);
  GpuRun run = run_on_gpu(g, inputs);
  EXPECT_TRUE(outputs_match(run, kTol));
  // Row 1 by hand.
  const HostTensor& x = inputs.at("x");
  double mean = 0, var = 0;
  for (int i = 0; i < 8; ++i) mean += x.get_f64(8 + i) / 8;
  for (int i = 0; i < 8; ++i) var += (x.get_f64(8 + i) - mean) * (x.get_f64(8 + i) - mean) / 8;
  EXPECT_NEAR(run.outputs.at("mean").get_f64(1), mean, 1e-5);
  EXPECT_NEAR(run.outputs.at("inv_std").get_f64(1), 1 / std::sqrt(var + 1e-3), 1e-4);
  // w[1] = 0.5, b[1] = -0.25.
  EXPECT_NEAR(run.outputs.at("y").get_f64(9), (x.get_f64(9) - mean) / std::sqrt(var + 1e-3) * 0.5 - 0.25, 1e-4);
}

TEST(OnnxNormalization, LayerNormBroadcastsScaleAndFusesTheResidualAdd) {
  OnnxModel m(17);
  m.input("x", {4, 3, 64});
  m.input("r", {4, 3, 64});
  m.initializer("w", {64}, ramp(64, 0.5f, 1));
  m.node("Add", {"x", "r"}, {"h"}, "residual");
  auto* ln = m.node("LayerNormalization", {"h", "w"}, {"y"}, "ln");
  OnnxModel::attr_int(ln, "axis", 1);  // over [3, 64]: the [64] scale broadcasts
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("ln_residual")));
  EXPECT_EQ(compute_kinds(g), (std::vector<OpKind>{OpKind::Add, OpKind::LayerNorm}));
  GpuRun run = run_on_gpu(g, random_inputs(g, 6));
  EXPECT_TRUE(outputs_match(run, kTol));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << "the add fuses into the layer_norm's load";
}

// The TorchScript exporter below opset 17 spells LayerNorm out; it imports as those ops and
// computes what LayerNormalization computes.
TEST(OnnxNormalization, DecomposedLayerNormOfOlderExportsMatches) {
  OnnxModel d(13);
  d.input("x", {2, 5, 48});
  d.initializer("w", {48}, ramp(48, 0.5f, 1));
  d.initializer("b", {48}, ramp(48, 0.25f));
  d.initializer("two", {}, {2});
  d.initializer("eps", {}, {1e-5f});
  OnnxModel::attr_ints(d.node("ReduceMean", {"x"}, {"m"}), "axes", {-1});
  d.node("Sub", {"x", "m"}, {"c"});
  d.node("Pow", {"c", "two"}, {"sq"});
  OnnxModel::attr_ints(d.node("ReduceMean", {"sq"}, {"v"}), "axes", {-1});
  d.node("Add", {"v", "eps"}, {"ve"});
  d.node("Sqrt", {"ve"}, {"sd"});
  d.node("Div", {"c", "sd"}, {"n"});
  d.node("Mul", {"n", "w"}, {"s"});
  d.node("Add", {"s", "b"}, {"y"});
  d.output("y");
  ir::Graph decomposed = onnx::import_model(d.write(scratch_dir("ln_decomposed")));

  OnnxModel f(17);
  f.input("x", {2, 5, 48});
  f.initializer("w", {48}, ramp(48, 0.5f, 1));
  f.initializer("b", {48}, ramp(48, 0.25f));
  f.node("LayerNormalization", {"x", "w", "b"}, {"y"});
  f.output("y");
  ir::Graph fused = onnx::import_model(f.write(scratch_dir("ln_op")));
  auto inputs = random_inputs(fused, 12);
  Comparison c = compare(ir::interpret(decomposed, inputs).at("y"), ir::interpret(fused, inputs).at("y"), 1e-6, 1e-6);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(outputs_match(run_on_gpu(decomposed, inputs), kTol));
}

TEST(OnnxNormalization, LayerNormRefusesAnotherStashType) {
  OnnxModel m(17);
  m.input("x", {2, 8});
  m.initializer("w", {8}, ramp(8, 1));
  OnnxModel::attr_int(m.node("LayerNormalization", {"x", "w"}, {"y"}, "ln"), "stash_type", 11);
  m.output("y");
  std::string path = m.write(scratch_dir("ln_stash"));
  EXPECT_EQ(import_error(path), path + ": cannot import 1 item: node 'ln' (LayerNormalization): attribute 'stash_type' is 11, "
                                       "only 1 (float32) is supported");
}

// GroupNormalization at opset 18 (scale per group) equals opset 21 (per channel) with each
// group's scale repeated over its channels, and InstanceNormalization is one group per channel.
TEST(OnnxNormalization, GroupNormOpset18And21AndInstanceNorm) {
  auto model = [](int64_t opset, bool per_channel, const std::string& dir) {
    OnnxModel m(opset);
    m.input("x", {2, 6, 5, 3});
    std::vector<float> s{0.5f, 2, -1}, b{1, 0, -2};
    std::vector<float> sc, bc;
    for (int c = 0; c < 6; ++c) {
      sc.push_back(s[size_t(c / 2)]);
      bc.push_back(b[size_t(c / 2)]);
    }
    m.initializer("s", {per_channel ? 6 : 3}, per_channel ? sc : s);
    m.initializer("b", {per_channel ? 6 : 3}, per_channel ? bc : b);
    auto* gn = m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn");
    OnnxModel::attr_int(gn, "num_groups", 3);
    OnnxModel::attr_float(gn, "epsilon", 1e-4f);
    m.output("y");
    return onnx::import_model(m.write(scratch_dir(dir)));
  };
  ir::Graph g18 = model(18, false, "gn18"), g21 = model(21, true, "gn21");
  EXPECT_EQ(compute_kinds(g18), (std::vector<OpKind>{OpKind::GroupNorm}));  // scale expansion folds
  auto inputs = random_inputs(g18, 8);
  Comparison c = compare(ir::interpret(g18, inputs).at("y"), ir::interpret(g21, inputs).at("y"), 1e-6, 1e-7);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(outputs_match(run_on_gpu(g18, inputs), kTol));

  OnnxModel m(6);
  m.input("x", {2, 3, 4, 5});
  m.input("s", {3});
  m.input("b", {3});
  OnnxModel::attr_float(m.node("InstanceNormalization", {"x", "s", "b"}, {"y"}, "in"), "epsilon", 1e-2f);
  m.output("y");
  ir::Graph gi = onnx::import_model(m.write(scratch_dir("instnorm")));
  ASSERT_EQ(compute_kinds(gi), (std::vector<OpKind>{OpKind::GroupNorm}));
  EXPECT_EQ(gi.outputs()[0].value->producer->attr_int("num_groups"), 3);
  EXPECT_TRUE(outputs_match(run_on_gpu(gi, random_inputs(gi, 9)), kTol));
}

TEST(OnnxNormalization, GroupNormScaleOfTheWrongSizeNamesTheOpset) {
  OnnxModel m(18);
  m.input("x", {1, 4, 3});
  m.initializer("s", {4}, ramp(4, 1));
  m.initializer("b", {4}, ramp(4, 1));
  OnnxModel::attr_int(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", 2);
  m.output("y");
  std::string path = m.write(scratch_dir("gn_bad"));
  EXPECT_EQ(import_error(path), path + ": cannot import 1 item: node 'gn' (GroupNormalization): scale (input 1) has 4 elements, "
                                       "expected one per group (2) at opset 18");
}

TEST(OnnxNormalization, CumSumTakesItsAxisAsAConstant) {
  OnnxModel m(14);
  m.input("x", {3, 4}, ::onnx::TensorProto::INT32);
  m.initializer_i64("axis", {-1});
  auto* cs = m.node("CumSum", {"x", "axis"}, {"y"}, "cs");
  OnnxModel::attr_int(cs, "exclusive", 1);
  OnnxModel::attr_int(cs, "reverse", 1);
  m.output("y", ::onnx::TensorProto::INT32);
  ir::Graph g = onnx::import_model(m.write(scratch_dir("cumsum")));
  ASSERT_EQ(compute_kinds(g), (std::vector<OpKind>{OpKind::CumSum}));
  const ir::Op* op = g.outputs()[0].value->producer;
  EXPECT_EQ(op->attr_int("axis"), 1);
  EXPECT_TRUE(op->attr_bool("exclusive"));
  EXPECT_TRUE(op->attr_bool("reverse"));
  EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 3))));

  OnnxModel d(14);
  d.input("x", {3, 4});
  d.input("axis", {}, ::onnx::TensorProto::INT64);
  d.node("CumSum", {"x", "axis"}, {"y"}, "cs");
  d.output("y");
  std::string path = d.write(scratch_dir("cumsum_dynamic"));
  EXPECT_NE(import_error(path).find("node 'cs' (CumSum): axis (input 1)"), std::string::npos) << import_error(path);
}

TEST(OnnxNormalization, ReduceAxesAsAttributeAndAsInput) {
  const char* ops[] = {"ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp"};
  const OpKind kinds[] = {OpKind::ReduceProd, OpKind::ReduceL1, OpKind::ReduceL2, OpKind::ReduceLogSumExp};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(ops[i]);
    OnnxModel a(13);
    a.input("x", {3, 4, 5});
    auto* n = a.node(ops[i], {"x"}, {"y"}, "r");
    OnnxModel::attr_ints(n, "axes", {-1, 0});
    OnnxModel::attr_int(n, "keepdims", 0);
    a.output("y");
    ir::Graph ga = onnx::import_model(a.write(scratch_dir(std::string("reduce13_") + ops[i])));
    ASSERT_EQ(compute_kinds(ga), (std::vector<OpKind>{kinds[i]}));
    EXPECT_EQ(ga.outputs()[0].value->type.shape, (Shape{4}));

    OnnxModel b(18);
    b.input("x", {3, 4, 5});
    b.initializer_i64("axes", {0, 2});
    OnnxModel::attr_int(b.node(ops[i], {"x", "axes"}, {"y"}, "r"), "keepdims", 0);
    b.output("y");
    ir::Graph gb = onnx::import_model(b.write(scratch_dir(std::string("reduce18_") + ops[i])));
    auto inputs = random_inputs(ga, 4);
    Comparison c = compare(ir::interpret(ga, inputs).at("y"), ir::interpret(gb, inputs).at("y"), 0, 0);
    EXPECT_TRUE(c.ok) << c.message;
    EXPECT_TRUE(outputs_match(run_on_gpu(gb, inputs), kTol));

    OnnxModel e(18);  // no axes and noop_with_empty_axes: the input unchanged
    e.input("x", {3, 4});
    OnnxModel::attr_int(e.node(ops[i], {"x"}, {"y"}, "r"), "noop_with_empty_axes", 1);
    e.output("y");
    ir::Graph ge = onnx::import_model(e.write(scratch_dir(std::string("reduce_noop_") + ops[i])));
    EXPECT_TRUE(compute_kinds(ge).empty());
  }
}

}  // namespace
}  // namespace vkc::test
