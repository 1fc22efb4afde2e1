// max_pool and avg_pool: windows, padding, ceil_mode, count_include_pad, global, layouts.
#include <gtest/gtest.h>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

TEST(InterpreterPool, MaxPool2x2Stride2) {
  // x[i][j] = 4i + j; windows pick the bottom-right element: 5, 7, 13, 15.
  std::vector<float> xs(16);
  for (int i = 0; i < 16; ++i) xs[size_t(i)] = float(i);
  HostTensor y = run_op(OpKind::MaxPool, {make_f32({1, 1, 4, 4}, xs)},
                        {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_values(y, {5, 7, 13, 15});
}

TEST(InterpreterPool, MaxPoolPaddingNeverWins) {
  // All values negative: a zero-valued padding would win; padding is -inf, so it never does.
  //   windows (-1,0), (0,1), (1,2): [-1, -1, -2]
  HostTensor y = run_op(OpKind::MaxPool, {make_f32({1, 1, 2}, {-1, -2})},
                        {{"kernel", Ints{2}}, {"pads", Ints{1, 1}}});
  expect_values(y, {-1, -1, -2});
}

TEST(InterpreterPool, MaxPoolDilationAndNaN) {
  // kernel 2 dilation 2 reads (i, i+2): x = [1, 5, 2, NaN, 3] -> [max(1,2), max(5,NaN), max(2,3)]
  HostTensor y = run_op(OpKind::MaxPool, {make_f32({1, 1, 5}, {1, 5, 2, NAN, 3})},
                        {{"kernel", Ints{2}}, {"dilations", Ints{2}}});
  expect_values(y, {2, NAN, 3});
}

TEST(InterpreterPool, AvgPoolCountIncludePad) {
  // x = [1,2,3,4], kernel 3, pads 1: windows (-1..1) (0..2) (1..3) (2..4).
  //   exclude pad: 3/2, 6/3, 9/3, 7/2      include pad: 3/3, 6/3, 9/3, 7/3
  HostTensor x = make_f32({1, 1, 4}, {1, 2, 3, 4});
  ir::AttrMap attrs{{"kernel", Ints{3}}, {"pads", Ints{1, 1}}};
  expect_values(run_op(OpKind::AvgPool, {x}, attrs), {1.5, 2, 3, 3.5});
  attrs["count_include_pad"] = true;
  expect_values(run_op(OpKind::AvgPool, {x}, attrs), {1, 2, 3, 7.0 / 3.0});
}

TEST(InterpreterPool, CeilModeWindowPastPaddedEnd) {
  // x = [1..6], kernel 3, stride 2, pads 1: padded range [-1, 7). floor: (8-3)/2+1 = 3 outputs;
  // ceil: 4 (the last starts at 5 < 6 + 1). Windows: (-1,0,1) (1,2,3) (3,4,5) (5,6,7):
  //   the last has 5 in the input, 6 in the padding and 7 past the padded end (never counted).
  //   exclude pad: 3/2, 9/3, 15/3, 6/1     include pad: 3/3, 9/3, 15/3, 6/2
  HostTensor x = make_f32({1, 1, 6}, {1, 2, 3, 4, 5, 6});
  ir::AttrMap attrs{{"kernel", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}};
  EXPECT_EQ(run_op(OpKind::AvgPool, {x}, attrs).shape(), (Shape{1, 1, 3}));
  attrs["ceil_mode"] = true;
  HostTensor y = run_op(OpKind::AvgPool, {x}, attrs);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4}));
  expect_values(y, {1.5, 3, 5, 6});
  attrs["count_include_pad"] = true;
  expect_values(run_op(OpKind::AvgPool, {x}, attrs), {1, 3, 5, 3});
  expect_values(run_op(OpKind::MaxPool, {x}, attrs), {2, 4, 6, 6});
}

TEST(InterpreterPool, AvgPool2dStrided) {
  // 3x3 x = 1..9, kernel 2, stride 1: means of each 2x2 block: 3, 4, 6, 7
  HostTensor y = run_op(OpKind::AvgPool, {make_f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                        {{"kernel", Ints{2, 2}}});
  expect_values(y, {3, 4, 6, 7});
}

TEST(InterpreterPool, GlobalPoolsNhwc) {
  // NHWC [1, 2, 2, 2]: channel 0 = [1, 3, 5, 7], channel 1 = [2, 4, 6, 8].
  HostTensor x = make_f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  ir::AttrMap attrs{{"global", true}, {"layout", std::string("NHWC")}};
  HostTensor avg = run_op(OpKind::AvgPool, {x}, attrs);
  EXPECT_EQ(avg.shape(), (Shape{1, 1, 1, 2}));
  expect_values(avg, {4, 5});
  expect_values(run_op(OpKind::MaxPool, {x}, attrs), {7, 8});
}

}  // namespace
}  // namespace vkc::test
