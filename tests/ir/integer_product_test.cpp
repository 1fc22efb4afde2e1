// conv_integer / matmul_integer: verifier, reference interpreter (exact sums, checked against the
// float conv / matmul of the centered operands, which is exact for these sizes) and the QDQ
// rewrite (ir/passes/qdq_integer.cpp), whose integer form must reproduce ONNX Runtime's
// requantization computed independently here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "interpreter_test_helpers.h"
#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

HostTensor random_int8(DType t, const Shape& shape, std::mt19937& rng) {
  HostTensor x(t, shape);
  std::uniform_int_distribution<int> d(t == DType::i8 ? -128 : 0, t == DType::i8 ? 127 : 255);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_i64(i, d(rng));
  return x;
}

HostTensor zero_points(DType t, int64_t n, std::mt19937& rng) {
  return random_int8(t, n == 1 ? Shape{} : Shape{n}, rng);
}

// f32 tensor of (q - zp[channel]), channel along dim `axis` (or per tensor).
HostTensor centered(const HostTensor& q, const HostTensor& zp, int64_t axis) {
  HostTensor out(DType::f32, q.shape());
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < q.shape().size(); ++d) inner *= q.shape()[d];
  for (int64_t i = 0; i < q.numel(); ++i) {
    int64_t c = zp.numel() == 1 ? 0 : (i / inner) % q.shape()[size_t(axis)];
    out.set_f64(i, double(q.get_i64(i) - zp.get_i64(c)));
  }
  return out;
}

struct ConvCase {
  Shape x, w;
  ir::AttrMap attrs;
  DType xt, wt;
  bool per_channel, bias;
};

class ConvIntegerReference : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvIntegerReference, SumsEqualTheFloatConvOfCenteredOperands) {
  const ConvCase& c = GetParam();
  std::mt19937 rng(7);
  HostTensor x = random_int8(c.xt, c.x, rng), w = random_int8(c.wt, c.w, rng);
  HostTensor xz = zero_points(c.xt, 1, rng), wz = zero_points(c.wt, c.per_channel ? c.w[0] : 1, rng);
  std::vector<HostTensor> in{x, w, xz, wz};
  std::vector<HostTensor> fin{centered(x, xz, 1), centered(w, wz, 0)};
  if (c.bias) {
    HostTensor b(DType::i32, Shape{c.w[0]});
    for (int64_t i = 0; i < b.numel(); ++i) b.set_i64(i, int64_t(rng() % 200001) - 100000);
    in.push_back(b);
    HostTensor fb(DType::f32, b.shape());
    for (int64_t i = 0; i < b.numel(); ++i) fb.set_f64(i, double(b.get_i64(i)));
    fin.push_back(fb);
  }
  HostTensor y = run_op(K::ConvInteger, in, c.attrs);
  HostTensor ref = run_op(K::Conv, fin, c.attrs);  // |sums| < 2^24: exact in f32
  ASSERT_EQ(y.dtype(), DType::i32);
  ASSERT_EQ(y.shape(), ref.shape());
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(double(y.get_i64(i)), ref.get_f64(i)) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvIntegerReference,
    ::testing::Values(
        ConvCase{{1, 3, 6, 5}, {4, 3, 3, 3}, {}, DType::u8, DType::i8, false, false},
        ConvCase{{2, 4, 7, 7}, {6, 4, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, DType::i8, DType::i8, true, true},
        ConvCase{{1, 6, 9, 8}, {6, 2, 3, 2}, {{"groups", int64_t(3)}, {"strides", std::vector<int64_t>{2, 1}}, {"pads", std::vector<int64_t>{1, 0, 1, 1}}},
                 DType::u8, DType::u8, true, false},
        ConvCase{{1, 2, 11}, {3, 2, 3}, {{"dilations", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{2, 1}}}, DType::u8, DType::i8, false, true}));

TEST(MatMulIntegerReference, SumsEqualTheFloatMatmulOfCenteredOperands) {
  std::mt19937 rng(11);
  for (auto [a_shape, b_shape] : {std::pair{Shape{5, 7}, Shape{7, 3}}, std::pair{Shape{2, 1, 4, 9}, Shape{3, 9, 6}}}) {
    for (bool per_column : {false, true}) {
      HostTensor a = random_int8(DType::u8, a_shape, rng), b = random_int8(DType::i8, b_shape, rng);
      HostTensor az = zero_points(DType::u8, 1, rng), bz = zero_points(DType::i8, per_column ? b_shape.back() : 1, rng);
      HostTensor y = run_op(K::MatMulInteger, {a, b, az, bz});
      HostTensor ref = run_op(K::MatMul, {centered(a, az, 0), centered(b, bz, int64_t(b_shape.size()) - 1)});
      ASSERT_EQ(y.shape(), ref.shape());
      for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(double(y.get_i64(i)), ref.get_f64(i)) << "element " << i;
    }
  }
}

TEST(ConvIntegerHand, OneWindow) {
  // 1x1x2x2 input, one 1x1x2x2 filter: (x - 3) . (w - (-1)) = (1-3)(0+1) + (4-3)(2+1) + (3-3)(..) + (7-3)(-2+1)
  HostTensor x(DType::u8, {1, 1, 2, 2}), w(DType::i8, {1, 1, 2, 2}), xz(DType::u8, {}), wz(DType::i8, {});
  int64_t xv[] = {1, 4, 3, 7}, wv[] = {0, 2, 5, -2};
  for (int i = 0; i < 4; ++i) x.set_i64(i, xv[i]), w.set_i64(i, wv[i]);
  xz.set_i64(0, 3);
  wz.set_i64(0, -1);
  HostTensor y = run_op(K::ConvInteger, {x, w, xz, wz});
  EXPECT_EQ(ints_of(y), std::vector<int64_t>{-2 + 3 + 0 - 4});
}

TEST(IntegerProductVerifier, RejectsMismatchedOperands) {
  auto error = [](ir::OpKind k, std::vector<ir::TensorType> types) {
    ir::Graph g;
    std::vector<ir::Value*> ops;
    for (size_t i = 0; i < types.size(); ++i) ops.push_back(g.add_input("x" + std::to_string(i), types[i]));
    try {
      g.add_op(k, ops, {}, "p");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  using T = ir::TensorType;
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "input has element type f32, expected i8 or u8",
                      error(K::ConvInteger, {T{DType::f32, {1, 2, 4, 4}}, T{DType::i8, {3, 2, 1, 1}}, T{DType::f32, {}}, T{DType::i8, {}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "input_zero_point has element type i8, input has u8",
                      error(K::ConvInteger, {T{DType::u8, {1, 2, 4, 4}}, T{DType::i8, {3, 2, 1, 1}}, T{DType::i8, {}}, T{DType::i8, {}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "filter_zero_point has shape 2, expected [] or [1] or [3]",
                      error(K::ConvInteger, {T{DType::u8, {1, 2, 4, 4}}, T{DType::i8, {3, 2, 1, 1}}, T{DType::u8, {}}, T{DType::i8, {2}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "bias has element type f32, expected i32",
                      error(K::ConvInteger, {T{DType::u8, {1, 2, 4, 4}}, T{DType::i8, {3, 2, 1, 1}}, T{DType::u8, {}}, T{DType::i8, {}},
                                   T{DType::f32, {3}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "contraction dims must match",
                      error(K::MatMulInteger, {T{DType::u8, {4, 5}}, T{DType::u8, {6, 3}}, T{DType::u8, {}}, T{DType::u8, {}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "lhs has rank 1, expected rank >= 2",
                      error(K::MatMulInteger, {T{DType::u8, {5}}, T{DType::u8, {5, 3}}, T{DType::u8, {}}, T{DType::u8, {}}}));
  EXPECT_EQ(error(K::MatMulInteger, {T{DType::u8, {4, 5}}, T{DType::i8, {5, 3}}, T{DType::u8, {1}}, T{DType::i8, {3}}}),
            "(accepted)");
  auto requant_error = [](ir::AttrMap attrs) {
    ir::Graph g;
    std::vector<ir::Value*> ops{g.add_input("a", {DType::u8, {4, 5}}), g.add_input("b", {DType::i8, {5, 3}}),
                                g.add_input("az", {DType::u8, {}}), g.add_input("bz", {DType::i8, {}})};
    try {
      return std::string(dtype_name(g.add_op(K::MatMulInteger, ops, std::move(attrs), "p")->result()->type.dtype));
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(requant_error({{"requantize_to", std::string("u8")}, {"requantize_scale", std::vector<double>{0.5}}}), "u8");
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "attribute 'requantize_scale' has 2 entries, expected 1 or 3",
                      requant_error({{"requantize_to", std::string("i8")}, {"requantize_scale", std::vector<double>{1, 2}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "attribute 'requantize_to' is 'i32', expected i8 or u8",
                      requant_error({{"requantize_to", std::string("i32")}, {"requantize_scale", std::vector<double>{1}}}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "attribute 'requantize_zero_point' is 200, outside i8",
                      requant_error({{"requantize_to", std::string("i8")}, {"requantize_scale", std::vector<double>{1}},
                                     {"requantize_zero_point", int64_t(200)}}));
}

// ---- QDQ rewrite -------------------------------------------------------------------------------

HostTensor scalar_f32(double v) {
  HostTensor t(DType::f32, Shape{});
  t.set_f64(0, v);
  return t;
}

HostTensor scales(std::vector<double> v) {
  if (v.size() == 1) return scalar_f32(v[0]);
  HostTensor t(DType::f32, Shape{int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_f64(int64_t(i), v[i]);
  return t;
}

// ORT's QLinearConv requantization of an exact sum: float(acc) * M, round half to even, + zp, saturate.
int64_t ort_requantize(int64_t acc, float m, int64_t zp, DType to) {
  float v = float(acc) * m;
  double lo = to == DType::i8 ? -128 : 0, hi = to == DType::i8 ? 127 : 255;
  return int64_t(std::clamp(std::nearbyint(double(v)) + double(zp), lo, hi));
}

struct QdqConv {
  ir::Graph g;
  HostTensor x, w, b, xz, wz, yz;
  std::vector<double> sx, sw, sy;
};

// quantize(conv(dequantize(x), dequantize(w), dequantize(b)), sy, yz), weights and bias constant.
QdqConv qdq_conv(bool per_channel, bool bias, DType yt, uint32_t seed) {
  QdqConv q;
  std::mt19937 rng(seed);
  const int64_t F = 4;
  q.x = random_int8(DType::u8, {1, 3, 6, 6}, rng);
  q.w = random_int8(DType::i8, {F, 3, 3, 3}, rng);
  q.xz = zero_points(DType::u8, 1, rng);
  q.wz = HostTensor(DType::i8, per_channel ? Shape{F} : Shape{});  // symmetric weights, as exporters do
  q.yz = zero_points(yt, 1, rng);
  q.sx = {0.0173};
  q.sw = per_channel ? std::vector<double>{0.0021, 0.0034, 0.0009, 0.0047} : std::vector<double>{0.0027};
  q.sy = {0.0391};
  q.b = HostTensor(DType::i32, {F});
  for (int64_t i = 0; i < F; ++i) q.b.set_i64(i, int64_t(rng() % 4001) - 2000);
  ir::Graph& g = q.g;
  ir::Value* xq = g.add_input("x", {DType::u8, q.x.shape()});
  auto dq = [&](ir::Value* v, const HostTensor& s, const HostTensor& z, int64_t axis) {
    return g.add_op(K::Dequantize, {v, g.add_constant(s), g.add_constant(z)}, {{"axis", axis}})->result();
  };
  ir::Value* xd = dq(xq, scales(q.sx), q.xz, 1);
  ir::Value* wd = dq(g.add_constant(q.w), scales(q.sw), q.wz, 0);
  std::vector<ir::Value*> ops{xd, wd};
  if (bias) {
    std::vector<double> sb;
    for (double s : q.sw) sb.push_back(double(float(q.sx[0]) * float(s)));
    HostTensor zb(DType::i32, per_channel ? Shape{F} : Shape{});
    ops.push_back(dq(g.add_constant(q.b), scales(sb), zb, 0));
  }
  ir::Value* y = g.add_op(K::Conv, ops, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})->result();
  ir::Value* yq = g.add_op(K::Quantize, {y, g.add_constant(scales(q.sy)), g.add_constant(q.yz)},
                           {{"axis", int64_t(1)}, {"to", std::string(dtype_name(yt))}})->result();
  g.add_output(yq, "y");
  return q;
}

class QdqRewrite : public ::testing::TestWithParam<std::tuple<bool, bool, DType>> {};

TEST_P(QdqRewrite, ConvBecomesIntegerAndRequantizesAsOnnxRuntime) {
  auto [per_channel, bias, yt] = GetParam();
  QdqConv q = qdq_conv(per_channel, bias, yt, 5);
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(q.g);
  ir::verify_graph(q.g);
  std::vector<ir::OpKind> kinds;
  for (const ir::Op* op : q.g.ops())
    if (op->kind != K::Constant) kinds.push_back(op->kind);
  EXPECT_EQ(kinds, (std::vector<ir::OpKind>{K::ConvInteger}));  // the requantization fused into it
  HostTensor y = ir::interpret(q.g, {{"x", q.x}}).at("y");
  // Independently: exact sums (reference conv_integer is checked above against the float conv),
  // then ORT's requantization with M = float(float(sx * sw[c]) / sy).
  std::vector<HostTensor> in{q.x, q.w, q.xz, q.wz};
  if (bias) in.push_back(q.b);
  HostTensor acc = run_op(K::ConvInteger, in, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const int64_t plane = acc.shape()[2] * acc.shape()[3];
  for (int64_t i = 0; i < acc.numel(); ++i) {
    int64_t c = (i / plane) % acc.shape()[1];
    float m = float(float(q.sx[0]) * float(q.sw[per_channel ? size_t(c) : 0])) / float(q.sy[0]);
    ASSERT_EQ(y.get_i64(i), ort_requantize(acc.get_i64(i), m, q.yz.get_i64(0), yt)) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, QdqRewrite,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Values(DType::u8, DType::i8)));

TEST(QdqRewriteLimits, FloatConsumersKeepTheFloatForm) {
  // Without a quantize after it the conv's float result has other readers: nothing to rewrite.
  QdqConv q = qdq_conv(false, false, DType::u8, 9);
  ir::Op* quantize = q.g.ops().back();
  ir::Value* conv_out = quantize->operand(0);
  q.g.outputs()[0].value = conv_out;
  q.g.remove_dead_ops();
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(q.g);
  for (const ir::Op* op : q.g.ops()) EXPECT_NE(op->kind, K::ConvInteger);
}

TEST(QdqRewriteMatMul, BecomesMatMulInteger) {
  std::mt19937 rng(3);
  ir::Graph g;
  HostTensor a = random_int8(DType::i8, {6, 10}, rng), b = random_int8(DType::i8, {10, 5}, rng);
  HostTensor az = zero_points(DType::i8, 1, rng), bz(DType::i8, Shape{5}), yz = zero_points(DType::i8, 1, rng);
  std::vector<double> sb{0.01, 0.02, 0.005, 0.013, 0.0071};
  ir::Value* aq = g.add_input("a", {DType::i8, a.shape()});
  ir::Value* ad = g.add_op(K::Dequantize, {aq, g.add_constant(scalar_f32(0.05)), g.add_constant(az)})->result();
  ir::Value* bd = g.add_op(K::Dequantize, {g.add_constant(b), g.add_constant(scales(sb)), g.add_constant(bz)},
                           {{"axis", int64_t(1)}})->result();
  ir::Value* y = g.add_op(K::MatMul, {ad, bd})->result();
  ir::Value* yq = g.add_op(K::Quantize, {y, g.add_constant(scalar_f32(0.6)), g.add_constant(yz)}, {{"to", std::string("i8")}})->result();
  g.add_output(yq, "y");
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(g);
  ir::verify_graph(g);
  bool integer = false;
  for (const ir::Op* op : g.ops()) integer |= op->kind == K::MatMulInteger;
  EXPECT_TRUE(integer);
  HostTensor out = ir::interpret(g, {{"a", a}}).at("y");
  HostTensor acc = run_op(K::MatMulInteger, {a, b, az, bz});
  for (int64_t i = 0; i < acc.numel(); ++i) {
    float m = float(float(0.05) * float(sb[size_t(i % 5)])) / float(0.6);
    ASSERT_EQ(out.get_i64(i), ort_requantize(acc.get_i64(i), m, yz.get_i64(0), DType::i8)) << "element " << i;
  }
}

}  // namespace
}  // namespace vkc::test
