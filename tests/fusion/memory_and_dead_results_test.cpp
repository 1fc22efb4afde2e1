// Dead results get no buffer, and intermediates share one arena by live range.
#include <gtest/gtest.h>

#include "fusion/fusion_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

TEST(DeadResults, UnusedTopKIndicesGetNoBuffer) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {4, 50}});
  ir::Op* topk = g.add_op(OpKind::TopK, {x}, {{"k", int64_t(5)}}, "top5");
  g.add_output(g.add_op(OpKind::Relu, {topk->result(0)})->result(), "values");
  // An unused op disappears entirely.
  g.add_op(OpKind::Exp, {x}, {}, "dead_exp");
  GpuRun run = run_on_gpu(g, random_inputs(g, 6));
  EXPECT_TRUE(outputs_match(run));
  for (const TensorDesc& t : run.module.manifest.tensors)
    EXPECT_NE(t.dtype, DType::i64) << t.name << ": the unused indices must not get a buffer";
  for (const DispatchDesc& d : run.module.manifest.dispatches)
    for (const std::string& op : d.ops) EXPECT_EQ(op.find("dead_exp"), std::string::npos);
}

TEST(Memory, ArenaPeakIsFarBelowTheSumOfAChain) {
  // Ten softmaxes in a row: each intermediate dies after the next dispatch, so a few buffers are
  // reused along the chain instead of nine.
  ir::Graph g;
  ir::Value* v = g.add_input("x", {DType::f32, {64, 1024}});
  for (int i = 0; i < 10; ++i) v = g.add_op(OpKind::Softmax, {v})->result();
  g.add_output(v, "y");
  ModuleImage m = compile_for(g, "lavapipe");
  uint64_t sum = 0, one = 64 * 1024 * 4;
  for (const TensorDesc& t : m.manifest.tensors)
    if (t.role == TensorRole::Intermediate && t.view_of.empty()) sum += t.size_bytes();
  EXPECT_EQ(sum, 9 * one);
  EXPECT_LE(m.manifest.arena_bytes, 3 * one);
  EXPECT_LE(m.manifest.arena_bytes * 3, sum);
  std::string report = codegen::format_report(m.manifest);
  EXPECT_NE(report.find("arena peak "), std::string::npos) << report;
  EXPECT_NE(report.find("(intermediates total 2.2 MiB)"), std::string::npos) << report;
}

}  // namespace
}  // namespace vkc::test
