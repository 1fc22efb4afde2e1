// Reference semantics of the comparison and logic ops, the float tests, mod/fmod, sign, the
// activations, rounding and prelu (issue 23): hand-checked values, NaN and infinities, exact i64.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

HostTensor f32(const std::vector<float>& v) { return make_f32({int64_t(v.size())}, v); }
HostTensor bools(Shape s, const std::vector<int64_t>& v) { return ints(DType::boolean, std::move(s), v); }

TEST(InterpreterCompare, FloatsWithNaNAndInfinities) {
  const float nan = NAN, inf = INFINITY;
  HostTensor a = f32({1, 2, 3, nan, nan, inf, -inf, -0.0f});
  HostTensor b = f32({2, 2, 2, 1, nan, inf, 0, 0});
  auto check = [&](OpKind k, Ints expected) {
    HostTensor r = run_op(k, {a, b});
    EXPECT_EQ(r.dtype(), DType::boolean);
    EXPECT_EQ(ints_of(r), expected) << ir::op_name(k);
  };
  check(OpKind::Equal, {0, 1, 0, 0, 0, 1, 0, 1});
  check(OpKind::Less, {1, 0, 0, 0, 0, 0, 1, 0});
  check(OpKind::Greater, {0, 0, 1, 0, 0, 0, 0, 0});
  check(OpKind::LessOrEqual, {1, 1, 0, 0, 0, 1, 1, 1});
  check(OpKind::GreaterOrEqual, {0, 1, 1, 0, 0, 1, 0, 1});
}

TEST(InterpreterCompare, ExactInt64AndBroadcast) {
  const int64_t big = (int64_t(1) << 53) + 1;  // differs from 2^53 only in exact arithmetic
  HostTensor a = make_i64({2, 1}, {big, big - 1});
  HostTensor b = make_i64({2}, {big - 1, big});
  EXPECT_EQ(ints_of(run_op(OpKind::Equal, {a, b})), (Ints{0, 1, 1, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::Greater, {a, b})), (Ints{1, 0, 0, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::Equal, {bools({3}, {1, 0, 1}), bools({1}, {1})})), (Ints{1, 0, 1}));
}

TEST(InterpreterLogic, TruthTables) {
  HostTensor a = bools({4}, {0, 0, 1, 1});
  HostTensor b = bools({4}, {0, 1, 0, 1});
  EXPECT_EQ(ints_of(run_op(OpKind::And, {a, b})), (Ints{0, 0, 0, 1}));
  EXPECT_EQ(ints_of(run_op(OpKind::Or, {a, b})), (Ints{0, 1, 1, 1}));
  EXPECT_EQ(ints_of(run_op(OpKind::Xor, {a, b})), (Ints{0, 1, 1, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::Not, {a})), (Ints{1, 1, 0, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::And, {bools({2, 1}, {1, 0}), bools({2}, {1, 1})})), (Ints{1, 1, 0, 0}));
}

TEST(InterpreterFloatTest, IsNaNAndIsInf) {
  HostTensor x = f32({0, NAN, INFINITY, -INFINITY, 3e38f});
  EXPECT_EQ(ints_of(run_op(OpKind::IsNaN, {x})), (Ints{0, 1, 0, 0, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::IsInf, {x})), (Ints{0, 0, 1, 1, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::IsInf, {x}, {{"detect_negative", false}})), (Ints{0, 0, 1, 0, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::IsInf, {x}, {{"detect_positive", false}})), (Ints{0, 0, 0, 1, 0}));
}

TEST(InterpreterMod, SignOfDivisorOrDividend) {
  HostTensor a = make_i64({6}, {7, -7, 7, -7, 5, std::numeric_limits<int64_t>::min()});
  HostTensor b = make_i64({6}, {3, 3, -3, -3, 0, -1});
  EXPECT_EQ(ints_of(run_op(OpKind::Mod, {a, b})), (Ints{1, 2, -2, -1, 0, 0}));
  EXPECT_EQ(ints_of(run_op(OpKind::FMod, {a, b})), (Ints{1, -1, 1, -1, 0, 0}));
  HostTensor i8a = ints(DType::i8, {2}, {-128, 127});
  HostTensor i8b = ints(DType::i8, {2}, {7, -7});
  EXPECT_EQ(ints_of(run_op(OpKind::Mod, {i8a, i8b})), (Ints{5, -6}));  // -128 = -19*7 + 5
  HostTensor fa = f32({5.5f, -5.5f, 5.5f, -5.5f, 1, 1, -1, NAN});
  HostTensor fb = f32({2, 2, -2, -2, 0, INFINITY, INFINITY, 1});
  expect_values(run_op(OpKind::Mod, {fa, fb}), {1.5, 0.5, -0.5, -1.5, NAN, 1, INFINITY, NAN});
  expect_values(run_op(OpKind::FMod, {fa, fb}), {1.5, -1.5, 1.5, -1.5, NAN, 1, -1, NAN});
}

TEST(InterpreterUnaryMath, SignRoundingAndActivations) {
  expect_values(run_op(OpKind::Sign, {f32({-3, 0, 2, NAN})}), {-1, 0, 1, NAN});
  EXPECT_TRUE(std::signbit(run_op(OpKind::Sign, {f32({-0.0f})}).get_f64(0)));
  EXPECT_EQ(ints_of(run_op(OpKind::Sign, {make_i64({3}, {-9, 0, 4})})), (Ints{-1, 0, 1}));
  EXPECT_EQ(ints_of(run_op(OpKind::Sign, {ints(DType::u8, {3}, {0, 200, 1})})), (Ints{0, 1, 1}));
  expect_values(run_op(OpKind::Round, {f32({0.5, 1.5, 2.5, -0.5, -1.5, 2.4f, -2.6f})}), {0, 2, 2, -0, -2, 2, -3});
  expect_values(run_op(OpKind::Floor, {f32({-1.5, 1.5, NAN})}), {-2, 1, NAN});
  expect_values(run_op(OpKind::Ceil, {f32({-1.5, 1.5, INFINITY})}), {-1, 2, INFINITY});
  // elu(-1) = e^-1 - 1; selu with ONNX's default constants.
  expect_values(run_op(OpKind::Elu, {f32({-1, 2})}), {std::exp(-1.0) - 1, 2}, 1e-7);
  expect_values(run_op(OpKind::Elu, {f32({-1})}, {{"alpha", 2.0}}), {2 * (std::exp(-1.0) - 1)}, 1e-7);
  expect_values(run_op(OpKind::Selu, {f32({-1, 0, 2})}),
                {1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1), 0, 2 * 1.0507009873554805}, 1e-6);
  // softplus(0) = log 2; large |x| neither overflows nor loses the tail.
  expect_values(run_op(OpKind::Softplus, {f32({0, 100, -100})}), {std::log(2.0), 100, 3.720075976e-44}, 1e-7);
  EXPECT_GT(run_op(OpKind::Softplus, {f32({-30})}).get_f64(0), 0.0);
  // mish(1) = tanh(log(1 + e)) = 0.8650983882673103
  expect_values(run_op(OpKind::Mish, {f32({1, 0, 100})}), {0.8650983882673103, 0, 100}, 1e-6);
  expect_values(run_op(OpKind::Sin, {f32({0, float(M_PI / 2)})}), {0, 1}, 1e-7);
  expect_values(run_op(OpKind::Cos, {f32({0, float(M_PI)})}), {1, -1}, 1e-7);
}

TEST(InterpreterPRelu, PerChannelSlope) {
  HostTensor x = make_f32({1, 2, 1, 2}, {-1, 2, -3, NAN});
  HostTensor s = make_f32({2, 1, 1}, {0.5, 0.25});
  expect_values(run_op(OpKind::PRelu, {x, s}), {-0.5, 2, -0.75, NAN});
  EXPECT_EQ(ints_of(run_op(OpKind::PRelu, {make_i64({2}, {-4, 4}), make_i64({1}, {3})})), (Ints{-12, 4}));
}

}  // namespace
}  // namespace vkc::test
