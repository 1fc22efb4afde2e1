// HostTensor and shape helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/error.h"
#include "support/tensor.h"

namespace vkc {
namespace {

TEST(Tensor, ShapeHelpers) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 0, 3}), 0);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_str({}), "scalar");
  EXPECT_EQ(shape_str({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(shape_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_THROW(shape_numel({-1}), Error);
  EXPECT_THROW(shape_numel({int64_t(1) << 40, int64_t(1) << 40}), Error);
}

TEST(Tensor, ConstructionAndSizes) {
  HostTensor t(DType::f16, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.size_bytes(), 12u);
  EXPECT_EQ(t.rank(), 2);
  HostTensor empty(DType::i64, {0, 5});
  EXPECT_EQ(empty.size_bytes(), 0u);
  HostTensor scalar;
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.size_bytes(), 4u);
}

TEST(Tensor, SetAndGetConvert) {
  HostTensor i8(DType::i8, {3});
  i8.set_f64(0, 300.0);
  i8.set_f64(1, -2.9);
  i8.set_f64(2, std::nan(""));
  EXPECT_EQ(i8.get_i64(0), 127);
  EXPECT_EQ(i8.get_i64(1), -2);
  EXPECT_EQ(i8.get_i64(2), 0);
  HostTensor h(DType::f16, {1});
  h.set_f64(0, 0.1);
  EXPECT_NEAR(h.get_f64(0), 0.1, 1e-4);
  HostTensor b(DType::boolean, {2});
  b.set_f64(0, 0.5);
  EXPECT_EQ(b.get_i64(0), 1);
  EXPECT_EQ(b.get_i64(1), 0);
  HostTensor i64(DType::i64, {1});
  i64.set_i64(0, (int64_t(1) << 62) + 1);
  EXPECT_EQ(i64.get_i64(0), (int64_t(1) << 62) + 1);
}

TEST(Tensor, PoisonIsRecognizable) {
  HostTensor f(DType::f32, {4});
  f.poison();
  for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(f.get_f64(i)));
  HostTensor h(DType::f16, {2});
  h.poison();
  EXPECT_TRUE(std::isnan(h.get_f64(1)));
  HostTensor i(DType::i32, {2});
  i.poison();
  EXPECT_EQ(uint32_t(i.get_i64(0)), 0xA5A5A5A5u);
}

TEST(Tensor, ReshapeKeepsBytes) {
  HostTensor t = make_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor r = t.reshaped({3, 2});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.bytes(), t.bytes());
  EXPECT_THROW(t.reshaped({4}), Error);
}

}  // namespace
}  // namespace vkc
