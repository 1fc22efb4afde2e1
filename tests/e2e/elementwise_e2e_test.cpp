// The spine, end to end: IR built with the C++ API -> GLSL -> SPIR-V -> Vulkan (lavapipe), checked
// against the reference interpreter with NaN-poisoned outputs and the validation layer on.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/gpu_harness.h"
#include "module/target_profiles.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using ir::TensorType;

TEST(ElementwiseE2E, AddMulReluWithBroadcasting) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", {DType::f32, {2, 3, 4}});
  ir::Value* b = g.add_input("b", {DType::f32, {3, 1}});
  ir::Value* c = g.add_input("c", {DType::f32, {4}});
  ir::Value* s = g.add_op(OpKind::Add, {a, b})->result();
  ir::Value* m = g.add_op(OpKind::Mul, {s, c})->result();
  g.add_output(g.add_op(OpKind::Relu, {m})->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 1));
  EXPECT_TRUE(outputs_match(run));
  // add -> mul -> relu fuse into one kernel.
  EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
}

// erf (shaders/elementwise_math.glsl: a rational fit on [-4, 4], clamped beyond) and GELU through it
// across the range: signed zeros, tiny values (relative accuracy where erf ~ 2x/sqrt(pi)), the
// clamp's edge, saturation, infinities and NaN, and a dense sweep of [-6, 6]; within 1e-6 relative.
TEST(ElementwiseE2E, ErfAndGeluAcrossTheirRange) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, -0.0, 1e-30, -1e-20, 1e-10, 1e-5, -3e-4, 0.49, 0.5, 0.51, 1.0, 2.0,
                            3.9, 4.0, 4.1, 10.0, -10.0, 1e30, inf, -inf, std::nan("")};
  for (int i = 0; i <= 2400; ++i) xs.push_back(-6.0 + 12.0 * i / 2400.0);
  for (OpKind k : {OpKind::Erf, OpKind::Gelu}) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {int64_t(xs.size())}});
    g.add_output(g.add_op(k, {x})->result(), "y");
    HostTensor in(DType::f32, {int64_t(xs.size())});
    for (size_t i = 0; i < xs.size(); ++i) in.set_f64(int64_t(i), xs[i]);
    EXPECT_TRUE(outputs_match(run_on_gpu(g, {{"x", in}}), GpuRunOptions{{}, 1e-6, 1e-30, "", {}})) << ir::op_name(k);
  }
}

TEST(ElementwiseE2E, EveryUnaryAndBinaryOpMatchesReference) {
  const OpKind unary[] = {OpKind::Neg,  OpKind::Abs,  OpKind::Relu, OpKind::LeakyRelu, OpKind::Clip,
                          OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp, OpKind::Erf, OpKind::Gelu,
                          OpKind::HardSwish};
  for (OpKind k : unary) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {5, 33}});
    ir::AttrMap attrs;
    if (k == OpKind::Clip) attrs = {{"min", -0.25}, {"max", 0.5}};
    g.add_output(g.add_op(k, {x}, attrs)->result(), "y");
    std::map<std::string, HostTensor> in = random_inputs(g, 7);
    for (int64_t i = 0; i < in["x"].numel(); ++i) in["x"].set_f64(i, in["x"].get_f64(i) * 4.0);
    EXPECT_TRUE(outputs_match(run_on_gpu(g, in), GpuRunOptions{{}, 2e-6, 1e-6, "", {}})) << ir::op_name(k);
  }
  // log and sqrt need positive inputs.
  for (OpKind k : {OpKind::Log, OpKind::Sqrt}) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {64}});
    g.add_output(g.add_op(k, {x})->result(), "y");
    std::map<std::string, HostTensor> in = random_inputs(g, 3);
    for (int64_t i = 0; i < 64; ++i) in["x"].set_f64(i, std::abs(in["x"].get_f64(i)) + 0.01);
    EXPECT_TRUE(outputs_match(run_on_gpu(g, in))) << ir::op_name(k);
  }
  const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Max, OpKind::Min};
  for (OpKind k : binary) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {4, 1, 6}});
    ir::Value* y = g.add_input("y", {DType::f32, {5, 1}});
    g.add_output(g.add_op(k, {x, y})->result(), "z");
    EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 11)))) << ir::op_name(k);
  }
}

TEST(ElementwiseE2E, IntegerOpsAndCasts) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::i32, {3, 7}});
  ir::Value* y = g.add_input("y", {DType::i32, {7}});
  ir::Value* s = g.add_op(OpKind::Sub, {x, y})->result();
  ir::Value* q = g.add_op(OpKind::Div, {s, y})->result();  // truncating, /0 -> 0
  ir::Value* f = g.add_op(OpKind::Cast, {q}, {{"to", std::string("f32")}})->result();
  g.add_output(q, "q");
  g.add_output(g.add_op(OpKind::Mul, {f, f})->result(), "f");
  EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 5))));
}

TEST(ElementwiseE2E, OutputsThatAliasInputsConstantsOrEachOtherAreCopied) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {2, 6}});
  ir::Value* view = g.add_op(OpKind::Reshape, {x}, {{"shape", std::vector<int64_t>{3, 4}}})->result();
  ir::Value* k = g.add_constant(make_f32({2}, {1.5f, -2.0f}), "k");
  ir::Value* r = g.add_op(OpKind::Relu, {x})->result();
  g.add_output(view, "input_view");  // a view of an input: must be copied
  g.add_output(k, "constant");       // a constant: must be copied
  g.add_output(r, "relu");
  g.add_output(r, "relu_again");     // the same value twice: the second is a copy
  GpuRun run = run_on_gpu(g, random_inputs(g, 9));
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.module.manifest.dispatches.size(), 4u);
}

TEST(ElementwiseE2E, ReshapeIsAViewNotAKernel) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {4, 6}});
  ir::Value* e = g.add_op(OpKind::Exp, {x})->result();
  ir::Value* v = g.add_op(OpKind::CollapseShape, {e}, {{"reassociation", ir::IntsList{{0, 1}}}})->result();
  ir::Value* w = g.add_op(OpKind::Reshape, {v}, {{"shape", std::vector<int64_t>{2, 12}}})->result();
  g.add_output(w, "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 4));
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u);  // exp writes straight into the output
  EXPECT_EQ(run.module.manifest.arena_bytes, 0u);
}

TEST(ElementwiseE2E, IntermediatesShareArenaByLiveRange) {
  // x -> exp (a) -> [used by two ops, so not fused] -> b = a + a, c = a * a -> d = b - c
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {1024}});
  ir::Value* a = g.add_op(OpKind::Exp, {x})->result();
  ir::Value* b = g.add_op(OpKind::Add, {a, a})->result();
  ir::Value* c = g.add_op(OpKind::Mul, {a, a})->result();
  ir::Value* d = g.add_op(OpKind::Sub, {b, c})->result();
  g.add_output(g.add_op(OpKind::Tanh, {d})->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 8));
  EXPECT_TRUE(outputs_match(run));
  const Manifest& m = run.module.manifest;
  uint64_t sum = 0;
  for (const TensorDesc& t : m.tensors)
    if (t.role == TensorRole::Intermediate && t.view_of.empty()) sum += t.size_bytes();
  EXPECT_LE(m.arena_bytes, sum);
}

TEST(ElementwiseE2E, LargeGridFoldsIntoY) {
  // 70000 workgroups of 1 invocation would exceed vulkan-min's 65535 in x; the grid folds into y.
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {65535 * 256 + 17}});
  g.add_output(g.add_op(OpKind::Neg, {x})->result(), "y");
  GpuRunOptions o;
  o.target = "vulkan-min";
  GpuRun run = run_on_gpu(g, random_inputs(g, 2), o);
  EXPECT_TRUE(outputs_match(run));
  EXPECT_GT(run.module.manifest.dispatches[0].workgroup_count[1], 1u);
}

TEST(ElementwiseE2E, EveryProfileCompilesAndFits) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {8, 8}});
  ir::Value* y = g.add_input("y", {DType::f32, {8}});
  g.add_output(g.add_op(OpKind::Sigmoid, {g.add_op(OpKind::Add, {x, y})->result()})->result(), "z");
  for (const std::string& name : known_targets()) {
    codegen::CompileOptions o;
    o.target = find_target(name).limits;
    ModuleImage m = codegen::compile_graph(g, o);
    for (const DispatchDesc& d : m.manifest.dispatches)
      EXPECT_LE(d.workgroup_memory_bytes, o.target.max_compute_shared_memory_size) << name;
  }
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

TEST(CompilerDeterminism, SameGraphGivesTheSameModule) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {16, 16}});
  ir::Value* a = g.add_op(ir::OpKind::Exp, {x})->result();
  ir::Value* b = g.add_op(ir::OpKind::Add, {a, a})->result();
  ir::Value* c = g.add_op(ir::OpKind::Mul, {a, b})->result();
  ir::Value* v = g.add_op(ir::OpKind::Reshape, {c}, {{"shape", std::vector<int64_t>{256}}})->result();
  g.add_output(g.add_op(ir::OpKind::Neg, {v})->result(), "y");
  g.add_output(b, "b");
  codegen::CompileOptions o;
  o.target = find_target("nvidia").limits;
  ModuleImage first = codegen::compile_graph(g, o);
  for (int i = 0; i < 3; ++i) {
    ir::Graph copy = g.clone();
    ModuleImage again = codegen::compile_graph(copy, o);
    EXPECT_EQ(manifest_to_json(again.manifest), manifest_to_json(first.manifest));
    EXPECT_EQ(again.spirv, first.spirv);
    EXPECT_EQ(again.constants, first.constants);
  }
}

}  // namespace
}  // namespace vkc::test
