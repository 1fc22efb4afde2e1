// resize: hand-checkable cases of every coordinate mode, rounding rule and interpolation, and
// max_pool_with_indices: winners, ties, NaN and both storage orders.
#include <gtest/gtest.h>

#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

ir::AttrMap resize_attrs(Ints sizes, const std::string& mode, const std::string& coords) {
  return {{"sizes", sizes}, {"mode", mode}, {"coordinate_mode", coords}};
}

TEST(InterpreterResize, LinearAlignCornersUpsample) {
  // [[1, 2], [3, 4]] to 4x4, align_corners: source (y, x) = (y/3, x/3), so the value is
  // 1 + 2*y/3 + x/3 (bilinear is exact on a bilinear function).
  HostTensor y = run_op(OpKind::Resize, {make_f32({1, 1, 2, 2}, {1, 2, 3, 4})},
                        resize_attrs({1, 1, 4, 4}, "linear", "align_corners"));
  std::vector<double> expected;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) expected.push_back(1 + (2.0 * r + c) / 3.0);
  expect_values(y, expected);
}

TEST(InterpreterResize, LinearHalfPixelUpsampleClampsAtTheEdges) {
  // half_pixel, scale 2: source x = (i + 0.5)/2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> clamped to
  // the edge element outside [0, 1]: columns of row 0 are 1, 1.25, 1.75, 2.
  HostTensor y = run_op(OpKind::Resize, {make_f32({1, 1, 2, 2}, {1, 2, 3, 4})},
                        resize_attrs({1, 1, 4, 4}, "linear", "half_pixel"));
  expect_values(y, {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(InterpreterResize, LinearDownsampleWithAGivenScale) {
  // [[1,2,3,4],[5,6,7,8]] with scales 0.6 -> 1x2. Rows: (0 + 0.5)/0.6 - 0.5 = 1/3, so a third
  // of the way to row 1 (+4/3). Columns: 1/3 and (1 + 0.5)/0.6 - 0.5 = 2: values 1 + 1/3 and 3.
  ir::AttrMap a = resize_attrs({1, 1, 1, 2}, "linear", "half_pixel");
  a["scales"] = Floats{1, 1, 0.6, 0.6};
  HostTensor y = run_op(OpKind::Resize, {make_f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}, a);
  expect_values(y, {1 + 1.0 / 3 + 4.0 / 3, 3 + 4.0 / 3}, 1e-6);
  // align_corners with a given scale divides by in * scale - 1 (unrounded: 4 * 0.6 - 1 = 1.4),
  // as ONNX does: columns 0 and 3 / 1.4; rows: length 1.2, 0 * 1 / 0.2 = 0.
  a["coordinate_mode"] = std::string("align_corners");
  y = run_op(OpKind::Resize, {make_f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}, a);
  expect_values(y, {1, 1 + 3 / (4 * 0.6 - 1)}, 1e-6);
}

TEST(InterpreterResize, NearestTiesFollowTheRoundingMode) {
  // 2 -> 7, half_pixel: sources (i + 0.5)/3.5 - 0.5 = -0.36, -0.07, 0.21, 0.5, 0.79, 1.07, 1.36.
  // The tie 0.5 goes to 0 with round_prefer_floor and to 1 with round_prefer_ceil.
  HostTensor x = make_f32({2}, {10, 20});
  ir::AttrMap a = resize_attrs({7}, "nearest", "half_pixel");
  expect_values(run_op(OpKind::Resize, {x}, a), {10, 10, 10, 10, 20, 20, 20});
  a["nearest_mode"] = std::string("round_prefer_ceil");
  expect_values(run_op(OpKind::Resize, {x}, a), {10, 10, 10, 20, 20, 20, 20});
  // floor / ceil with asymmetric: sources i * 2/7 = 0, 0.29, .., 1.71.
  a["coordinate_mode"] = std::string("asymmetric");
  a["nearest_mode"] = std::string("floor");
  expect_values(run_op(OpKind::Resize, {x}, a), {10, 10, 10, 10, 20, 20, 20});
  a["nearest_mode"] = std::string("ceil");
  expect_values(run_op(OpKind::Resize, {x}, a), {10, 20, 20, 20, 20, 20, 20});
}

TEST(InterpreterResize, NearestCopiesIntegersExactly) {
  HostTensor x = ints(DType::i64, {1, 2}, {(int64_t(1) << 60) + 1, -7});
  ir::AttrMap a = resize_attrs({2, 4}, "nearest", "asymmetric");
  a["nearest_mode"] = std::string("floor");
  HostTensor y = run_op(OpKind::Resize, {x}, a);
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{(int64_t(1) << 60) + 1, (int64_t(1) << 60) + 1, -7, -7,
                                              (int64_t(1) << 60) + 1, (int64_t(1) << 60) + 1, -7, -7}));
}

TEST(InterpreterResize, CubicReproducesALinearRampAwayFromTheEdges) {
  // Keys' cubic with a = -0.5 reproduces linear functions exactly where no tap is clamped (with
  // other values of a only constants are reproduced).
  std::vector<float> ramp;
  for (int i = 0; i < 8; ++i) ramp.push_back(float(3 * i - 5));
  ir::AttrMap a = resize_attrs({16}, "cubic", "align_corners");
  a["cubic_coeff_a"] = -0.5;
  HostTensor y = run_op(OpKind::Resize, {make_f32({8}, ramp)}, a);
  for (int i = 0; i < 16; ++i) {
    double src = i * 7.0 / 15.0;
    if (src < 1 || src > 5) continue;  // taps floor(src)-1 .. floor(src)+2 must be inside
    EXPECT_NEAR(y.get_f64(i), 3 * src - 5, 1e-5) << "output " << i;
  }
}

TEST(InterpreterResize, CubicExcludeOutsideRenormalizes) {
  // A constant input stays constant everywhere: the weights sum to 1 with or without
  // exclude_outside (excluded taps are dropped and the rest renormalized).
  ir::AttrMap a = resize_attrs({1, 7}, "cubic", "half_pixel");
  for (bool exclude : {false, true}) {
    a["exclude_outside"] = exclude;
    expect_values(run_op(OpKind::Resize, {make_f32({1, 3}, {2.5, 2.5, 2.5})}, a),
                  std::vector<double>(7, 2.5), 1e-6);
  }
  // Output 0 of 3 -> 7: source 0.5/(7/3) - 0.5 = -0.2857, floor -1, r = 0.7143; taps -2, -1, 0, 1
  // at distances 1 + r, r, 1 - r, 2 - r. With exclude_outside taps -2 and -1 are dropped: the
  // value is (c(1-r) x0 + c(2-r) x1) / (c(1-r) + c(2-r)).
  a["exclude_outside"] = true;
  a["cubic_coeff_a"] = -0.5;
  const double A = -0.5, r = (0.5 / (7.0 / 3.0) - 0.5) + 1;
  double t0 = 1 - r, t1 = 2 - r;
  double w0 = ((A + 2) * t0 - (A + 3)) * t0 * t0 + 1;          // |t| <= 1
  double w1 = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;   // 1 < |t| < 2
  HostTensor y = run_op(OpKind::Resize, {make_f32({1, 3}, {1, 4, 9})}, a);
  EXPECT_NEAR(y.get_f64(0), (w0 * 1 + w1 * 4) / (w0 + w1), 1e-6);
}

TEST(InterpreterResize, CropAndResizeExtrapolates) {
  // roi [0.5, 1.5] of [0, 1, 2, 3] to 3 outputs: sources 0.5*3 + i * 1.0*3/2 = 1.5, 3, 4.5; the
  // last is outside [0, 3] and takes extrapolation_value.
  ir::AttrMap a = resize_attrs({3}, "linear", "tf_crop_and_resize");
  a["roi"] = Floats{0.5, 1.5};
  a["extrapolation_value"] = 10.0;
  expect_values(run_op(OpKind::Resize, {make_f32({4}, {0, 1, 2, 3})}, a), {1.5, 3, 10});
  a["mode"] = std::string("nearest");
  expect_values(run_op(OpKind::Resize, {make_f32({4}, {0, 1, 2, 3})}, a), {1, 3, 10});
}

TEST(InterpreterResize, OtherCoordinateModes) {
  HostTensor x = make_f32({4}, {0, 10, 20, 30});
  // pytorch_half_pixel to one output reads source 0 (half_pixel would read 1.5).
  expect_values(run_op(OpKind::Resize, {x}, resize_attrs({1}, "linear", "pytorch_half_pixel")), {0});
  expect_values(run_op(OpKind::Resize, {x}, resize_attrs({1}, "linear", "half_pixel")), {15});
  // tf_half_pixel_for_nn: (i + 0.5) / 0.5 = 1, 3 -> elements 1 and 3.
  expect_values(run_op(OpKind::Resize, {x}, resize_attrs({2}, "nearest", "tf_half_pixel_for_nn")), {10, 30});
  // half_pixel_symmetric with scale 0.6 (out 2, length 2.4): shift 2 * (1 - 2/2.4) = 1/3, then
  // (i + 0.5)/0.6 - 0.5: 0.6667, 2.3333.
  ir::AttrMap a = resize_attrs({2}, "linear", "half_pixel_symmetric");
  a["scales"] = Floats{0.6};
  double s = double(0.6), shift = 2 * (1 - 2 / (4 * s));
  expect_values(run_op(OpKind::Resize, {x}, a), {10 * (shift + 0.5 / s - 0.5), 10 * (shift + 1.5 / s - 0.5)}, 1e-6);
}

TEST(InterpreterResize, IdentityDimsAreCopied) {
  // Only W is resized (sources 0, 0.5, 1): row 0 never mixes with row 1 because identity dims
  // have one tap. Within row 1 every tap is multiplied, even a weight-0 one: inf * 0 is NaN
  // (source 0 reads taps 0, 1 with weights 1, 0; source 1 reads taps 1, 1 (clamped) with 1, 0).
  HostTensor x = make_f32({2, 1, 2}, {1, 3, 5, INFINITY});
  HostTensor y = run_op(OpKind::Resize, {x}, resize_attrs({2, 1, 3}, "linear", "align_corners"));
  expect_values(y, {1, 2, 3, NAN, INFINITY, NAN});
}

// A piece of a resize (attribute 'window', as the range split makes them): output columns [4, 7)
// of a 1x8 -> 1x19 upsample (half_pixel: source coordinates 1.39, 1.82, 2.24) from only the input
// columns their taps read (nearest 1..2, linear 1..3, cubic 0..4) equal those of the whole op.
TEST(InterpreterResize, WindowPieceEqualsTheWholeOpsColumns) {
  const std::vector<float> row{3, -1, 4, 1, -5, 9, 2, -6};
  struct Case {
    const char* mode;
    int64_t first, count;
  };
  for (const Case& c : {Case{"nearest", 1, 2}, Case{"linear", 1, 3}, Case{"cubic", 0, 5}}) {
    SCOPED_TRACE(c.mode);
    ir::AttrMap a = resize_attrs({1, 19}, c.mode, "half_pixel");
    std::vector<double> whole = values_of(run_op(OpKind::Resize, {make_f32({1, 8}, row)}, a));
    a["window"] = Ints{0, 4, 1, 3, 0, c.first, 1, 8};
    HostTensor in = make_f32({1, c.count}, std::vector<float>(row.begin() + c.first, row.begin() + c.first + c.count));
    std::vector<double> piece = values_of(run_op(OpKind::Resize, {in}, a));
    ASSERT_EQ(piece.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(piece[i], whole[4 + i]) << i;
  }
}

TEST(InterpreterMaxPoolWithIndices, WinnersTiesAndStorageOrder) {
  // 3x3 input, kernel 2, stride 1 -> 2x2 windows. x =
  //   1 5 5
  //   2 0 9
  //   7 7 3
  // window (0,0): {1,5,2,0} max 5 at (0,1); (0,1): {5,5,0,9} max 9 at (1,2);
  // (1,0): {2,0,7,7} ties: first 7 at (2,0); (1,1): {0,9,7,3} max 9 at (1,2).
  HostTensor x = make_f32({1, 1, 3, 3}, {1, 5, 5, 2, 0, 9, 7, 7, 3});
  ir::AttrMap a{{"kernel", Ints{2, 2}}};
  std::vector<HostTensor> r = run_op_all(OpKind::MaxPoolWithIndices, {x}, a);
  expect_values(r[0], {5, 9, 7, 9});
  EXPECT_EQ(r[1].dtype(), DType::i64);
  EXPECT_EQ(ints_of(r[1]), (std::vector<int64_t>{1, 5, 6, 5}));  // row-major h * 3 + w
  a["storage_order"] = int64_t(1);
  r = run_op_all(OpKind::MaxPoolWithIndices, {x}, a);
  EXPECT_EQ(ints_of(r[1]), (std::vector<int64_t>{3, 7, 2, 7}));  // column-major h + w * 3
}

TEST(InterpreterMaxPoolWithIndices, BatchChannelOffsetsPaddingAndNaN) {
  // Two channels of 1x3; kernel 2, pads 1: windows (-1,0) (0,1) (1,2) (2,3). Channel 1 has a NaN
  // at 1, which wins both windows that see it. Indices add c * 3.
  HostTensor x = make_f32({1, 2, 3}, {-4, -6, -5, 1, NAN, 2});
  std::vector<HostTensor> r = run_op_all(OpKind::MaxPoolWithIndices, {x}, {{"kernel", Ints{2}}, {"pads", Ints{1, 1}}});
  expect_values(r[0], {-4, -4, -5, -5, 1, NAN, NAN, 2});
  EXPECT_EQ(ints_of(r[1]), (std::vector<int64_t>{0, 0, 2, 2, 3, 4, 4, 5}));
}

}  // namespace
}  // namespace vkc::test
