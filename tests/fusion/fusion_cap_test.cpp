// kMaxFusedOps (codegen/fusion_budget.h): long elementwise chains and epilogues split into kernels
// of at most that many ops, and the notes say so (no GPU).
#include <gtest/gtest.h>

#include "codegen/dispatch_group.h"
#include "codegen/fusion_budget.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

TEST(FusionCap, LongElementwiseChainSplitsFromTheEnd) {
  const int64_t cap = codegen::kMaxFusedOps;
  ir::Graph g;
  ir::Value* v = g.add_input("x", {DType::f32, {16}});
  for (int64_t i = 0; i < 2 * cap + 10; ++i) v = g.add_op(i % 2 ? OpKind::Relu : OpKind::Neg, {v})->result();
  g.add_output(v, "y");
  auto groups = codegen::form_dispatch_groups(g, find_target("lavapipe").limits);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].ops.size(), 10u);
  EXPECT_EQ(groups[1].ops.size(), size_t(cap));
  EXPECT_EQ(groups[2].ops.size(), size_t(cap));
  EXPECT_EQ(groups[0].notes, "fused 10 elementwise ops");
  EXPECT_EQ(groups[2].notes, cat("fused ", cap, " elementwise ops; the ops before it start another kernel: at most ",
                                 cap, " fuse into one"));
  // Each group reads the previous group's result.
  EXPECT_EQ(groups[1].inputs.at(0), groups[0].outputs.at(0));
  EXPECT_EQ(groups[2].inputs.at(0), groups[1].outputs.at(0));
}

TEST(FusionCap, ReductionEpilogueStopsAtTheCap) {
  const int64_t cap = codegen::kMaxFusedOps;
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {4, 8}});
  ir::Value* v = g.add_op(OpKind::ReduceSum, {x}, {{"axes", std::vector<int64_t>{1}}})->result();
  for (int64_t i = 0; i < cap + 3; ++i) v = g.add_op(OpKind::Relu, {v})->result();
  g.add_output(v, "y");
  auto groups = codegen::form_dispatch_groups(g, find_target("lavapipe").limits);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].epilogue.size(), size_t(cap));
  EXPECT_NE(groups[0].notes.find(cat("not fused: the epilogue already holds ", cap, " ops")), std::string::npos)
      << groups[0].notes;
  EXPECT_EQ(groups[1].ops.size(), 3u);
}

}  // namespace
}  // namespace vkc::test
