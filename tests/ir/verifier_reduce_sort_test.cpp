// Reductions, arg reductions, softmax, sort and topk.
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierReduce, AxesAndKeepdims) {
  EXPECT_EQ(infer(OpKind::ReduceSum, {f32({2, 3, 4})}, {{"axes", Ints{-1, 0}}}), f32({1, 3, 1}));
  EXPECT_EQ(infer(OpKind::ReduceMean, {f32({2, 3, 4})}, {{"axes", Ints{1}}, {"keepdims", false}}), f32({2, 4}));
  EXPECT_EQ(infer(OpKind::ReduceMax, {f32({2, 3})}, {{"keepdims", false}}), f32({}));
  EXPECT_EQ(infer(OpKind::ReduceMin, {typed(DType::i32, {2, 3})}), typed(DType::i32, {1, 1}));
  EXPECT_EQ(error_of(OpKind::ReduceSum, {f32({2, 3})}, {{"axes", Ints{1, -1}}}),
            "reduce_sum 'n': attribute 'axes' lists axis 1 twice");
  EXPECT_EQ(error_of(OpKind::ReduceSum, {f32({2, 3})}, {{"axes", Ints{-3}}}),
            "reduce_sum 'n': attribute 'axes' entry 0 is -3, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(OpKind::ReduceSum, {typed(DType::boolean, {2})}),
            "reduce_sum 'n': operand 0 has element type bool, expected a numeric type");
}

TEST(VerifierArgReduce, IndexResult) {
  EXPECT_EQ(infer(OpKind::ArgMax, {f32({2, 3, 4})}, {{"axis", int64_t(1)}}), typed(DType::i64, {2, 1, 4}));
  EXPECT_EQ(infer(OpKind::ArgMin, {f32({2, 3, 4})}, {{"axis", int64_t(-1)}, {"keepdims", false}}),
            typed(DType::i64, {2, 3}));
  EXPECT_EQ(error_of(OpKind::ArgMax, {f32({2, 3})}, {{"axis", int64_t(2)}}),
            "argmax 'n': axis is 2, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(OpKind::ArgMax, {f32({2, 0})}, {{"axis", int64_t(1)}}),
            "argmax 'n': input dim 1 (axis) is 0, expected >= 1");
}

TEST(VerifierSoftmax, AxisAndDtype) {
  EXPECT_EQ(infer(OpKind::Softmax, {f32({2, 3})}), f32({2, 3}));
  EXPECT_EQ(infer(OpKind::LogSoftmax, {typed(DType::f16, {2, 3})}, {{"axis", int64_t(0)}}),
            typed(DType::f16, {2, 3}));
  EXPECT_EQ(error_of(OpKind::Softmax, {f32({2, 3})}, {{"axis", int64_t(-3)}}),
            "softmax 'n': axis is -3, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(OpKind::LogSoftmax, {typed(DType::i32, {2})}),
            "log_softmax 'n': operand 0 has element type i32, expected a float type (f32 or f16)");
}

TEST(VerifierSort, KeysAndPayloads) {
  std::vector<TensorType> r = infer_all(OpKind::Sort, {f32({2, 5}), typed(DType::i64, {2, 5}), typed(DType::u8, {2, 5})});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], f32({2, 5}));
  EXPECT_EQ(r[1], typed(DType::i64, {2, 5}));
  EXPECT_EQ(r[2], typed(DType::u8, {2, 5}));
  EXPECT_EQ(error_of(OpKind::Sort, {f32({2, 5}), f32({2, 4})}),
            "sort 'n': operand 1 dim 1 is 4, keys dim 1 is 5; they must match");
  EXPECT_EQ(error_of(OpKind::Sort, {f32({2, 5})}, {{"axis", int64_t(2)}}),
            "sort 'n': axis is 2, expected in [-2, 1] for rank 2");
}

TEST(VerifierTopK, ValuesAndIndices) {
  std::vector<TensorType> r = infer_all(OpKind::TopK, {f32({3, 8})}, {{"k", int64_t(2)}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], f32({3, 2}));
  EXPECT_EQ(r[1], typed(DType::i64, {3, 2}));
  r = infer_all(OpKind::TopK, {f32({3, 8})}, {{"k", int64_t(3)}, {"axis", int64_t(0)}, {"index_type", std::string("i32")}});
  EXPECT_EQ(r[1], typed(DType::i32, {3, 8}));
  EXPECT_EQ(error_of(OpKind::TopK, {f32({3, 8})}, {{"k", int64_t(9)}}),
            "topk 'n': attribute 'k' is 9, expected 1 to 8 (input dim 1)");
  EXPECT_EQ(error_of(OpKind::TopK, {f32({3, 8})}, {{"k", int64_t(1)}, {"index_type", std::string("u8")}}),
            "topk 'n': attribute 'index_type' is 'u8', expected 'i64' or 'i32'");
}

}  // namespace
}  // namespace vkc::ir::test
