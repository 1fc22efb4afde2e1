// Shape and type rules of the comparison and logic ops, the float tests, mod and prelu (issue 23).
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

const DType kBool = DType::boolean;

TEST(VerifierCompare, BoolResultNumpyBroadcast) {
  for (OpKind k : {OpKind::Equal, OpKind::Less, OpKind::Greater, OpKind::LessOrEqual, OpKind::GreaterOrEqual}) {
    SCOPED_TRACE(op_name(k));
    EXPECT_EQ(infer(k, {f32({4, 1, 3}), f32({5, 1})}), typed(kBool, {4, 5, 3}));
    EXPECT_EQ(infer(k, {typed(DType::i64, {2}), typed(DType::i64, {})}), typed(kBool, {2}));
    EXPECT_EQ(infer(k, {typed(DType::u8, {0, 2}), typed(DType::u8, {2})}), typed(kBool, {0, 2}));
    EXPECT_EQ(error_of(k, {f32({2}), typed(DType::i32, {2})}),
              cat(op_name(k), " 'n': operand 0 has element type f32, operand 1 has i32; they must match"));
    EXPECT_EQ(error_of(k, {f32({2, 3}), f32({4})}),
              cat(op_name(k), " 'n': operand 0 dim 1 is 3, operand 1 dim 0 is 4; they do not broadcast"));
  }
  EXPECT_EQ(infer(OpKind::Equal, {typed(kBool, {2}), typed(kBool, {2})}), typed(kBool, {2}));
  EXPECT_EQ(error_of(OpKind::Less, {typed(kBool, {2}), typed(kBool, {2})}),
            "less 'n': operand 0 has element type bool, expected a numeric type");
}

TEST(VerifierLogic, BoolOperandsOnly) {
  for (OpKind k : {OpKind::And, OpKind::Or, OpKind::Xor}) {
    SCOPED_TRACE(op_name(k));
    EXPECT_EQ(infer(k, {typed(kBool, {2, 1}), typed(kBool, {3})}), typed(kBool, {2, 3}));
    EXPECT_EQ(error_of(k, {typed(kBool, {2}), typed(DType::i32, {2})}),
              cat(op_name(k), " 'n': operand 1 has element type i32, expected bool"));
  }
  EXPECT_EQ(infer(OpKind::Not, {typed(kBool, {2, 0})}), typed(kBool, {2, 0}));
  EXPECT_EQ(error_of(OpKind::Not, {f32({2})}), "not 'n': operand 0 has element type f32, expected bool");
}

TEST(VerifierFloatTest, FloatInBoolOut) {
  EXPECT_EQ(infer(OpKind::IsNaN, {typed(DType::f16, {3})}), typed(kBool, {3}));
  EXPECT_EQ(infer(OpKind::IsInf, {f32({2, 2})}, {{"detect_positive", false}}), typed(kBool, {2, 2}));
  EXPECT_EQ(error_of(OpKind::IsInf, {typed(DType::i32, {2})}),
            "is_inf 'n': operand 0 has element type i32, expected a float type (f32 or f16)");
  EXPECT_EQ(error_of(OpKind::IsInf, {f32({2})}, {{"detect_negative", std::string("yes")}}).find("detect_negative") !=
                std::string::npos,
            true);
}

TEST(VerifierMod, NumericSameTypeBroadcast) {
  for (OpKind k : {OpKind::Mod, OpKind::FMod}) {
    EXPECT_EQ(infer(k, {typed(DType::i64, {2, 1}), typed(DType::i64, {3})}), typed(DType::i64, {2, 3}));
    EXPECT_EQ(infer(k, {f32({3}), f32({})}), f32({3}));
    EXPECT_EQ(error_of(k, {typed(kBool, {2}), typed(kBool, {2})}),
              cat(op_name(k), " 'n': operand 0 has element type bool, expected a numeric type"));
  }
}

TEST(VerifierUnaryMath, FloatOnlyExceptSign) {
  for (OpKind k : {OpKind::Elu, OpKind::Selu, OpKind::Softplus, OpKind::Mish, OpKind::Sin, OpKind::Cos,
                   OpKind::Floor, OpKind::Ceil, OpKind::Round}) {
    SCOPED_TRACE(op_name(k));
    EXPECT_EQ(infer(k, {typed(DType::f16, {2, 3})}), typed(DType::f16, {2, 3}));
    EXPECT_EQ(error_of(k, {typed(DType::i32, {2})}),
              cat(op_name(k), " 'n': operand 0 has element type i32, expected a float type (f32 or f16)"));
  }
  EXPECT_EQ(infer(OpKind::Sign, {typed(DType::i64, {2})}), typed(DType::i64, {2}));
  EXPECT_EQ(infer(OpKind::Sign, {typed(DType::u8, {2})}), typed(DType::u8, {2}));
  EXPECT_EQ(error_of(OpKind::Sign, {typed(kBool, {2})}),
            "sign 'n': operand 0 has element type bool, expected a numeric type");
}

TEST(VerifierPRelu, SlopeBroadcastsToTheInput) {
  EXPECT_EQ(infer(OpKind::PRelu, {f32({2, 3, 4, 5}), f32({3, 1, 1})}), f32({2, 3, 4, 5}));
  EXPECT_EQ(infer(OpKind::PRelu, {f32({2, 3}), f32({3})}), f32({2, 3}));
  EXPECT_EQ(infer(OpKind::PRelu, {f32({2, 3, 4, 5}), f32({1})}), f32({2, 3, 4, 5}));
  EXPECT_EQ(infer(OpKind::PRelu, {typed(DType::i32, {4}), typed(DType::i32, {4})}), typed(DType::i32, {4}));
  EXPECT_EQ(error_of(OpKind::PRelu, {f32({2, 3, 4, 5}), f32({3})}),
            "prelu 'n': slope dim 0 is 3, input dim 3 is 5; the slope must broadcast to the input");
  EXPECT_EQ(error_of(OpKind::PRelu, {f32({3}), f32({2, 3})}),
            "prelu 'n': slope has rank 2, input has rank 1; the slope must broadcast to the input");
  EXPECT_EQ(error_of(OpKind::PRelu, {f32({3}), typed(DType::f16, {3})}),
            "prelu 'n': input has element type f32, slope has f16; they must match");
  EXPECT_EQ(error_of(OpKind::PRelu, {typed(DType::u8, {3}), typed(DType::u8, {3})}),
            "prelu 'n': input has element type u8, expected a float or signed integer type");
}

}  // namespace
}  // namespace vkc::ir::test
