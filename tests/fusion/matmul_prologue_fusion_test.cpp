// Prologue fusion into matmul / batch_matmul / gemm operands (staged through the tiled kernel's
// workgroup-memory tiles), its recomputation budget, and what `vk-compile --report` says about it.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

// Activations x [M, K] times i8 weights [K, N] dequantized per output column, + bias, relu.
ir::Graph dequantize_matmul_bias_relu(int64_t m, int64_t k, int64_t n) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {m, k}});
  ir::Value* wq = g.add_input("wq", {DType::i8, {k, n}});  // an input: a constant would be folded
  ir::Value* bias = g.add_input("bias", {DType::f32, {n}});
  HostTensor s(DType::f32, {n});
  for (int64_t j = 0; j < n; ++j) s.set_f64(j, 0.01 * double(1 + j % 5));
  HostTensor zp(DType::i8, {n});
  for (int64_t j = 0; j < n; ++j) zp.set_f64(j, double(j % 3) - 1);
  ir::Value* w = g.add_op(OpKind::Dequantize, {wq, g.add_constant(s, "scale"), g.add_constant(zp, "zp")},
                          {{"axis", int64_t(1)}}, "dq_w")->result();
  ir::Value* y = g.add_op(OpKind::MatMul, {x, w}, {}, "mm")->result();
  y = g.add_op(OpKind::Add, {y, bias}, {}, "bias_add")->result();
  g.add_output(g.add_op(OpKind::Relu, {y}, {}, "relu")->result(), "y");
  return g;
}

TEST(MatmulPrologueFusion, DequantizeMatmulBiasReluIsOneDispatch) {
  ir::Graph g = dequantize_matmul_bias_relu(40, 48, 72);
  for (const char* s : {"tiled", "naive"}) {
    GpuRunOptions o;
    o.forced_strategy["matmul"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, 31), o);
    EXPECT_TRUE(outputs_match(run, o)) << s;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << s << "\n" << all_notes(run.module);
    const DispatchDesc& d = run.module.manifest.dispatches[0];
    EXPECT_EQ(d.ops.size(), 4u);
    // The tiles hold the dequantized f32 values: the same workgroup memory as an f32 operand.
    if (std::string(s) == "tiled") {
      EXPECT_EQ(d.workgroup_memory_bytes, (d.tiles.at("tile_m") + d.tiles.at("tile_n")) * d.tiles.at("tile_k") * 4);
    }
  }
}

TEST(MatmulPrologueFusion, ReportListsTheFusedOpsAndTheBudgetRefusal) {
  ir::Graph g = dequantize_matmul_bias_relu(32, 32, 32);
  ModuleImage lp = compile_for(g, "lavapipe");
  std::string report = codegen::format_report(lp.manifest);
  EXPECT_NE(report.find("dequantize 'dq_w' + matmul 'mm' + add 'bias_add' + relu 'relu'"), std::string::npos) << report;
  EXPECT_NE(report.find("notes: fused prologue: dequantize 'dq_w'; epilogue: add 'bias_add', relu 'relu'"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("1 dispatches"), std::string::npos) << report;

  // vulkan-min binds 4 storage buffers: x, wq, the per-column scale and zero point, bias and y are
  // 6. Leaving the dequantize out fuses the most ops within 4 (x, w, bias, y).
  ModuleImage min = compile_for(g, "vulkan-min");
  EXPECT_TRUE(within_limits(min));
  report = codegen::format_report(min.manifest);
  EXPECT_NE(report.find("matmul 'mm' + add 'bias_add' + relu 'relu'"), std::string::npos) << report;
  EXPECT_NE(report.find("dequantize 'dq_w' not fused: the fused dispatch would bind 6 storage buffers, target "
                        "'vulkan-min' allows 4"),
            std::string::npos)
      << report;
  EXPECT_EQ(min.manifest.dispatches.size(), 2u) << report;
  GpuRunOptions o;
  o.target = "vulkan-min";
  EXPECT_TRUE(outputs_match(run_on_gpu(g, random_inputs(g, 32), o), o));
}

TEST(MatmulPrologueFusion, ElementwiseIntoBothOperandsOfBroadcastMatmul) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", {DType::f32, {3, 20, 24}});
  ir::Value* a2 = g.add_input("a2", {DType::f32, {3, 20, 24}});
  ir::Value* b = g.add_input("b", {DType::f32, {1, 36, 24}});  // broadcast over the batch, transposed
  ir::Value* pa = g.add_op(OpKind::Sub, {a, a2}, {}, "diff")->result();
  pa = g.add_op(OpKind::Gelu, {pa}, {{"approximate", std::string("tanh")}}, "gelu")->result();
  ir::Value* pb = g.add_op(OpKind::Transpose, {g.add_op(OpKind::Sigmoid, {b}, {}, "sig")->result()},
                           {{"perm", std::vector<int64_t>{0, 2, 1}}}, "tr")->result();
  g.add_output(g.add_op(OpKind::MatMul, {pa, pb}, {}, "mm")->result(), "y");
  for (const char* s : {"tiled", "naive"}) {
    GpuRunOptions o;
    o.forced_strategy["matmul"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, 33), o);
    EXPECT_TRUE(outputs_match(run, o)) << s;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << s << "\n" << all_notes(run.module);
    EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 5u);
  }
}

TEST(MatmulPrologueFusion, GemmWithTransposedDequantizedAAndBiasC) {
  ir::Graph g;
  ir::Value* aq = g.add_input("aq", {DType::u8, {24, 40}});  // [K, M], transpose_a
  ir::Value* b = g.add_input("b", {DType::f32, {24, 36}});
  ir::Value* c = g.add_input("c", {DType::f32, {36}});
  HostTensor s(DType::f32, {}), zp(DType::u8, {});
  s.set_f64(0, 0.2);
  zp.set_f64(0, 4);
  ir::Value* a = g.add_op(OpKind::Dequantize, {aq, g.add_constant(s, "s"), g.add_constant(zp, "zp")}, {}, "dq")->result();
  ir::Value* y = g.add_op(OpKind::Gemm, {a, g.add_op(OpKind::Neg, {b}, {}, "neg")->result(), c},
                          {{"transpose_a", true}, {"alpha", 0.5}, {"beta", 2.0}}, "gemm")->result();
  g.add_output(g.add_op(OpKind::Tanh, {y}, {}, "tanh")->result(), "y");
  for (const char* target : {"", "vulkan-min"}) {  // aq, b, c, y: vulkan-min's 4 bindings
    for (const char* strat : {"tiled", "naive"}) {
      GpuRunOptions o;
      o.target = target;
      o.forced_strategy["gemm"] = strat;
      GpuRun run = run_on_gpu(g, random_inputs(g, 34), o);
      EXPECT_TRUE(outputs_match(run, o)) << target << " " << strat;
      ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << target << " " << strat << "\n" << all_notes(run.module);
      EXPECT_EQ(run.module.manifest.dispatches[0].ops.size(), 4u);
    }
  }
}

TEST(MatmulPrologueFusion, MatrixVectorRefusesToRecomputeMathPerColumn) {
  // M = 2: the naive kernel reads each element of A once per output column (300 times). exp(a) is
  // stored by its own dispatch; relu(b), read twice per element, is fused.
  ir::Graph g;
  ir::Value* a = g.add_input("a", {DType::f32, {2, 64}});
  ir::Value* b = g.add_input("b", {DType::f32, {64, 300}});
  ir::Value* ea = g.add_op(OpKind::Exp, {a}, {}, "exp")->result();
  ir::Value* rb = g.add_op(OpKind::Relu, {b}, {}, "relu")->result();
  g.add_output(g.add_op(OpKind::MatMul, {ea, rb}, {}, "mv")->result(), "y");
  GpuRun run = run_on_gpu(g, random_inputs(g, 35));
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 2u) << all_notes(run.module);
  std::string report = codegen::format_report(run.module.manifest);
  EXPECT_NE(report.find("relu 'relu' + matmul 'mv'"), std::string::npos) << report;
  EXPECT_NE(report.find("exp 'exp' not fused: matmul 'mv' reads each element of its operand 300 times"),
            std::string::npos)
      << report;
}

// The matmul of `g` is one dispatch with both strategies and matches the reference.
void expect_one_matching_dispatch(const ir::Graph& g, uint32_t seed) {
  for (const char* s : {"tiled", "naive"}) {
    GpuRunOptions o;
    o.forced_strategy["matmul"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, seed), o);
    EXPECT_TRUE(outputs_match(run, o)) << s;
    EXPECT_EQ(run.module.manifest.dispatches.size(), 1u) << s << "\n" << all_notes(run.module);
  }
}

// Slices and broadcasts read through the operand loads (Prologue::Slice, Prologue::Broadcast):
// a reversed K axis whose start counts from the end and whose end clamps, every other row of B's
// leading axis; B repeated over the batch, A repeated along a middle dim of 1 with a dim added.
TEST(MatmulPrologueFusion, SlicesAndBroadcastsOfEitherOperandAreIndexMaps) {
  {
    ir::Graph g;
    ir::Value* a = g.add_input("a", {DType::f32, {3, 20, 30}});
    ir::Value* b = g.add_input("b", {DType::f32, {48, 24}});
    ir::Value* sa = g.add_op(OpKind::Slice, {a}, {{"starts", Ints{-8}}, {"ends", Ints{-100}}, {"axes", Ints{2}},
                                                 {"steps", Ints{-1}}}, "reverse_k")->result();  // [3, 20, 23]
    ir::Value* sb = g.add_op(OpKind::Slice, {b}, {{"starts", Ints{1, 0}}, {"ends", Ints{47, 20}}, {"steps", Ints{2, 1}}},
                             "every_other")->result();  // [23, 20]
    g.add_output(g.add_op(OpKind::MatMul, {sa, sb}, {}, "mm")->result(), "y");
    expect_one_matching_dispatch(g, 37);
  }
  {
    ir::Graph g;
    ir::Value* a = g.add_input("a", {DType::f32, {3, 1, 20}});
    ir::Value* b = g.add_input("b", {DType::f32, {1, 20, 24}});
    ir::Value* ba = g.add_op(OpKind::Broadcast, {a}, {{"shape", Ints{2, 3, 17, 20}}}, "repeat_rows")->result();
    ir::Value* bb = g.add_op(OpKind::Broadcast, {b}, {{"shape", Ints{2, 3, 20, 24}}}, "repeat_b")->result();
    g.add_output(g.add_op(OpKind::MatMul, {ba, bb}, {}, "mm")->result(), "y");
    expect_one_matching_dispatch(g, 38);
  }
}

TEST(MatmulPrologueFusion, MultiUseOperandIsStoredOnce) {
  // relu(x) feeds the matmul and is a graph output: it is materialized, not recomputed.
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {32, 32}});
  ir::Value* w = g.add_input("w", {DType::f32, {32, 16}});
  ir::Value* r = g.add_op(OpKind::Relu, {x}, {}, "relu")->result();
  g.add_output(g.add_op(OpKind::MatMul, {r, w}, {}, "mm")->result(), "y");
  g.add_output(r, "r");
  GpuRun run = run_on_gpu(g, random_inputs(g, 36));
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.module.manifest.dispatches.size(), 2u) << all_notes(run.module);
}

}  // namespace
}  // namespace vkc::test
