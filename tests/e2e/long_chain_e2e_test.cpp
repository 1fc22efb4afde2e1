// Long op chains on lavapipe (issue 24 item 11): a fused chain longer than one kernel may hold
// (codegen/fusion_budget.h, kMaxFusedOps) and an unfusable chain of one dispatch per op both
// compile and match the reference interpreter. Compile time itself is measured by
// bench/compile_chain_bench.cpp, not here.
#include <gtest/gtest.h>

#include "codegen/fusion_budget.h"
#include "common/gpu_harness.h"

namespace vkc::test {
namespace {

using ir::OpKind;

// n ops, each consuming the previous result; binary ops also read the second input. The op order
// is shuffled (fixed seed) so that the kernels differ and none is shared through the SPIR-V cache.
ir::Graph fused_chain(int n) {
  const std::pair<OpKind, bool> ops[] = {{OpKind::Add, true},  {OpKind::Relu, false}, {OpKind::Mul, true},
                                         {OpKind::Sigmoid, false}, {OpKind::Sub, true},  {OpKind::Tanh, false},
                                         {OpKind::Max, true},  {OpKind::Abs, false}};
  ir::Graph g;
  ir::Value* v = g.add_input("x", {DType::f32, {3, 70}});
  ir::Value* y = g.add_input("y", {DType::f32, {3, 70}});
  std::mt19937 rng(11);
  for (int i = 0; i < n; ++i) {
    auto [kind, binary] = ops[rng() % 8];
    v = g.add_op(kind, binary ? std::vector<ir::Value*>{v, y} : std::vector<ir::Value*>{v})->result();
  }
  g.add_output(v, "out");
  return g;
}

TEST(LongChainE2E, TwoThousandFusedOpsSplitIntoCappedKernelsAndMatch) {
  const int n = 2000;
  GpuRun run = run_on_gpu(fused_chain(n), random_inputs(fused_chain(n), 3));
  EXPECT_TRUE(outputs_match(run, GpuRunOptions{{}, 1e-4, 1e-5, "", {}}));
  const auto& dispatches = run.module.manifest.dispatches;
  ASSERT_EQ(dispatches.size(), size_t((n + codegen::kMaxFusedOps - 1) / codegen::kMaxFusedOps));
  EXPECT_EQ(dispatches.back().ops.size(), size_t(codegen::kMaxFusedOps));
  EXPECT_EQ(dispatches.front().ops.size(), size_t(n % codegen::kMaxFusedOps));
}

TEST(LongChainE2E, ThousandUnfusedDispatchesMatch) {
  // v[i] = v[i-1] - v[i-2]: every intermediate has two users, so each op is a dispatch of its own
  // (the last two fuse); the sequence has period 6, so values stay finite.
  const int n = 1000;
  ir::Graph g;
  ir::Value* before = g.add_input("x", {DType::f32, {257}});
  ir::Value* prev = g.add_input("y", {DType::f32, {257}});
  for (int i = 0; i < n; ++i) {
    ir::Value* next = g.add_op(OpKind::Sub, {prev, before})->result();
    before = prev;
    prev = next;
  }
  g.add_output(prev, "out");
  GpuRun run = run_on_gpu(g, random_inputs(g, 5));
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.module.manifest.dispatches.size(), size_t(n - 1));
}

}  // namespace
}  // namespace vkc::test
