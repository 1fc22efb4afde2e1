// Shape rules and one-line errors of resize and max_pool_with_indices.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

TEST(VerifierResize, ResultTakesTheSizes) {
  EXPECT_EQ(infer(OpKind::Resize, {f32({1, 3, 4, 5})}, {{"sizes", Ints{1, 3, 7, 2}}}), f32({1, 3, 7, 2}));
  // Nearest copies, so integer tensors resize too.
  EXPECT_EQ(infer(OpKind::Resize, {typed(DType::i64, {3})}, {{"sizes", Ints{6}}}), typed(DType::i64, {6}));
}

TEST(VerifierResize, BadAttributesNameTheAttributeAndDim) {
  const std::vector<TensorType> x{f32({1, 2, 4})};
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2}}}),
            "resize 'n': attribute 'sizes' has 2 entries, expected 3 (one per dim of input tensor<1x2x4xf32>)");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 0}}}),
            "resize 'n': attribute 'sizes' entry 2 is 0, expected >= 1");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"scales", Floats{1, 1, -2}}}),
            "resize 'n': attribute 'scales' entry 2 is -2, expected > 0");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"scales", Floats{1, 2}}}),
            "resize 'n': attribute 'scales' has 2 entries, expected 3 (one per input dim)");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"scales", Floats{1, 1, INFINITY}}}),
            "resize 'n': attribute 'scales' entry 2 is inf, expected a finite value");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"mode", std::string("area")}}),
            "resize 'n': attribute 'mode' is 'area', expected one of nearest, linear, cubic");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"coordinate_mode", std::string("corners")}}),
            "resize 'n': attribute 'coordinate_mode' is 'corners', expected one of half_pixel, "
            "half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
            "tf_half_pixel_for_nn, tf_crop_and_resize");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"nearest_mode", std::string("round")}}),
            "resize 'n': attribute 'nearest_mode' is 'round', expected one of round_prefer_floor, "
            "round_prefer_ceil, floor, ceil");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, 8}}, {"roi", Floats{0, 0, 0, 1, 1, 1}}}),
            "resize 'n': attribute 'roi' is only used by coordinate_mode 'tf_crop_and_resize'");
  EXPECT_EQ(error_of(OpKind::Resize, x,
                     {{"sizes", Ints{1, 2, 8}}, {"roi", Floats{0, 1}},
                      {"coordinate_mode", std::string("tf_crop_and_resize")}}),
            "resize 'n': attribute 'roi' has 2 entries, expected 6 (starts then ends, one per input dim)");
  EXPECT_EQ(error_of(OpKind::Resize, {f32({2, 0})}, {{"sizes", Ints{2, 3}}}),
            "resize 'n': input dim 1 is 0, resize needs at least one element to sample");
  EXPECT_EQ(error_of(OpKind::Resize, {f32({})}, {{"sizes", Ints{}}}),
            "resize 'n': input is a scalar (tensor<f32>), expected rank >= 1");
  EXPECT_EQ(error_of(OpKind::Resize, {typed(DType::i32, {4})}, {{"sizes", Ints{8}}, {"mode", std::string("linear")}}),
            "resize 'n': input has element type i32, expected a float type (f32 or f16) for linear and cubic modes");
  EXPECT_EQ(error_of(OpKind::Resize, x, {{"sizes", Ints{1, 2, int64_t(1) << 62}}}),
            "resize 'n': result 0 shape 1x2x4611686018427387904 has too many elements");
}

// A piece of a larger resize (attribute 'window': output starts, extents, input starts, whole
// input dims): its result is its window of the output, and it must hold every tap it reads.
TEST(VerifierResize, WindowPieces) {
  EXPECT_EQ(infer(OpKind::Resize, {f32({2, 3})}, {{"sizes", Ints{4, 12}}, {"window", Ints{1, 4, 1, 5, 0, 2, 4, 6}}}),
            f32({1, 5}));
  EXPECT_EQ(error_of(OpKind::Resize, {f32({2, 3})}, {{"sizes", Ints{4, 12}}, {"window", Ints{1, 4, 1, 5}}}),
            "resize 'n': attribute 'window' has 4 entries, expected 8 (output starts, output extents, input starts, "
            "whole input dims: one per dim of input tensor<2x3xf32>)");
  EXPECT_EQ(error_of(OpKind::Resize, {f32({2, 3})}, {{"sizes", Ints{4, 12}}, {"window", Ints{1, 4, 1, 9, 0, 2, 4, 6}}}),
            "resize 'n': attribute 'window': output dim 1 is indices [4, 13) of 'sizes' entry 12, expected a non-empty "
            "range within it");
  EXPECT_EQ(error_of(OpKind::Resize, {f32({2, 3})}, {{"sizes", Ints{4, 12}}, {"window", Ints{1, 4, 1, 5, 0, 4, 4, 6}}}),
            "resize 'n': attribute 'window': input dim 1 holds indices [4, 7) of a whole input of 6, which they must "
            "lie within");
  // Nearest, half_pixel, 6 -> 12: output columns [4, 9) read input columns [2, 5), not [3, 6).
  EXPECT_EQ(error_of(OpKind::Resize, {f32({2, 3})}, {{"sizes", Ints{4, 12}}, {"window", Ints{1, 4, 1, 5, 0, 3, 4, 6}}}),
            "resize 'n': attribute 'window': output indices [4, 9) of dim 1 read input indices [2, 5), outside the "
            "operand's [3, 6)");
}

TEST(VerifierMaxPoolWithIndices, ValuesAndI64Indices) {
  std::vector<TensorType> r = infer_all(OpKind::MaxPoolWithIndices, {f32({1, 2, 5, 5})},
                                        {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], f32({1, 2, 2, 2}));
  EXPECT_EQ(r[1], typed(DType::i64, {1, 2, 2, 2}));
  EXPECT_EQ(error_of(OpKind::MaxPoolWithIndices, {f32({1, 2, 5, 5})},
                     {{"kernel", Ints{2, 2}}, {"storage_order", int64_t(2)}}),
            "max_pool_with_indices 'n': attribute 'storage_order' is 2, expected 0 (row major) or 1 (column major)");
  EXPECT_EQ(error_of(OpKind::MaxPoolWithIndices, {f32({1, 2, 5, 5})}, {{"kernel", Ints{2}}}),
            "max_pool_with_indices 'n': attribute 'kernel' has 1 entries, expected 2 (one per spatial dim)");
}

}  // namespace
}  // namespace vkc::ir::test
