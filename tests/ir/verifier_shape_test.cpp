// expand_shape, collapse_shape, reshape, and the data-movement ops (transpose, pad, reverse,
// slice, concat, broadcast).
#include <gtest/gtest.h>

#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

TEST(VerifierExpandShape, Groups) {
  EXPECT_EQ(infer(OpKind::ExpandShape, {f32({6, 4})},
                  {{"reassociation", IntsList{{0, 1}, {2}}}, {"shape", Ints{2, 3, 4}}}),
            f32({2, 3, 4}));
  EXPECT_EQ(infer(OpKind::ExpandShape, {f32({})}, {{"reassociation", IntsList{}}, {"shape", Ints{1, 1}}}),
            f32({1, 1}));
  EXPECT_EQ(error_of(OpKind::ExpandShape, {f32({6, 4})},
                     {{"reassociation", IntsList{{0, 1}, {2}}}, {"shape", Ints{2, 2, 4}}}),
            "expand_shape 'n': input dim 0 is 6, but result dims [[0, 1]] multiply to 4");
  EXPECT_EQ(error_of(OpKind::ExpandShape, {f32({6, 4})},
                     {{"reassociation", IntsList{{0, 2}, {1}}}, {"shape", Ints{2, 4, 3}}}),
            "expand_shape 'n': attribute 'reassociation' is [[0, 2], [1]], expected non-empty groups "
            "of consecutive result dims covering 0..2 in order");
  EXPECT_EQ(error_of(OpKind::ExpandShape, {f32({6, 4})}, {{"reassociation", IntsList{{0, 1}}}, {"shape", Ints{2, 3}}}),
            "expand_shape 'n': attribute 'reassociation' has 1 groups, input has rank 2 (one group per input dim)");
}

TEST(VerifierCollapseShape, Groups) {
  EXPECT_EQ(infer(OpKind::CollapseShape, {f32({2, 3, 4, 5})}, {{"reassociation", IntsList{{0}, {1, 2, 3}}}}),
            f32({2, 60}));
  EXPECT_EQ(infer(OpKind::CollapseShape, {f32({1, 1})}, {{"reassociation", IntsList{}}}), f32({}));
  EXPECT_EQ(error_of(OpKind::CollapseShape, {f32({2, 3, 4})}, {{"reassociation", IntsList{{0}, {1}}}}),
            "collapse_shape 'n': attribute 'reassociation' is [[0], [1]], expected non-empty groups of "
            "consecutive input dims covering 0..2 in order");
  EXPECT_EQ(error_of(OpKind::CollapseShape, {f32({2, 1})}, {{"reassociation", IntsList{}}}),
            "collapse_shape 'n': input dim 0 is 2, expected 1 when collapsing to a scalar");
}

TEST(VerifierReshape, InferredDim) {
  EXPECT_EQ(infer(OpKind::Reshape, {f32({2, 3, 4})}, {{"shape", Ints{4, -1}}}), f32({4, 6}));
  EXPECT_EQ(infer(OpKind::Reshape, {f32({2, 3})}, {{"shape", Ints{6}}}), f32({6}));
  EXPECT_EQ(infer(OpKind::Reshape, {f32({1})}, {{"shape", Ints{}}}), f32({}));
  EXPECT_EQ(error_of(OpKind::Reshape, {f32({2, 3})}, {{"shape", Ints{4, -1}}}),
            "reshape 'n': cannot infer attribute 'shape' entry 1: input has 6 elements, not divisible by 4");
  EXPECT_EQ(error_of(OpKind::Reshape, {f32({2, 3})}, {{"shape", Ints{-1, -1}}}),
            "reshape 'n': attribute 'shape' has -1 at entries 0 and 1, at most one is allowed");
  EXPECT_EQ(error_of(OpKind::Reshape, {f32({2, 3})}, {{"shape", Ints{0, 6}}}),
            "reshape 'n': attribute 'shape' 0x6 has 0 elements, input 2x3 has 6");
  EXPECT_EQ(error_of(OpKind::Reshape, {f32({2, 3})}, {{"shape", Ints{-2, 6}}}),
            "reshape 'n': attribute 'shape' entry 0 is -2, expected >= 0 or -1");
}

// 0 is a literal zero-size dim (ONNX allowzero = 1): zero-element tensors reshape freely.
TEST(VerifierReshape, ZeroSizeDims) {
  EXPECT_EQ(infer(OpKind::Reshape, {f32({0, 3, 4})}, {{"shape", Ints{3, 4, 0}}}), f32({3, 4, 0}));
  EXPECT_EQ(infer(OpKind::Reshape, {f32({2, 0})}, {{"shape", Ints{0}}}), f32({0}));
  EXPECT_EQ(error_of(OpKind::Reshape, {f32({0, 3})}, {{"shape", Ints{0, -1}}}),
            "reshape 'n': cannot infer attribute 'shape' entry 1: another entry is 0");
  EXPECT_EQ(error_of(OpKind::Reshape, {f32({2, 3})}, {{"shape", Ints{7}}}),
            "reshape 'n': attribute 'shape' 7 has 7 elements, input 2x3 has 6");
}

TEST(VerifierTranspose, Permutation) {
  EXPECT_EQ(infer(OpKind::Transpose, {f32({2, 3, 4})}, {{"perm", Ints{2, 0, 1}}}), f32({4, 2, 3}));
  EXPECT_EQ(error_of(OpKind::Transpose, {f32({2, 3, 4})}, {{"perm", Ints{0, 0, 1}}}),
            "transpose 'n': attribute 'perm' is [0, 0, 1], expected a permutation of 0..2");
  EXPECT_EQ(error_of(OpKind::Transpose, {f32({2, 3})}, {{"perm", Ints{1, 0, 2}}}),
            "transpose 'n': attribute 'perm' is [1, 0, 2], expected a permutation of 0..1");
}

TEST(VerifierPad, BeginsThenEnds) {
  EXPECT_EQ(infer(OpKind::Pad, {f32({2, 3})}, {{"pads", Ints{1, 0, 2, 4}}}), f32({5, 7}));
  EXPECT_EQ(error_of(OpKind::Pad, {f32({2, 3})}, {{"pads", Ints{1, 0}}}),
            "pad 'n': attribute 'pads' has 2 entries, expected 4 (begins then ends for each of the 2 input dims)");
  EXPECT_EQ(error_of(OpKind::Pad, {f32({2, 3})}, {{"pads", Ints{1, 0, -1, 0}}}),
            "pad 'n': attribute 'pads' entry 2 is -1, expected >= 0");
}

TEST(VerifierReverse, Axes) {
  EXPECT_EQ(infer(OpKind::Reverse, {f32({2, 3})}, {{"axes", Ints{-1, 0}}}), f32({2, 3}));
  EXPECT_EQ(error_of(OpKind::Reverse, {f32({2, 3})}, {{"axes", Ints{1, -1}}}),
            "reverse 'n': attribute 'axes' is [1, -1], axis 1 appears twice");
  EXPECT_EQ(error_of(OpKind::Reverse, {f32({2, 3})}, {{"axes", Ints{2}}}),
            "reverse 'n': attribute 'axes' entry 0 is 2, expected in [-2, 1] for rank 2");
}

TEST(VerifierSlice, OnnxSemantics) {
  // dim 10: [2:8:3] -> 2,5 (2); dim 6 with axes: [-1:-7:-2] -> 5,3,1 (3).
  EXPECT_EQ(infer(OpKind::Slice, {f32({10, 6})}, {{"starts", Ints{2, -1}}, {"ends", Ints{8, -7}},
                                                  {"axes", Ints{0, 1}}, {"steps", Ints{3, -2}}}),
            f32({2, 3}));
  // Clamping: starts beyond the end give 0; huge ends clamp to the dim; axes default 0..n-1.
  EXPECT_EQ(infer(OpKind::Slice, {f32({4, 5})}, {{"starts", Ints{7, 1}}, {"ends", Ints{9, INT64_MAX}}}),
            f32({0, 4}));
  // Negative step with INT64_MIN end runs to the beginning: [3::-1] of 5 -> 4 elements.
  EXPECT_EQ(infer(OpKind::Slice, {f32({5})}, {{"starts", Ints{3}}, {"ends", Ints{INT64_MIN}}, {"steps", Ints{-1}}}),
            f32({4}));
  EXPECT_EQ(infer(OpKind::Slice, {f32({3, 4})}, {{"starts", Ints{1}}, {"ends", Ints{3}}, {"axes", Ints{-1}}}),
            f32({3, 2}));
  EXPECT_EQ(error_of(OpKind::Slice, {f32({3})}, {{"starts", Ints{0}}, {"ends", Ints{3}}, {"steps", Ints{0}}}),
            "slice 'n': attribute 'steps' entry 0 is 0, expected non-zero");
  EXPECT_EQ(error_of(OpKind::Slice, {f32({3})}, {{"starts", Ints{0}}, {"ends", Ints{3, 1}}}),
            "slice 'n': attribute 'ends' has 2 entries, 'starts' has 1");
  EXPECT_EQ(error_of(OpKind::Slice, {f32({3, 3})}, {{"starts", Ints{0, 0}}, {"ends", Ints{1, 1}}, {"axes", Ints{0, -2}}}),
            "slice 'n': attribute 'axes' is [0, -2], axis 0 appears twice");
}

TEST(VerifierConcat, AlongAxis) {
  EXPECT_EQ(infer(OpKind::Concat, {f32({2, 3}), f32({2, 5}), f32({2, 0})}, {{"axis", int64_t(-1)}}),
            f32({2, 8}));
  EXPECT_EQ(error_of(OpKind::Concat, {f32({2, 3}), f32({3, 3})}, {{"axis", int64_t(1)}}),
            "concat 'n': operand 1 dim 0 is 3, operand 0 dim 0 is 2; only dim 1 (axis) may differ");
  EXPECT_EQ(error_of(OpKind::Concat, {f32({2, 3}), f32({3})}, {{"axis", int64_t(0)}}),
            "concat 'n': operand 1 has rank 1, operand 0 has rank 2; they must match");
  EXPECT_EQ(error_of(OpKind::Concat, {f32({2}), typed(DType::i32, {3})}, {{"axis", int64_t(0)}}),
            "concat 'n': operand 1 has element type i32, operand 0 has f32; they must match");
  EXPECT_EQ(error_of(OpKind::Concat, {f32({2})}, {{"axis", int64_t(1)}}),
            "concat 'n': axis is 1, expected in [-1, 0] for rank 1");
}

TEST(VerifierBroadcast, ToShape) {
  EXPECT_EQ(infer(OpKind::Broadcast, {f32({3, 1})}, {{"shape", Ints{2, 3, 4}}}), f32({2, 3, 4}));
  EXPECT_EQ(error_of(OpKind::Broadcast, {f32({3, 2})}, {{"shape", Ints{2, 3, 4}}}),
            "broadcast 'n': input dim 1 is 2, attribute 'shape' entry 2 is 4; expected them equal or the input dim 1");
  EXPECT_EQ(error_of(OpKind::Broadcast, {f32({3, 2})}, {{"shape", Ints{2}}}),
            "broadcast 'n': input has rank 2, attribute 'shape' [2] has rank 1; cannot broadcast to a lower rank");
}

}  // namespace
}  // namespace vkc::ir::test
