// Shape rules of gather, gather_elements, gather_nd, scatter_nd, scatter_elements: result types
// and the one-line errors naming the op, operand, attribute and dim.
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

using K = OpKind;
const TensorType i64v(Shape s) { return typed(DType::i64, std::move(s)); }

TEST(VerifierGather, ResultShapeAndErrors) {
  EXPECT_EQ(infer(K::Gather, {f32({5, 7}), i64v({2, 3})}), f32({2, 3, 7}));
  EXPECT_EQ(infer(K::Gather, {f32({5, 7, 2}), typed(DType::i32, {4})}, {{"axis", int64_t(-2)}}), f32({5, 4, 2}));
  EXPECT_EQ(infer(K::Gather, {typed(DType::boolean, {5, 7}), i64v({})}, {{"axis", int64_t(1)}}),
            typed(DType::boolean, {5}));
  EXPECT_EQ(error_of(K::Gather, {f32({5, 7}), f32({2})}),
            "gather 'n': indices has element type f32, expected i32 or i64");
  EXPECT_EQ(error_of(K::Gather, {f32({5, 7}), i64v({2})}, {{"axis", int64_t(2)}}),
            "gather 'n': axis is 2, expected in [-2, 1] for rank 2");
  EXPECT_EQ(error_of(K::Gather, {f32({}), i64v({2})}), "gather 'n': data has rank 0, expected at least 1");
  EXPECT_EQ(error_of(K::Gather, {f32({2, 2, 2, 2}), i64v({2, 2, 2, 2})}),
            "gather 'n': result 0 has rank 7, at most 6 is supported");
}

TEST(VerifierGatherElements, ResultShapeAndErrors) {
  EXPECT_EQ(infer(K::GatherElements, {f32({4, 5}), i64v({4, 9})}, {{"axis", int64_t(1)}}), f32({4, 9}));
  EXPECT_EQ(error_of(K::GatherElements, {f32({4, 5}), i64v({4})}),
            "gather_elements 'n': indices has rank 1, data has rank 2; they must match");
  EXPECT_EQ(error_of(K::GatherElements, {f32({4, 5}), i64v({2, 6})}),
            "gather_elements 'n': indices dim 1 is 6, data dim 1 is 5; away from the axis (0) indices may "
            "not exceed data");
}

TEST(VerifierGatherNd, ResultShapeAndErrors) {
  EXPECT_EQ(infer(K::GatherND, {f32({2, 3, 4}), i64v({5, 2})}), f32({5, 4}));
  EXPECT_EQ(infer(K::GatherND, {f32({2, 3, 4}), i64v({5, 3})}), f32({5}));
  EXPECT_EQ(infer(K::GatherND, {f32({2, 3, 4}), i64v({2, 6, 1})}, {{"batch_dims", int64_t(1)}}), f32({2, 6, 4}));
  EXPECT_EQ(error_of(K::GatherND, {f32({2, 3, 4}), i64v({5, 4})}),
            "gather_nd 'n': indices dim 1 (index length) is 4, expected 1 to 3 (data rank minus batch_dims)");
  EXPECT_EQ(error_of(K::GatherND, {f32({2, 3, 4}), i64v({3, 1})}, {{"batch_dims", int64_t(1)}}),
            "gather_nd 'n': indices dim 0 is 3, data dim 0 is 2; batch dims must match");
  EXPECT_EQ(error_of(K::GatherND, {f32({2, 3}), i64v({2, 1})}, {{"batch_dims", int64_t(2)}}),
            "gather_nd 'n': attribute 'batch_dims' is 2, expected 0 to 1 (below both ranks)");
}

TEST(VerifierScatterNd, ResultShapeAndErrors) {
  EXPECT_EQ(infer(K::ScatterND, {f32({4, 5, 3}), i64v({6, 1}), f32({6, 5, 3})}), f32({4, 5, 3}));
  EXPECT_EQ(infer(K::ScatterND, {f32({4, 5, 3}), i64v({2, 3, 2}), f32({2, 3, 3})}, {{"reduction", std::string("max")}}),
            f32({4, 5, 3}));
  EXPECT_EQ(error_of(K::ScatterND, {f32({4, 5, 3}), i64v({6, 1}), f32({6, 5})}),
            "scatter_nd 'n': updates has shape 6x5, expected 6x5x3 (indices dims but the last, then data "
            "dims from the index length)");
  EXPECT_EQ(error_of(K::ScatterND, {f32({4}), i64v({2, 1}), typed(DType::i32, {2})}),
            "scatter_nd 'n': updates has element type i32, data has f32; they must match");
  EXPECT_EQ(error_of(K::ScatterND, {f32({4}), i64v({2, 1}), f32({2})}, {{"reduction", std::string("sum")}}),
            "scatter_nd 'n': attribute 'reduction' is 'sum', expected 'none', 'add', 'mul', 'max' or 'min'");
  EXPECT_EQ(error_of(K::ScatterND, {typed(DType::boolean, {4}), i64v({2, 1}), typed(DType::boolean, {2})},
                     {{"reduction", std::string("add")}}),
            "scatter_nd 'n': attribute 'reduction' is 'add', which needs a numeric data type, not bool");
}

TEST(VerifierScatterElements, ResultShapeAndErrors) {
  EXPECT_EQ(infer(K::ScatterElements, {f32({4, 5}), i64v({4, 7}), f32({4, 7})}, {{"axis", int64_t(1)}}),
            f32({4, 5}));
  EXPECT_EQ(error_of(K::ScatterElements, {f32({4, 5}), i64v({4, 2}), f32({4, 3})}),
            "scatter_elements 'n': updates has shape 4x3, expected 4x2 (the shape of indices)");
  EXPECT_EQ(error_of(K::ScatterElements, {f32({4, 5}), i64v({5, 2}), f32({5, 2})}, {{"axis", int64_t(1)}}),
            "scatter_elements 'n': indices dim 0 is 5, data dim 0 is 4; away from the axis (1) indices may not "
            "exceed data");
}

}  // namespace
}  // namespace vkc::ir::test
