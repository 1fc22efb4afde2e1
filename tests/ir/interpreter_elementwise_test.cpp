// Unary math, cast, broadcast binary ops, select, quantize and dequantize.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

HostTensor f32(const std::vector<float>& v) { return make_f32({int64_t(v.size())}, v); }

TEST(InterpreterUnary, SimpleFunctions) {
  HostTensor x = f32({-2, -0.5, 0, 1, 4});
  expect_values(run_op(OpKind::Neg, {x}), {2, 0.5, 0, -1, -4});
  expect_values(run_op(OpKind::Abs, {x}), {2, 0.5, 0, 1, 4});
  expect_values(run_op(OpKind::Relu, {x}), {0, 0, 0, 1, 4});
  expect_values(run_op(OpKind::LeakyRelu, {x}), {-0.02, -0.005, 0, 1, 4});  // default alpha 0.01
  expect_values(run_op(OpKind::LeakyRelu, {x}, {{"alpha", 0.5}}), {-1, -0.25, 0, 1, 4});
  // hardswish x * clamp(x + 3, 0, 6) / 6: -2 -> -2/6, -0.5 -> -0.5*2.5/6, 1 -> 4/6, 4 -> 4
  expect_values(run_op(OpKind::HardSwish, {x}), {-1.0 / 3.0, -1.25 / 6.0, 0, 4.0 / 6.0, 4}, 1e-6);
  expect_values(run_op(OpKind::HardSwish, {f32({-4})}), {0});
}

TEST(InterpreterUnary, Transcendental) {
  const double e = 2.718281828459045;
  expect_values(run_op(OpKind::Exp, {f32({0, 1})}), {1, e}, 1e-6);
  expect_values(run_op(OpKind::Log, {f32({1, float(e), 0, -1})}), {0, 1, -INFINITY, NAN}, 1e-6);
  expect_values(run_op(OpKind::Sqrt, {f32({4, 2.25, -1})}), {2, 1.5, NAN});
  expect_values(run_op(OpKind::Sigmoid, {f32({0, 100, -100})}), {0.5, 1, 0}, 1e-7);
  expect_values(run_op(OpKind::Tanh, {f32({0, 20})}), {0, 1}, 1e-7);
  // erf(1) and the standard normal CDF at 1 (= exact gelu(1)) are table values.
  expect_values(run_op(OpKind::Erf, {f32({0, 1, -1})}), {0, 0.8427007929, -0.8427007929}, 1e-6);
  expect_values(run_op(OpKind::Gelu, {f32({0, 1, -1})}), {0, 0.8413447461, -1 + 0.8413447461}, 1e-6);
  // tanh form at 1: 0.5 * (1 + tanh(0.7978845608 * 1.044715)) = 0.5 * (1 + tanh(0.8335566)) = 0.841192
  expect_values(run_op(OpKind::Gelu, {f32({1})}, {{"approximate", std::string("tanh")}}), {0.841192}, 1e-5);
}

TEST(InterpreterUnary, ClipOptionalBoundsAndNaN) {
  HostTensor x = f32({-5, 0, 5, NAN});
  expect_values(run_op(OpKind::Clip, {x}, {{"min", -1.0}, {"max", 2.0}}), {-1, 0, 2, NAN});
  expect_values(run_op(OpKind::Clip, {x}, {{"min", -1.0}}), {-1, 0, 5, NAN});
  expect_values(run_op(OpKind::Clip, {x}, {{"max", 2.0}}), {-5, 0, 2, NAN});
  expect_values(run_op(OpKind::Clip, {x}), {-5, 0, 5, NAN});
  expect_values(run_op(OpKind::Relu, {f32({NAN})}), {NAN});
}

TEST(InterpreterUnary, IntegerNegAbsAreExact) {
  int64_t v = (int64_t(1) << 62) + 1;
  EXPECT_EQ(ints_of(run_op(OpKind::Neg, {make_i64({2}, {v, -3})})), (Ints{-v, 3}));
  EXPECT_EQ(ints_of(run_op(OpKind::Abs, {make_i64({2}, {-v, 3})})), (Ints{v, 3}));
  EXPECT_EQ(ints_of(run_op(OpKind::Relu, {ints(DType::i32, {2}, {-7, 7})})), (Ints{0, 7}));
}

TEST(InterpreterCast, FloatToIntTruncatesSaturatesNaNZero) {
  HostTensor x = f32({2.7f, -2.7f, NAN, 1e10f, -1e10f, -0.5f});
  HostTensor y = run_op(OpKind::Cast, {x}, {{"to", std::string("i32")}});
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(ints_of(y), (Ints{2, -2, 0, 2147483647, -2147483648LL, 0}));
  HostTensor u = run_op(OpKind::Cast, {f32({-5, 300, 254.9f})}, {{"to", std::string("u8")}});
  EXPECT_EQ(ints_of(u), (Ints{0, 255, 254}));
}

TEST(InterpreterCast, IntToIntWrapsAndToBool) {
  // i32 -> i8 keeps the low 8 bits: 300 = 0x12C -> 0x2C = 44; -129 -> 127
  HostTensor y = run_op(OpKind::Cast, {ints(DType::i32, {2}, {300, -129})}, {{"to", std::string("i8")}});
  EXPECT_EQ(ints_of(y), (Ints{44, 127}));
  // to bool: x != 0, and NaN != 0 is true
  HostTensor b = run_op(OpKind::Cast, {f32({0, -0.0f, NAN, 0.5f})}, {{"to", std::string("bool")}});
  EXPECT_EQ(b.dtype(), DType::boolean);
  EXPECT_EQ(ints_of(b), (Ints{0, 0, 1, 1}));
  // int -> float exact for small values; bool -> float is 0/1
  int64_t big = 16777217;  // 2^24 + 1 rounds to 2^24 in f32
  expect_values(run_op(OpKind::Cast, {make_i64({2}, {-3, big})}, {{"to", std::string("f32")}}), {-3, 16777216});
  expect_values(run_op(OpKind::Cast, {b}, {{"to", std::string("f32")}}), {0, 0, 1, 1});
}

TEST(InterpreterBinary, BroadcastArithmetic) {
  // [2,1] + [3] -> [2,3]
  HostTensor a = make_f32({2, 1}, {10, 20});
  HostTensor b = make_f32({3}, {1, 2, 3});
  HostTensor s = run_op(OpKind::Add, {a, b});
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  expect_values(s, {11, 12, 13, 21, 22, 23});
  expect_values(run_op(OpKind::Sub, {a, b}), {9, 8, 7, 19, 18, 17});
  expect_values(run_op(OpKind::Mul, {a, b}), {10, 20, 30, 20, 40, 60});
  expect_values(run_op(OpKind::Div, {a, b}), {10, 5, 10.0 / 3.0, 20, 10, 20.0 / 3.0}, 1e-5);
  expect_values(run_op(OpKind::Pow, {f32({2, 4, -2}), f32({3, 0.5, 2})}), {8, 2, 4});
  expect_values(run_op(OpKind::Div, {f32({1, -1, 0}), f32({0, 0, 0})}), {INFINITY, -INFINITY, NAN});
}

TEST(InterpreterBinary, MaxMinPropagateNaN) {
  HostTensor a = f32({1, NAN, 3});
  HostTensor b = f32({2, 0, NAN});
  expect_values(run_op(OpKind::Max, {a, b}), {2, NAN, NAN});
  expect_values(run_op(OpKind::Min, {a, b}), {1, NAN, NAN});
}

TEST(InterpreterBinary, IntegerDivisionPowAndWrap) {
  HostTensor a = ints(DType::i32, {5}, {7, -7, 7, -7, 5});
  HostTensor b = ints(DType::i32, {5}, {2, 2, -2, -2, 0});
  EXPECT_EQ(ints_of(run_op(OpKind::Div, {a, b})), (Ints{3, -3, -3, 3, 0}));
  HostTensor base = make_i64({4}, {2, 2, -1, 3});
  HostTensor exp = make_i64({4}, {10, -1, -3, 0});
  EXPECT_EQ(ints_of(run_op(OpKind::Pow, {base, exp})), (Ints{1024, 0, -1, 1}));
  // i8: 100 + 100 = 200 wraps to -56
  EXPECT_EQ(ints_of(run_op(OpKind::Add, {ints(DType::i8, {1}, {100}), ints(DType::i8, {1}, {100})})),
            (Ints{-56}));
  // i64 beyond 2^53 stays exact
  int64_t v = (int64_t(1) << 60) + 1;
  EXPECT_EQ(ints_of(run_op(OpKind::Add, {make_i64({1}, {v}), make_i64({1}, {1})})), (Ints{v + 1}));
}

TEST(InterpreterSelect, BroadcastCondition) {
  // condition [2,1] picks whole rows from [2,2] tensors
  HostTensor c = ints(DType::boolean, {2, 1}, {1, 0});
  HostTensor t = make_f32({2, 2}, {1, 2, 3, 4});
  HostTensor f = make_f32({2}, {-1, -2});
  HostTensor y = run_op(OpKind::Select, {c, t, f});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_values(y, {1, 2, -1, -2});
}

TEST(InterpreterQuantize, RoundHalfToEven) {
  HostTensor x = f32({2.5f, 3.5f, -2.5f, 0.5f, 1.5f, -0.5f, 2.4f, -2.6f});
  HostTensor q = run_op(OpKind::Quantize, {x, make_f32({}, {1})});
  EXPECT_EQ(q.dtype(), DType::i8);
  EXPECT_EQ(ints_of(q), (Ints{2, 4, -2, 0, 2, 0, 2, -3}));
  // scale 0.5: 1.25 / 0.5 = 2.5 -> 2;  1.75 / 0.5 = 3.5 -> 4
  EXPECT_EQ(ints_of(run_op(OpKind::Quantize, {f32({1.25f, 1.75f}), make_f32({1}, {0.5})})), (Ints{2, 4}));
}

TEST(InterpreterQuantize, SaturationAndZeroPoint) {
  EXPECT_EQ(ints_of(run_op(OpKind::Quantize, {f32({200, -200, 127.4f}), make_f32({}, {1})})),
            (Ints{127, -128, 127}));
  // u8 with zero point 10: 300 + 10 -> 255; -20 + 10 = -10 -> 0; 2.5 -> 2 + 10 = 12
  HostTensor q = run_op(OpKind::Quantize, {f32({300, -20, 2.5f}), make_f32({}, {1}), ints(DType::u8, {}, {10})});
  EXPECT_EQ(q.dtype(), DType::u8);
  EXPECT_EQ(ints_of(q), (Ints{255, 0, 12}));
  HostTensor qu = run_op(OpKind::Quantize, {f32({-1, 256}), make_f32({}, {1})}, {{"to", std::string("u8")}});
  EXPECT_EQ(ints_of(qu), (Ints{0, 255}));
}

TEST(InterpreterQuantize, PerChannel) {
  // [2, 3] along axis 1: scales [1, 2, 4], zero points [0, 1, -1]
  HostTensor x = make_f32({2, 3}, {4, 4, 4, -8, 5, 10});
  HostTensor q = run_op(OpKind::Quantize, {x, make_f32({3}, {1, 2, 4}), ints(DType::i8, {3}, {0, 1, -1})});
  // 4/1=4; 4/2+1=3; 4/4-1=0;  -8;  5/2=2.5->2, +1=3;  10/4=2.5->2, -1=1
  EXPECT_EQ(ints_of(q), (Ints{4, 3, 0, -8, 3, 1}));
}

TEST(InterpreterDequantize, PerTensorAndPerChannel) {
  HostTensor q = ints(DType::i8, {2, 2}, {-128, 0, 5, 127});
  HostTensor y = run_op(OpKind::Dequantize, {q, make_f32({}, {0.5}), ints(DType::i8, {}, {1})});
  EXPECT_EQ(y.dtype(), DType::f32);
  expect_values(y, {-64.5, -0.5, 2, 63});
  // axis 0: row 0 scale 2 zp 0, row 1 scale 0.25 zp -3
  HostTensor yc = run_op(OpKind::Dequantize, {q, make_f32({2}, {2, 0.25}), ints(DType::i8, {2}, {0, -3})},
                         {{"axis", int64_t(0)}});
  expect_values(yc, {-256, 0, 2, 32.5});
  // u8 without zero point
  expect_values(run_op(OpKind::Dequantize, {ints(DType::u8, {2}, {0, 255}), make_f32({1}, {2})}), {0, 510});
}

}  // namespace
}  // namespace vkc::test
