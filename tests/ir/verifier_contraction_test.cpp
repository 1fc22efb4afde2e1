// matmul (numpy semantics), batch_matmul and gemm shape rules.
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierMatMul, NumpySemantics) {
  EXPECT_EQ(infer(OpKind::MatMul, {f32({2, 3}), f32({3, 4})}), f32({2, 4}));
  EXPECT_EQ(infer(OpKind::MatMul, {f32({3}), f32({3})}), f32({}));
  EXPECT_EQ(infer(OpKind::MatMul, {f32({3}), f32({5, 3, 4})}), f32({5, 4}));
  EXPECT_EQ(infer(OpKind::MatMul, {f32({5, 2, 3}), f32({3})}), f32({5, 2}));
  EXPECT_EQ(infer(OpKind::MatMul, {f32({7, 1, 2, 3}), f32({6, 3, 4})}), f32({7, 6, 2, 4}));
  EXPECT_EQ(infer(OpKind::MatMul, {typed(DType::f16, {3, 2}), typed(DType::f16, {4, 3})},
                  {{"transpose_a", true}, {"transpose_b", true}}),
            typed(DType::f16, {2, 4}));
}

TEST(VerifierMatMul, Errors) {
  EXPECT_EQ(error_of(OpKind::MatMul, {f32({2, 3}), f32({4, 5})}),
            "matmul 'n': lhs dim 1 (K) is 3, rhs dim 0 (K) is 4; contraction dims must match");
  EXPECT_EQ(error_of(OpKind::MatMul, {f32({2, 3}), f32({4, 5})}, {{"transpose_b", true}}),
            "matmul 'n': lhs dim 1 (K) is 3, rhs dim 1 (K) is 5; contraction dims must match");
  EXPECT_EQ(error_of(OpKind::MatMul, {f32({3}), f32({3, 2})}, {{"transpose_a", true}}),
            "matmul 'n': attribute 'transpose_a' needs lhs of rank >= 2, found rank 1");
  EXPECT_EQ(error_of(OpKind::MatMul, {f32({2, 2, 3}), f32({4, 3, 1})}),
            "matmul 'n': lhs dim 0 is 2, rhs dim 0 is 4; batch dims do not broadcast");
  EXPECT_EQ(error_of(OpKind::MatMul, {f32({}), f32({3})}), "matmul 'n': lhs has rank 0, expected rank >= 1");
  EXPECT_EQ(error_of(OpKind::MatMul, {typed(DType::i8, {2, 2}), typed(DType::i8, {2, 2})}),
            "matmul 'n': lhs has element type i8, expected a float type (f32 or f16)");
  EXPECT_EQ(error_of(OpKind::MatMul, {f32({2, 2}), typed(DType::f16, {2, 2})}),
            "matmul 'n': rhs has element type f16, lhs has f32; they must match");
}

TEST(VerifierBatchMatMul, SameBatch) {
  EXPECT_EQ(infer(OpKind::BatchMatMul, {f32({4, 2, 3}), f32({4, 5, 3})}, {{"transpose_b", true}}),
            f32({4, 2, 5}));
  EXPECT_EQ(error_of(OpKind::BatchMatMul, {f32({4, 2, 3}), f32({1, 3, 5})}),
            "batch_matmul 'n': lhs dim 0 (batch) is 4, rhs dim 0 (batch) is 1; they must be equal");
  EXPECT_EQ(error_of(OpKind::BatchMatMul, {f32({2, 3}), f32({3, 5})}),
            "batch_matmul 'n': lhs has rank 2, expected 3 ([batch, rows, cols])");
}

TEST(VerifierGemm, TransposesAndBias) {
  EXPECT_EQ(infer(OpKind::Gemm, {f32({3, 2}), f32({3, 5}), f32({5})}, {{"transpose_a", true}}),
            f32({2, 5}));
  EXPECT_EQ(infer(OpKind::Gemm, {f32({2, 3}), f32({5, 3}), f32({2, 1})},
                  {{"transpose_b", true}, {"alpha", 0.5}, {"beta", int64_t(2)}}),
            f32({2, 5}));
  EXPECT_EQ(error_of(OpKind::Gemm, {f32({2, 3}), f32({3, 5}), f32({2})}),
            "gemm 'n': c dim 0 is 2, expected 1 or 5 (c must broadcast to 2x5)");
  EXPECT_EQ(error_of(OpKind::Gemm, {f32({2, 3}), f32({2, 5})}),
            "gemm 'n': a dim 1 (K) is 3, b dim 0 (K) is 2; contraction dims must match");
  EXPECT_EQ(error_of(OpKind::Gemm, {f32({2, 3, 1}), f32({3, 5})}), "gemm 'n': a has rank 3, expected 2");
}

}  // namespace
}  // namespace vkc::ir::test
