// Prologue and epilogue fusion into pooling, reduction and softmax kernels, on the device against
// the reference interpreter: each fused pattern is one dispatch and computes the same numbers.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

HostTensor scalar(DType t, double v) {
  HostTensor s(t, {});
  s.set_f64(0, v);
  return s;
}

// Integer outputs after an f32 quotient: a value may differ by one where the f32 (kernel) and f64
// (reference) averages round a quotient across a tie, and almost never does.
::testing::AssertionResult ints_within_one(const GpuRun& run, const std::string& name) {
  const HostTensor& got = run.outputs.at(name);
  const HostTensor& want = run.reference.at(name);
  if (got.shape() != want.shape()) return ::testing::AssertionFailure() << name << ": shape differs";
  int64_t differ = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    int64_t d = std::abs(got.get_i64(i) - want.get_i64(i));
    if (d > 1) return ::testing::AssertionFailure() << name << "[" << i << "] = " << got.get_i64(i) << ", want " << want.get_i64(i);
    differ += d != 0;
  }
  if (differ * 100 > got.numel()) return ::testing::AssertionFailure() << name << ": " << differ << " values off by one";
  return ::testing::AssertionSuccess();
}

const std::vector<int64_t> k2{2, 2}, k3{3, 3};

TEST(PoolFusion, MaxPoolReluQuantizeIsOneDispatch) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {2, 3, 9, 9}});
  ir::Value* y = g.add_op(OpKind::MaxPool, {x}, {{"kernel", k3}, {"strides", k2}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                          "mp")->result();
  y = g.add_op(OpKind::Relu, {y}, {}, "relu")->result();
  g.add_output(g.add_op(OpKind::Quantize, {y, g.add_constant(scalar(DType::f32, 0.01), "s"),
                                           g.add_constant(scalar(DType::u8, 7), "zp")},
                        {{"to", std::string("u8")}}, "q")->result(),
               "y");
  for (const char* target : {"", "vulkan-min"}) {  // vulkan-min: packed 8-bit stores
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(g, random_inputs(g, 11), o);
    EXPECT_TRUE(outputs_match(run, o)) << target;  // max and relu are exact: the quotient is too
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << target << "\n" << all_notes(run.module);
    EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 3u);
  }
}

TEST(PoolFusion, DequantizeAvgPoolPerChannel) {
  ir::Graph g;
  ir::Value* xq = g.add_input("xq", {DType::u8, {1, 4, 7, 7}});
  HostTensor s(DType::f32, {4}), zp(DType::u8, {4});
  for (int64_t c = 0; c < 4; ++c) {
    s.set_f64(c, 0.05 * double(c + 1));
    zp.set_f64(c, double(c));
  }
  ir::Value* x = g.add_op(OpKind::Dequantize, {xq, g.add_constant(s, "s"), g.add_constant(zp, "zp")}, {}, "dq")->result();
  g.add_output(g.add_op(OpKind::AvgPool, {x},
                        {{"kernel", k3}, {"strides", k2}, {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                         {"count_include_pad", true}, {"ceil_mode", true}},
                        "ap")->result(),
               "y");
  for (const char* target : {"", "vulkan-min"}) {  // vulkan-min: packed 8-bit reads
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(g, random_inputs(g, 12), o);
    EXPECT_TRUE(outputs_match(run, o)) << target;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << target << "\n" << all_notes(run.module);
    EXPECT_NE(run.module.manifest.dispatches[0].notes.find("fused prologue: dequantize 'dq'"), std::string::npos);
  }
}

TEST(PoolFusion, PadThenMaxPoolKeepsThePadValue) {
  // The pad value (0.75) is data: windows over the pad see it, unlike the pool's own -inf padding.
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {1, 2, 6, 6}});
  ir::Value* p = g.add_op(OpKind::Pad, {x}, {{"pads", std::vector<int64_t>{0, 0, 2, 1, 0, 0, 1, 2}}, {"value", 0.75}},
                          "pad")->result();
  ir::Value* m = g.add_op(OpKind::MaxPool, {p}, {{"kernel", k3}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "mp")->result();
  ir::Value* p2 = g.add_op(OpKind::Pad, {x}, {{"pads", std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1}}, {"value", -3.0}},
                           "pad2")->result();
  ir::Value* a = g.add_op(OpKind::AvgPool, {p2}, {{"kernel", k3}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "ap")->result();
  g.add_output(m, "max");
  g.add_output(a, "avg");
  GpuRun run = run_on_gpu(g, random_inputs(g, 13));
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 2u) << all_notes(run.module);
  for (const DispatchDesc& d : run.module.manifest.dispatches) EXPECT_EQ(d.ops.size(), 2u) << d.name;
}

// 7x7 runs the "direct" pooling kernel, 10x10 the "workgroup" one (codegen/kernels/pool.cpp).
TEST(PoolFusion, GlobalAvgPoolAddWithElementwisePrologue) {
  for (int64_t extent : {7, 10}) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {2, 16, extent, extent}});
    ir::Value* z = g.add_input("z", {DType::f32, {2, 16, extent, extent}});
    ir::Value* b = g.add_input("b", {DType::f32, {1, 16, 1, 1}});
    ir::Value* h = g.add_op(OpKind::Mul, {x, z}, {}, "gate")->result();
    h = g.add_op(OpKind::HardSwish, {h}, {}, "hswish")->result();
    ir::Value* p = g.add_op(OpKind::AvgPool, {h}, {{"global", true}}, "gap")->result();
    g.add_output(g.add_op(OpKind::Add, {p, b}, {}, "add")->result(), "y");
    for (const char* target : {"", "vulkan-min"}) {  // x, z, b, y: exactly vulkan-min's 4 bindings
      GpuRunOptions o;
      o.target = target;
      GpuRun run = run_on_gpu(g, random_inputs(g, 14), o);
      EXPECT_TRUE(outputs_match(run, o)) << target;
      ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << target << "\n" << all_notes(run.module);
      EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 4u);
      EXPECT_EQ(run.module.manifest.dispatches[0].strategy, extent == 7 ? "direct" : "workgroup");
    }
  }
}

TEST(PoolFusion, MultiUseProducerIsStoredAndStillRight) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {1, 3, 8, 8}});
  ir::Value* r = g.add_op(OpKind::Sigmoid, {x}, {}, "sig")->result();
  ir::Value* m = g.add_op(OpKind::MaxPool, {r}, {{"kernel", k2}, {"strides", k2}}, "mp")->result();
  ir::Value* a = g.add_op(OpKind::AvgPool, {r}, {{"kernel", k2}, {"strides", k2}}, "ap")->result();
  g.add_output(g.add_op(OpKind::Sub, {m, a}, {}, "sub")->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 15));
  EXPECT_TRUE(outputs_match(run));
  // sigmoid once, each pool, and the sub in the epilogue of one of them.
  EXPECT_EQ(run.module.manifest.dispatches.size(), 3u) << all_notes(run.module);
}

TEST(PoolFusion, ResidualAndPerChannelQuantizeSplitOnVulkanMin) {
  ir::Graph g;
  ir::Value* xq = g.add_input("xq", {DType::u8, {1, 4, 6, 6}});
  ir::Value* res = g.add_input("res", {DType::f32, {1, 4, 3, 3}});
  HostTensor sx(DType::f32, {4}), zx(DType::u8, {4}), sy(DType::f32, {4});
  for (int64_t c = 0; c < 4; ++c) {
    sx.set_f64(c, 0.1 + 0.05 * double(c));
    zx.set_f64(c, double(2 * c));
    sy.set_f64(c, 0.02 * double(c + 1));
  }
  ir::Value* x = g.add_op(OpKind::Dequantize, {xq, g.add_constant(sx, "sx"), g.add_constant(zx, "zx")}, {}, "dq")->result();
  ir::Value* p = g.add_op(OpKind::AvgPool, {x}, {{"kernel", k2}, {"strides", k2}}, "ap")->result();
  ir::Value* a = g.add_op(OpKind::Add, {p, res}, {}, "residual")->result();
  g.add_output(g.add_op(OpKind::Quantize, {a, g.add_constant(sy, "sy"), g.add_constant(zx, "zy")},
                        {{"to", std::string("u8")}}, "q")->result(),
               "y");
  std::map<std::string, HostTensor> in = random_inputs(g, 16);
  ModuleImage min = compile_for(g, "vulkan-min");
  EXPECT_TRUE(within_limits(min));
  EXPECT_EQ(min.manifest.dispatches.size(), 3u) << all_notes(min);
  EXPECT_NE(all_notes(min).find("quantize 'q' not fused: the fused dispatch would bind 7 storage buffers, "
                                "target 'vulkan-min' allows 4"),
            std::string::npos)
      << all_notes(min);
  for (const char* target : {"", "vulkan-min"}) {
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(g, in, o);
    EXPECT_TRUE(ints_within_one(run, "y")) << target;
    EXPECT_EQ(run.module.manifest.dispatches.size(), *target ? 3u : 1u) << target << "\n" << all_notes(run.module);
  }
}

TEST(ReductionFusion, ReduceMeanMulAddBothStrategies) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {6, 300}});
  ir::Value* w = g.add_input("w", {DType::f32, {6, 1}});
  ir::Value* y = g.add_op(OpKind::ReduceMean, {x}, {{"axes", std::vector<int64_t>{1}}}, "mean")->result();
  y = g.add_op(OpKind::Mul, {y, w}, {}, "mul")->result();
  g.add_output(g.add_op(OpKind::Add, {y, g.add_constant(scalar(DType::f32, 0.25), "b")}, {}, "add")->result(), "y");
  for (const char* s : {"loop", "workgroup"}) {
    GpuRunOptions o;
    o.forced_strategy["reduce_mean"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, 17), o);
    EXPECT_TRUE(outputs_match(run, o)) << s;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << s << "\n" << all_notes(run.module);
    EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 3u);
  }
}

TEST(ReductionFusion, ReduceMaxOverAnElementwisePrologue) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {4, 5, 70}});
  ir::Value* y = g.add_input("y", {DType::f32, {5, 1}});  // broadcast inside the prologue
  ir::Value* d = g.add_op(OpKind::Sub, {x, y}, {}, "diff")->result();
  d = g.add_op(OpKind::Exp, {d}, {}, "exp")->result();
  ir::Value* mx = g.add_op(OpKind::ReduceMax, {d}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", false}}, "max")->result();
  g.add_output(g.add_op(OpKind::Sqrt, {mx}, {}, "sqrt")->result(), "out");
  for (const char* s : {"loop", "workgroup"}) {
    GpuRunOptions o;
    o.forced_strategy["reduce_max"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, 18), o);
    EXPECT_TRUE(outputs_match(run, o)) << s;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << s << "\n" << all_notes(run.module);
    EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 4u);
  }
}

TEST(ReductionFusion, SoftmaxWithScalePrologueAndQuantizeEpilogue) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {3, 5, 300}});
  ir::Value* x2 = g.add_op(OpKind::Mul, {x, g.add_constant(scalar(DType::f32, 3.0), "temp")}, {}, "scale")->result();
  ir::Value* s = g.add_op(OpKind::Softmax, {x2}, {}, "sm")->result();
  ir::Value* ls = g.add_op(OpKind::LogSoftmax, {g.add_op(OpKind::Tanh, {x}, {}, "tanh")->result()}, {{"axis", int64_t(1)}},
                           "lsm")->result();
  g.add_output(g.add_op(OpKind::Mul, {s, g.add_constant(scalar(DType::f32, 10.0), "ten")}, {}, "mul")->result(), "p");
  g.add_output(g.add_op(OpKind::Neg, {ls}, {}, "neg")->result(), "nll");
  for (const char* strat : {"loop", "workgroup"}) {
    GpuRunOptions o;
    o.forced_strategy["softmax"] = strat;
    o.forced_strategy["log_softmax"] = strat;
    GpuRun run = run_on_gpu(g, random_inputs(g, 19), o);
    EXPECT_TRUE(outputs_match(run, o)) << strat;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 2u) << strat << "\n" << all_notes(run.module);
    for (const DispatchDesc& d : run.module.manifest.dispatches) EXPECT_EQ(d.ops.size(), 3u) << d.name;
  }
}

TEST(ReductionFusion, ArgMaxOverDequantizeAndIntegerSum) {
  ir::Graph g;
  ir::Value* xq = g.add_input("xq", {DType::i8, {6, 33}});
  ir::Value* x = g.add_op(OpKind::Dequantize, {xq, g.add_constant(scalar(DType::f32, 0.125), "s"),
                                               g.add_constant(scalar(DType::i8, -2), "zp")},
                          {}, "dq")->result();
  g.add_output(g.add_op(OpKind::ArgMax, {x}, {{"axis", int64_t(1)}}, "am")->result(), "idx");
  ir::Value* xi = g.add_input("xi", {DType::i32, {6, 33}});
  ir::Value* sum = g.add_op(OpKind::ReduceSum, {xi}, {{"axes", std::vector<int64_t>{1}}}, "isum")->result();
  g.add_output(g.add_op(OpKind::Neg, {sum}, {}, "ineg")->result(), "sum");
  for (const char* target : {"", "vulkan-min"}) {  // vulkan-min: packed i8 reads into argmax
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(g, random_inputs(g, 20), o);
    EXPECT_TRUE(outputs_match(run, o)) << target;
    // dequantize + argmax, the i32 sum, its negation.
    EXPECT_EQ(run.module.manifest.dispatches.size(), 3u) << target << "\n" << all_notes(run.module);
  }
}

}  // namespace
}  // namespace vkc::test
