// The normalizations and reductions group (issue 23): values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

HostTensor m23() { return make_f32({2, 3}, {1, -5, 3, 4, 2, -6}); }

TEST(InterpreterNormalization, ProdL1L2) {
  expect_values(run_op(OpKind::ReduceProd, {m23()}, {{"axes", Ints{1}}}), {-15, -48});
  expect_values(run_op(OpKind::ReduceL1, {m23()}, {{"axes", Ints{0}}, {"keepdims", false}}), {5, 7, 9});
  expect_values(run_op(OpKind::ReduceL2, {m23()}, {{"axes", Ints{-1}}}), {std::sqrt(35.0), std::sqrt(56.0)});
  HostTensor all = run_op(OpKind::ReduceProd, {m23()}, {{"keepdims", false}});
  EXPECT_EQ(all.shape(), Shape{});
  expect_values(all, {720});
  // Integers exact, wrapping to the element width.
  HostTensor i = ints(DType::i32, {3}, {65536, 65536, -3});
  EXPECT_EQ(ints_of(run_op(OpKind::ReduceProd, {i})), (Ints{0}));
  EXPECT_EQ(ints_of(run_op(OpKind::ReduceL1, {i})), (Ints{131075}));
  // Empty reductions give the identity.
  HostTensor empty(DType::f32, {2, 0});
  expect_values(run_op(OpKind::ReduceProd, {empty}, {{"axes", Ints{1}}}), {1, 1});
  expect_values(run_op(OpKind::ReduceL2, {empty}, {{"axes", Ints{1}}}), {0, 0});
  expect_values(run_op(OpKind::ReduceLogSumExp, {empty}, {{"axes", Ints{1}}}), {-INFINITY, -INFINITY});
}

TEST(InterpreterNormalization, LogSumExpIsStable) {
  HostTensor x = make_f32({3, 2}, {1000, 1000, 1, 2, -INFINITY, -INFINITY});
  expect_values(run_op(OpKind::ReduceLogSumExp, {x}, {{"axes", Ints{1}}}),
                {1000 + std::log(2.0), 2 + std::log(1 + std::exp(-1.0)), -INFINITY}, 1e-4);
  HostTensor y = make_f32({2, 2}, {NAN, 1, INFINITY, 1});
  expect_values(run_op(OpKind::ReduceLogSumExp, {y}, {{"axes", Ints{1}}}), {NAN, INFINITY});
}

TEST(InterpreterNormalization, LayerNormOverTrailingDims) {
  // Row {1, 2, 3, 6}: mean 3, var (4 + 1 + 0 + 9) / 4 = 3.5.
  HostTensor x = make_f32({2, 4}, {1, 2, 3, 6, 5, 5, 5, 5});
  double inv = 1.0 / std::sqrt(3.5 + 1e-5);
  HostTensor y = run_op(OpKind::LayerNorm, {x});
  expect_values(y, {-2 * inv, -1 * inv, 0, 3 * inv, 0, 0, 0, 0}, 1e-6);
  HostTensor scale = make_f32({4}, {1, 2, 3, 4}), bias = make_f32({4}, {0, 0, 1, -1});
  expect_values(run_op(OpKind::LayerNorm, {x, scale, bias}, {{"epsilon", 1e-12}}),
                {-2 / std::sqrt(3.5), -2 / std::sqrt(3.5), 1, 12 / std::sqrt(3.5) - 1, 0, 0, 1, -1}, 1e-6);
  // axis 0: one row of all 8 elements, mean 4, var (9+4+1+4+1+1+1+1)/8 = 2.75.
  double inv0 = 1.0 / std::sqrt(2.75);
  expect_values(run_op(OpKind::LayerNorm, {x}, {{"axis", int64_t(0)}, {"epsilon", 1e-12}}),
                {-3 * inv0, -2 * inv0, -1 * inv0, 2 * inv0, inv0, inv0, inv0, inv0}, 1e-6);
  // rms: no mean taken out. Row {1, 2, 3, 6}: mean of squares (1 + 4 + 9 + 36) / 4 = 12.5; row
  // {5, 5, 5, 5}: 25.
  const double r0 = 1.0 / std::sqrt(12.5), r1 = 1.0 / 5;
  expect_values(run_op(OpKind::LayerNorm, {x, scale, bias}, {{"epsilon", 1e-12}, {"rms", true}}),
                {1 * r0, 4 * r0, 9 * r0 + 1, 24 * r0 - 1, 5 * r1, 10 * r1, 15 * r1 + 1, 20 * r1 - 1}, 1e-6);
}

TEST(InterpreterNormalization, GroupNormPerGroupThenPerChannel) {
  // [1, 4, 2] in 2 groups: group 0 = {1, 3, 5, 7} (mean 4, var 5), group 1 = {2, 2, 2, 2}.
  HostTensor x = make_f32({1, 4, 2}, {1, 3, 5, 7, 2, 2, 2, 2});
  HostTensor scale = make_f32({4}, {1, 2, 1, 1}), bias = make_f32({4}, {0, 0, 10, 20});
  double s = 1.0 / std::sqrt(5.0);
  expect_values(run_op(OpKind::GroupNorm, {x, scale, bias}, {{"num_groups", int64_t(2)}, {"epsilon", 1e-12}}),
                {-3 * s, -1 * s, 2 * s, 6 * s, 10, 10, 20, 20}, 1e-6);
}

TEST(InterpreterNormalization, CumSumForms) {
  HostTensor x = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(run_op(OpKind::CumSum, {x}, {{"axis", int64_t(1)}}), {1, 3, 6, 4, 9, 15});
  expect_values(run_op(OpKind::CumSum, {x}, {{"axis", int64_t(0)}}), {1, 2, 3, 5, 7, 9});
  expect_values(run_op(OpKind::CumSum, {x}, {{"axis", int64_t(-1)}, {"exclusive", true}}), {0, 1, 3, 0, 4, 9});
  expect_values(run_op(OpKind::CumSum, {x}, {{"axis", int64_t(1)}, {"reverse", true}}), {6, 5, 3, 15, 11, 6});
  expect_values(run_op(OpKind::CumSum, {x}, {{"axis", int64_t(1)}, {"reverse", true}, {"exclusive", true}}),
                {5, 3, 0, 11, 6, 0});
  int64_t big = (int64_t(1) << 60) + 1;
  EXPECT_EQ(ints_of(run_op(OpKind::CumSum, {ints(DType::i64, {2}, {big, 2})}, {{"axis", int64_t(0)}})),
            (Ints{big, big + 2}));
}

}  // namespace
}  // namespace vkc::test
