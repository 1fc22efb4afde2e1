// The normalizations and reductions group (issue 23): reduce_prod/l1/l2/log_sum_exp, layer_norm,
// group_norm, cumsum.
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierNormalization, MoreReductions) {
  EXPECT_EQ(infer(OpKind::ReduceProd, {typed(DType::i32, {2, 3})}, {{"axes", Ints{1}}}), typed(DType::i32, {2, 1}));
  EXPECT_EQ(infer(OpKind::ReduceL1, {f32({2, 3, 4})}, {{"axes", Ints{0, 2}}, {"keepdims", false}}), f32({3}));
  EXPECT_EQ(infer(OpKind::ReduceL2, {f32({2, 3})}), f32({1, 1}));
  EXPECT_EQ(infer(OpKind::ReduceLogSumExp, {typed(DType::f16, {2, 3})}, {{"axes", Ints{-1}}}),
            typed(DType::f16, {2, 1}));
  EXPECT_EQ(error_of(OpKind::ReduceL2, {typed(DType::i32, {2})}),
            "reduce_l2 'n': operand 0 has element type i32, expected a float type (f32 or f16)");
  EXPECT_EQ(error_of(OpKind::ReduceLogSumExp, {f32({2, 3})}, {{"axes", Ints{2}}}),
            "reduce_log_sum_exp 'n': attribute 'axes' entry 0 is 2, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(OpKind::ReduceProd, {typed(DType::boolean, {2})}),
            "reduce_prod 'n': operand 0 has element type bool, expected a numeric type");
}

TEST(VerifierNormalization, LayerNorm) {
  EXPECT_EQ(infer(OpKind::LayerNorm, {f32({2, 3, 4})}), f32({2, 3, 4}));
  EXPECT_EQ(infer(OpKind::LayerNorm, {f32({2, 3, 4}), f32({3, 4}), f32({3, 4})}, {{"axis", int64_t(-2)}}),
            f32({2, 3, 4}));
  EXPECT_EQ(infer(OpKind::LayerNorm, {f32({2, 3}), f32({2, 3})}, {{"axis", int64_t(0)}}), f32({2, 3}));
  EXPECT_EQ(error_of(OpKind::LayerNorm, {f32({2, 3, 4}), f32({4})}, {{"axis", int64_t(1)}}),
            "layer_norm 'n': operand 1 (scale) is tensor<4xf32>, expected shape tensor<3x4xf32>");
  EXPECT_EQ(error_of(OpKind::LayerNorm, {f32({2, 4}), f32({4}), typed(DType::f16, {4})}),
            "layer_norm 'n': operand 2 (bias) is tensor<4xf16>, expected the input's element type f32");
  EXPECT_EQ(error_of(OpKind::LayerNorm, {f32({2, 4})}, {{"axis", int64_t(2)}}),
            "layer_norm 'n': axis is 2, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(OpKind::LayerNorm, {f32({2, 4})}, {{"epsilon", -1.0}}),
            "layer_norm 'n': attribute 'epsilon' is -1, expected a finite value >= 0");
  EXPECT_EQ(error_of(OpKind::LayerNorm, {typed(DType::i32, {2, 4})}),
            "layer_norm 'n': input has element type i32, expected a float type (f32 or f16)");
}

TEST(VerifierNormalization, GroupNorm) {
  EXPECT_EQ(infer(OpKind::GroupNorm, {f32({2, 6, 5}), f32({6}), f32({6})}, {{"num_groups", int64_t(3)}}),
            f32({2, 6, 5}));
  EXPECT_EQ(error_of(OpKind::GroupNorm, {f32({2, 6, 5}), f32({6}), f32({6})}, {{"num_groups", int64_t(4)}}),
            "group_norm 'n': input dim 1 (channels) is 6, not a multiple of attribute 'num_groups' 4");
  EXPECT_EQ(error_of(OpKind::GroupNorm, {f32({2, 6, 5}), f32({3}), f32({6})}, {{"num_groups", int64_t(3)}}),
            "group_norm 'n': operand 1 (scale) is tensor<3xf32>, expected shape tensor<6xf32>");
  EXPECT_EQ(error_of(OpKind::GroupNorm, {f32({6}), f32({6}), f32({6})}, {{"num_groups", int64_t(3)}}),
            "group_norm 'n': input is tensor<6xf32>, expected rank >= 2 ([N, C, ...])");
  EXPECT_EQ(error_of(OpKind::GroupNorm, {f32({2, 6}), f32({6}), f32({6})}, {{"num_groups", int64_t(0)}}),
            "group_norm 'n': attribute 'num_groups' is 0, expected >= 1");
}

TEST(VerifierNormalization, CumSum) {
  EXPECT_EQ(infer(OpKind::CumSum, {typed(DType::i64, {2, 3})}, {{"axis", int64_t(-1)}}), typed(DType::i64, {2, 3}));
  EXPECT_EQ(error_of(OpKind::CumSum, {f32({2, 3})}, {{"axis", int64_t(2)}}),
            "cumsum 'n': axis is 2, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(OpKind::CumSum, {f32({})}, {{"axis", int64_t(0)}}),
            "cumsum 'n': input is tensor<f32>, expected rank >= 1");
}

}  // namespace
}  // namespace vkc::ir::test
