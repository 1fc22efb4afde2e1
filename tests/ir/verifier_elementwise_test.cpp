// Unary, cast, binary, select, quantize and dequantize shape and type rules.
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierUnary, SameTypeAndDtypeRules) {
  for (OpKind k : {OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp, OpKind::Log, OpKind::Sqrt, OpKind::Erf,
                   OpKind::Gelu, OpKind::HardSwish}) {
    EXPECT_EQ(infer(k, {typed(DType::f16, {2, 0, 3})}), typed(DType::f16, {2, 0, 3}));
    EXPECT_EQ(error_of(k, {typed(DType::i32, {2})}),
              cat(op_name(k), " 'n': operand 0 has element type i32, expected a float type (f32 or f16)"));
  }
  for (OpKind k : {OpKind::Neg, OpKind::Abs, OpKind::Relu, OpKind::LeakyRelu, OpKind::Clip}) {
    EXPECT_EQ(infer(k, {typed(DType::i8, {4})}), typed(DType::i8, {4}));
    EXPECT_EQ(infer(k, {f32({})}), f32({}));
    EXPECT_EQ(error_of(k, {typed(DType::u8, {4})}),
              cat(op_name(k), " 'n': operand 0 has element type u8, expected a float or signed integer type"));
  }
  EXPECT_EQ(infer(OpKind::Clip, {f32({3})}, {{"min", 0.0}, {"max", int64_t(6)}}), f32({3}));
  EXPECT_EQ(infer(OpKind::Gelu, {f32({3})}, {{"approximate", std::string("tanh")}}), f32({3}));
  EXPECT_EQ(error_of(OpKind::Gelu, {f32({3})}, {{"approximate", std::string("erf")}}),
            "gelu 'n': attribute 'approximate' is 'erf', expected 'none' or 'tanh'");
}

TEST(VerifierCast, TargetType) {
  EXPECT_EQ(infer(OpKind::Cast, {f32({2, 3})}, {{"to", std::string("bool")}}), typed(DType::boolean, {2, 3}));
  EXPECT_EQ(error_of(OpKind::Cast, {f32({2})}, {{"to", std::string("f64")}}),
            "cast 'n': attribute 'to' is 'f64', expected one of f32, f16, i64, i32, i8, u8, bool");
}

TEST(VerifierBinary, NumpyBroadcasting) {
  EXPECT_EQ(infer(OpKind::Add, {f32({4, 1, 3}), f32({5, 1})}), f32({4, 5, 3}));
  EXPECT_EQ(infer(OpKind::Mul, {f32({}), f32({2, 2})}), f32({2, 2}));
  EXPECT_EQ(infer(OpKind::Pow, {f32({0, 3}), f32({1, 3})}), f32({0, 3}));
  EXPECT_EQ(infer(OpKind::Max, {typed(DType::i32, {3}), typed(DType::i32, {2, 1})}), typed(DType::i32, {2, 3}));
  EXPECT_EQ(error_of(OpKind::Sub, {f32({2, 3}), f32({4, 1, 4})}),
            "sub 'n': operand 0 dim 1 is 3, operand 1 dim 2 is 4; they do not broadcast");
  EXPECT_EQ(error_of(OpKind::Div, {f32({2}), typed(DType::f16, {2})}),
            "div 'n': operand 0 has element type f32, operand 1 has f16; they must match");
}

TEST(VerifierSelect, ThreeWayBroadcast) {
  EXPECT_EQ(infer(OpKind::Select, {typed(DType::boolean, {2, 1, 1}), f32({3, 1}), f32({4})}),
            f32({2, 3, 4}));
  EXPECT_EQ(error_of(OpKind::Select, {f32({2}), f32({2}), f32({2})}),
            "select 'n': condition has element type f32, expected bool");
  EXPECT_EQ(error_of(OpKind::Select, {typed(DType::boolean, {2}), f32({2}), typed(DType::i32, {2})}),
            "select 'n': true_value has element type f32, false_value has i32; they must match");
  EXPECT_EQ(error_of(OpKind::Select, {typed(DType::boolean, {3}), f32({2, 1}), f32({2})}),
            "select 'n': condition dim 0 is 3, false_value dim 0 is 2; they do not broadcast");
}

TEST(VerifierQuantize, PerTensorAndPerChannel) {
  EXPECT_EQ(infer(OpKind::Quantize, {f32({2, 3}), f32({})}), typed(DType::i8, {2, 3}));
  EXPECT_EQ(infer(OpKind::Quantize, {f32({2, 3}), f32({1})}, {{"to", std::string("u8")}}),
            typed(DType::u8, {2, 3}));
  EXPECT_EQ(infer(OpKind::Quantize, {f32({2, 3}), f32({3}), typed(DType::u8, {3})}),
            typed(DType::u8, {2, 3}));
  EXPECT_EQ(infer(OpKind::Quantize, {f32({2, 3}), f32({2})}, {{"axis", int64_t(-2)}}), typed(DType::i8, {2, 3}));
  EXPECT_EQ(error_of(OpKind::Quantize, {f32({2, 3}), f32({2})}),
            "quantize 'n': scale dim 0 is 2, input dim 1 (axis) is 3");
  EXPECT_EQ(error_of(OpKind::Quantize, {f32({2, 3}), f32({3}), typed(DType::i8, {1})}),
            "quantize 'n': zero_point has shape 1, scale has shape 3");
  EXPECT_EQ(error_of(OpKind::Quantize, {f32({2, 3}), f32({})}, {{"to", std::string("i32")}}),
            "quantize 'n': attribute 'to' is 'i32', expected 'i8' or 'u8'");
  EXPECT_EQ(error_of(OpKind::Quantize, {f32({2}), f32({}), typed(DType::u8, {})}, {{"to", std::string("i8")}}),
            "quantize 'n': zero_point has element type u8, attribute 'to' is 'i8'");
  EXPECT_EQ(error_of(OpKind::Quantize, {typed(DType::i32, {2}), f32({})}),
            "quantize 'n': input has element type i32, expected a float type (f32 or f16)");
}

TEST(VerifierDequantize, ResultIsF32) {
  EXPECT_EQ(infer(OpKind::Dequantize, {typed(DType::u8, {4, 2}), f32({4}), typed(DType::u8, {4})},
                  {{"axis", int64_t(0)}}),
            f32({4, 2}));
  EXPECT_EQ(infer(OpKind::Dequantize, {typed(DType::i32, {5}), f32({})}), f32({5}));
  EXPECT_EQ(error_of(OpKind::Dequantize, {f32({5}), f32({})}),
            "dequantize 'n': input has element type f32, expected i8, u8 or i32");
  EXPECT_EQ(error_of(OpKind::Dequantize, {typed(DType::i8, {5}), f32({}), typed(DType::u8, {})}),
            "dequantize 'n': zero_point has element type u8, input has i8; they must match");
  EXPECT_EQ(error_of(OpKind::Dequantize, {typed(DType::i8, {5}), f32({2, 1})}),
            "dequantize 'n': scale has shape 2x1, expected rank 0 or rank 1");
}

}  // namespace
}  // namespace vkc::ir::test
