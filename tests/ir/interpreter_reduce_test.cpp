// reduce_*, argmax/argmin, softmax and log_softmax.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

HostTensor m23() { return make_f32({2, 3}, {1, 5, 3, 4, 2, 6}); }

TEST(InterpreterReduce, SumMeanMaxMinOverAxes) {
  HostTensor s = run_op(OpKind::ReduceSum, {m23()}, {{"axes", Ints{1}}});
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  expect_values(s, {9, 12});
  HostTensor m = run_op(OpKind::ReduceMean, {m23()}, {{"axes", Ints{0}}, {"keepdims", false}});
  EXPECT_EQ(m.shape(), (Shape{3}));
  expect_values(m, {2.5, 3.5, 4.5});
  expect_values(run_op(OpKind::ReduceMax, {m23()}, {{"axes", Ints{-1}}}), {5, 6});
  expect_values(run_op(OpKind::ReduceMin, {m23()}, {{"axes", Ints{0}}}), {1, 2, 3});
  // default: all axes, keepdims -> [1, 1]
  HostTensor all = run_op(OpKind::ReduceSum, {m23()});
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  expect_values(all, {21});
  HostTensor all_flat = run_op(OpKind::ReduceMax, {m23()}, {{"keepdims", false}});
  EXPECT_EQ(all_flat.shape(), (Shape{}));
  expect_values(all_flat, {6});
}

TEST(InterpreterReduce, MaxMinPropagateNaNAndIntegersExact) {
  HostTensor x = make_f32({2, 2}, {1, NAN, 3, 4});
  expect_values(run_op(OpKind::ReduceMax, {x}, {{"axes", Ints{1}}}), {NAN, 4});
  expect_values(run_op(OpKind::ReduceMin, {x}, {{"axes", Ints{1}}}), {NAN, 3});
  int64_t v = (int64_t(1) << 60) + 1;
  EXPECT_EQ(ints_of(run_op(OpKind::ReduceSum, {make_i64({2}, {v, 2})})), (Ints{v + 2}));
  // integer mean truncates toward zero: (-7 + 0) / 2 = -3
  EXPECT_EQ(ints_of(run_op(OpKind::ReduceMean, {ints(DType::i32, {2}, {-7, 0})})), (Ints{-3}));
}

TEST(InterpreterArgReduce, FirstOrLastOfTies) {
  HostTensor x = make_f32({2, 4}, {1, 7, 7, 0, 3, 0, 3, 0});
  HostTensor am = run_op(OpKind::ArgMax, {x}, {{"axis", int64_t(1)}});
  EXPECT_EQ(am.dtype(), DType::i64);
  EXPECT_EQ(am.shape(), (Shape{2, 1}));
  EXPECT_EQ(ints_of(am), (Ints{1, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMax, {x}, {{"axis", int64_t(1)}, {"select_last_index", true}})),
            (Ints{2, 2}));
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMin, {x}, {{"axis", int64_t(1)}, {"keepdims", false}})), (Ints{3, 1}));
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMin, {x}, {{"axis", int64_t(1)}, {"select_last_index", true}})),
            (Ints{3, 3}));
  // axis 0: column-wise argmax of [[1,7,7,0],[3,0,3,0]] -> [1, 0, 0, 0] (ties: first)
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMax, {x}, {{"axis", int64_t(0)}})), (Ints{1, 0, 0, 0}));
}

TEST(InterpreterArgReduce, NaNIsTheExtreme) {
  HostTensor x = make_f32({5}, {1, NAN, 9, NAN, -9});
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMax, {x})), (Ints{1}));
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMin, {x})), (Ints{1}));
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMax, {x}, {{"select_last_index", true}})), (Ints{3}));
  EXPECT_EQ(ints_of(run_op(OpKind::ArgMin, {make_i64({3}, {5, -2, -2})})), (Ints{1}));
}

TEST(InterpreterSoftmax, ValuesAndStability) {
  // exp(1,2,3) / sum = [0.0900306, 0.2447285, 0.6652410]; logs: [-2.4076059, -1.4076059, -0.4076059]
  HostTensor x = make_f32({3}, {1, 2, 3});
  expect_values(run_op(OpKind::Softmax, {x}), {0.0900306, 0.2447285, 0.6652410}, 1e-6);
  expect_values(run_op(OpKind::LogSoftmax, {x}), {-2.4076059, -1.4076059, -0.4076059}, 1e-6);
  // Without subtracting the max, exp(1000) overflows to inf and the result would be NaN.
  expect_values(run_op(OpKind::Softmax, {make_f32({2}, {1000, 1000})}), {0.5, 0.5});
  expect_values(run_op(OpKind::LogSoftmax, {make_f32({2}, {1000, 1000})}), {-0.6931472, -0.6931472}, 1e-6);
}

TEST(InterpreterSoftmax, AlongAxis0AndNaNRow) {
  // axis 0 of [[0, 0], [ln 3, NaN]]: column 0 -> [1/4, 3/4]; column 1 holds a NaN -> all NaN
  HostTensor x = make_f32({2, 2}, {0, 0, float(std::log(3.0)), NAN});
  expect_values(run_op(OpKind::Softmax, {x}, {{"axis", int64_t(0)}}), {0.25, NAN, 0.75, NAN}, 1e-6);
}

}  // namespace
}  // namespace vkc::test
