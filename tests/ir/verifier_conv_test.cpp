// Conv, conv_transpose, im2col and pooling shape inference, and the conv_geometry helpers.
#include <gtest/gtest.h>

#include "ir/conv_geometry.h"
#include "tests/ir/verifier_test_helpers.h"

namespace vkc::ir::test {
namespace {

// Regression: a 3-D conv with an asymmetric 9x9x1 kernel and pads only on D and H.
// Out D = 32 + 4 + 4 - 9 + 1 = 32, H likewise, W = 32 + 0 + 0 - 1 + 1 = 32.
TEST(VerifierConv, Conv3dRegressionThroughCppApi) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 1, 32, 32, 32}));
  Value* w = g.add_input("w", f32({16, 1, 9, 9, 1}));
  Value* b = g.add_input("b", f32({16}));
  Op* op = g.add_op(OpKind::Conv, {x, w, b}, {{"pads", Ints{4, 4, 0, 4, 4, 0}}}, "conv3d_1");
  EXPECT_EQ(op->result()->type, f32({1, 16, 32, 32, 32}));
  g.add_output(op->result());
  EXPECT_NO_THROW(verify_graph(g));
}

// 1-D, channels-last: input NWC [1,3,2] (N=1, W=3, C=2), filter CWF [2,2,2] (C=2, k=2, F=2),
// output NWC: W = 3 - 2 + 1 = 2, F = 2 -> [1, 2, 2].
TEST(VerifierConv, OneDimensionalLayouts) {
  TensorType t = infer(OpKind::Conv, {f32({1, 3, 2}), f32({2, 2, 2})},
                       {{"input_layout", std::string("NWC")},
                        {"filter_layout", std::string("CWF")},
                        {"output_layout", std::string("NWC")}});
  EXPECT_EQ(t, f32({1, 2, 2}));
}

TEST(VerifierConv, WrongFilterShape3dMessage) {
  Graph g;
  g.source = "model.onnx";
  Value* x = g.add_input("x", f32({1, 1, 8, 8, 8}));
  Value* w = g.add_input("w", f32({4, 2, 3, 3, 3}));
  try {
    g.add_op(OpKind::Conv, {x, w}, {}, "conv3d_1", Location{"model.onnx", 0, 0});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "conv 'conv3d_1' (model.onnx): filter dim 1 (C/groups) is 2, input channels/groups is 1");
  }
}

TEST(VerifierConv, FilterChannelDimIsPhysicalPosition) {
  // Filter layout "HWCF": C sits at physical dim 2.
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 4, 5, 5}), f32({3, 3, 3, 8})},
                     {{"filter_layout", std::string("HWCF")}}),
            "conv 'n': filter dim 2 (C/groups) is 3, input channels/groups is 4");
}

TEST(VerifierConv, StridesDilationsPadsGroups) {
  // H: (10 + 1 + 2 - 2*(3-1) - 1) / 2 + 1 = 8/2 + 1 = 5; W: (7 + 0 + 0 - 1*(2-1) - 1)/3 + 1 = 5/3 + 1 = 2.
  TensorType t = infer(OpKind::Conv, {f32({2, 6, 10, 7}), f32({9, 2, 3, 2}), f32({9})},
                       {{"strides", Ints{2, 3}}, {"dilations", Ints{2, 1}},
                        {"pads", Ints{1, 0, 2, 0}}, {"groups", int64_t(3)}});
  EXPECT_EQ(t, f32({2, 9, 5, 2}));
}

TEST(VerifierConv, NhwcOutputLayout) {
  TensorType t = infer(OpKind::Conv, {f32({1, 8, 8, 3}), f32({16, 3, 3, 3})},
                       {{"input_layout", std::string("NHWC")}, {"output_layout", std::string("NHWC")}});
  EXPECT_EQ(t, f32({1, 6, 6, 16}));
}

TEST(VerifierConv, Errors) {
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 5, 3})}),
            "conv 'n': output spatial dim 0 (H) would be empty: input 4 + pads 0+0 is smaller "
            "than the dilated kernel extent 5");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3}), f32({4})}),
            "conv 'n': bias has shape 4, expected [8] (output channels)");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 6, 4, 4}), f32({8, 3, 3, 3})}, {{"groups", int64_t(4)}}),
            "conv 'n': input dim 1 (C) is 6, not divisible by groups 4");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 6, 4, 4}), f32({8, 3, 3, 3})}, {{"groups", int64_t(0)}}),
            "conv 'n': attribute 'groups' is 0, expected >= 1");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 6, 4, 4}), f32({7, 2, 3, 3})}, {{"groups", int64_t(3)}}),
            "conv 'n': filter dim 0 (F) is 7, not divisible by groups 3");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})}, {{"strides", Ints{1}}}),
            "conv 'n': attribute 'strides' has 1 entries, expected 2 (one per spatial dim)");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})}, {{"dilations", Ints{1, 0}}}),
            "conv 'n': attribute 'dilations' entry 1 (W) is 0, expected >= 1");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})}, {{"pads", Ints{0, 0, -1, 0}}}),
            "conv 'n': attribute 'pads' entry 2 is -1, expected >= 0");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})}, {{"pads", Ints{1, 1}}}),
            "conv 'n': attribute 'pads' has 2 entries, expected 4 (begins then ends per spatial dim)");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})},
                     {{"input_layout", std::string("NCHH")}}),
            "conv 'n': input_layout is 'NCHH', expected a permutation of 'NCHW'");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3, 3})},
                     {{"output_layout", std::string("NFHW")}}),
            "conv 'n': output_layout is 'NFHW', expected a permutation of 'NCHW'");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3}), f32({8, 3})}),
            "conv 'n': input has rank 2, expected 3, 4 or 5 (N, C and 1 to 3 spatial dims)");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), f32({8, 3, 3})}),
            "conv 'n': filter has rank 3, expected 4 (same as input)");
  EXPECT_EQ(error_of(OpKind::Conv, {typed(DType::i32, {1, 3, 4, 4}), typed(DType::i32, {8, 3, 3, 3})}),
            "conv 'n': input has element type i32, expected a float type (f32 or f16)");
  EXPECT_EQ(error_of(OpKind::Conv, {f32({1, 3, 4, 4}), typed(DType::f16, {8, 3, 3, 3})}),
            "conv 'n': filter has element type f16, input has f32; they must match");
}

// ONNX ConvTranspose: out = stride*(in-1) + output_padding + dil*(k-1) + 1 - pads.
TEST(VerifierConvTranspose, PadsAndGroups) {
  // filter CF.. [C_in=4, C_out/groups=3, 3, 2], groups 2 -> 6 output channels.
  // H: 2*(5-1) + 1 + 1*(3-1) + 1 - 1 - 1 = 10; W: 1*(4-1) + 0 + 2*(2-1) + 1 - 0 - 0 = 6.
  TensorType t = infer(OpKind::ConvTranspose, {f32({1, 4, 5, 4}), f32({4, 3, 3, 2}), f32({6})},
                       {{"strides", Ints{2, 1}}, {"dilations", Ints{1, 2}}, {"pads", Ints{1, 0, 1, 0}},
                        {"output_padding", Ints{1, 0}}, {"groups", int64_t(2)}});
  EXPECT_EQ(t, f32({1, 6, 10, 6}));
}

TEST(VerifierConvTranspose, OutputShapeDerivesPads) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 2, 3, 3}));
  Value* w = g.add_input("w", f32({2, 1, 3, 3}));
  Op* op = g.add_op(OpKind::ConvTranspose, {x, w},
                    {{"strides", Ints{2, 2}}, {"output_shape", Ints{6, 5}}}, "ct");
  EXPECT_EQ(op->result()->type, f32({1, 1, 6, 5}));
  // Unpadded size 2*(3-1) + 3 = 7: total pad 1 for H (begin gets the odd unit), 2 for W.
  ConvGeometry geo = conv_geometry(*op);
  EXPECT_EQ(geo.pad_begin, (Ints{1, 1}));
  EXPECT_EQ(geo.pad_end, (Ints{0, 1}));
  EXPECT_EQ(geo.out_channels, 1);
  EXPECT_EQ(error_of(OpKind::ConvTranspose, {f32({1, 2, 3, 3}), f32({2, 1, 3, 3})},
                     {{"strides", Ints{2, 2}}, {"output_shape", Ints{8, 5}}}),
            "conv_transpose 'n': attribute 'output_shape' entry 0 (H) is 8, expected 1 to 7");
}

TEST(VerifierConvTranspose, Errors) {
  EXPECT_EQ(error_of(OpKind::ConvTranspose, {f32({1, 4, 5}), f32({3, 2, 3})}),
            "conv_transpose 'n': filter dim 0 (C) is 3, input channels is 4");
  EXPECT_EQ(error_of(OpKind::ConvTranspose, {f32({1, 4, 5}), f32({4, 2, 3})},
                     {{"strides", Ints{2}}, {"output_padding", Ints{2}}}),
            "conv_transpose 'n': attribute 'output_padding' entry 0 (W) is 2, expected less than "
            "stride 2 or dilation 1");
  EXPECT_EQ(error_of(OpKind::ConvTranspose, {f32({1, 4, 1}), f32({4, 2, 1})}, {{"pads", Ints{1, 0}}}),
            "conv_transpose 'n': output spatial dim 0 (W) is 0: pads 1+0 exceed the unpadded output size 1");
}

TEST(VerifierIm2Col, GroupedAndUngrouped) {
  // P = 3*3 (H: 5-3+1, W: 4-2+1), K = 6 * 3 * 2 = 36.
  EXPECT_EQ(infer(OpKind::Im2Col, {f32({2, 6, 5, 4})}, {{"kernel", Ints{3, 2}}}), f32({2, 9, 36}));
  // groups 3: [N, G, P, K/G] with K/G = 2 * 3 * 2.
  EXPECT_EQ(infer(OpKind::Im2Col, {f32({2, 6, 5, 4})}, {{"kernel", Ints{3, 2}}, {"groups", int64_t(3)}}),
            f32({2, 3, 9, 12}));
  EXPECT_EQ(error_of(OpKind::Im2Col, {f32({2, 6, 5, 4})}),
            "im2col 'n': missing required attribute 'kernel'");
  EXPECT_EQ(error_of(OpKind::Im2Col, {f32({2, 6, 5, 4})}, {{"kernel", Ints{3, 0}}}),
            "im2col 'n': attribute 'kernel' entry 1 (W) is 0, expected >= 1");
}

TEST(VerifierIm2Col, ColumnOrderFollowsFilterLayout) {
  Graph g;
  Value* x = g.add_input("x", f32({1, 4, 6, 6}));
  Op* op = g.add_op(OpKind::Im2Col, {x},
                    {{"kernel", Ints{3, 2}}, {"groups", int64_t(2)}, {"filter_layout", std::string("HWCF")}});
  Im2ColColumns cols = im2col_columns(conv_geometry(*op));
  EXPECT_EQ(cols.order, (std::vector<char>{'H', 'W', 'C'}));
  EXPECT_EQ(cols.extents, (Ints{3, 2, 2}));
  EXPECT_EQ(cols.k, 12);
}

TEST(VerifierConvGeometry, ParseLayoutAndSpatialLetters) {
  EXPECT_EQ(parse_layout("NHWC", "NCHW", "x"), (std::vector<int>{0, 3, 1, 2}));
  EXPECT_EQ(parse_layout("CWF", "FCW", "x"), (std::vector<int>{2, 0, 1}));
  EXPECT_THROW(parse_layout("NCW", "NCHW", "x"), Error);
  EXPECT_EQ(spatial_letters(1), "W");
  EXPECT_EQ(spatial_letters(3), "DHW");
}

TEST(VerifierPool, KernelStridesPadsCeil) {
  // floor: (7 + 1 + 1 - 3) / 2 + 1 = 4.
  EXPECT_EQ(infer(OpKind::MaxPool, {f32({1, 2, 7, 7})},
                  {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
            f32({1, 2, 4, 4}));
  // ceil: in 6, k 3, s 2 -> ceil(3/2) + 1 = 3; last window starts at 4 < 6: kept.
  EXPECT_EQ(infer(OpKind::AvgPool, {f32({1, 2, 6})},
                  {{"kernel", Ints{3}}, {"strides", Ints{2}}, {"ceil_mode", true}}),
            f32({1, 2, 3}));
  // ceil with the ONNX rule: in 4, k 2, s 2, pads 0+1: ceil(3/2) + 1 = 3, but the third window
  // would start at 4 >= in 4 + pad_begin 0 (entirely in the end padding), so it is dropped: 2.
  EXPECT_EQ(infer(OpKind::MaxPool, {f32({1, 1, 4})},
                  {{"kernel", Ints{2}}, {"strides", Ints{2}}, {"pads", Ints{0, 1}}, {"ceil_mode", true}}),
            f32({1, 1, 2}));
}

TEST(VerifierPool, GlobalAndLayout) {
  EXPECT_EQ(infer(OpKind::AvgPool, {f32({2, 5, 7, 3})}, {{"global", true}, {"layout", std::string("NHWC")}}),
            f32({2, 1, 1, 3}));
  EXPECT_EQ(infer(OpKind::MaxPool, {f32({1, 4, 6, 6})},
                  {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"layout", std::string("NCHW")}}),
            f32({1, 4, 3, 3}));
  EXPECT_EQ(error_of(OpKind::MaxPool, {f32({1, 4, 6, 6})}),
            "max_pool 'n': missing attribute 'kernel' (required unless global is true)");
  EXPECT_EQ(error_of(OpKind::MaxPool, {f32({1, 4, 6, 6})}, {{"global", true}, {"kernel", Ints{2, 2}}}),
            "max_pool 'n': attribute 'kernel' must not be given when global is true");
  EXPECT_EQ(error_of(OpKind::AvgPool, {f32({1, 4, 6, 6})}, {{"kernel", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}}),
            "avg_pool 'n': pads for spatial dim 0 (H) are 2+0, each must be smaller than kernel 2");
  EXPECT_EQ(error_of(OpKind::AvgPool, {typed(DType::i8, {1, 4, 6, 6})}, {{"kernel", Ints{2, 2}}}),
            "avg_pool 'n': operand 0 has element type i8, expected a float type (f32 or f16)");
}

}  // namespace
}  // namespace vkc::ir::test

namespace vkc::ir {
namespace {

TEST(VerifierConv, LayoutsAsPermutationsEqualLetterStrings) {
  // "0,2,3,1" over the canonical N,C,H,W is NHWC; "2,3,1,0" over F,C,H,W is HWCF.
  auto infer = [](const std::string& in_layout, const std::string& filter_layout) {
    Graph g;
    Value* x = g.add_input("x", {DType::f32, {1, 5, 6, 3}});
    Value* w = g.add_input("w", {DType::f32, {3, 3, 3, 4}});
    Op* op = g.add_op(OpKind::Conv, {x, w},
                      {{"input_layout", in_layout}, {"filter_layout", filter_layout},
                       {"output_layout", in_layout}});
    return std::make_pair(op->result()->type.shape, conv_geometry(*op).input_layout);
  };
  auto letters = infer("NHWC", "HWCF");
  auto perm = infer("0,2,3,1", "2,3,1,0");
  EXPECT_EQ(perm.first, (Shape{1, 3, 4, 4}));
  EXPECT_EQ(perm, letters);
  EXPECT_EQ(perm.second, "NHWC");
  Graph g;
  Value* x = g.add_input("x", {DType::f32, {1, 5, 6, 3}});
  Value* w = g.add_input("w", {DType::f32, {3, 3, 3, 4}});
  try {
    g.add_op(OpKind::Conv, {x, w}, {{"input_layout", std::string("0,2,9,1")}}, "c");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "conv 'c': input_layout is '0,2,9,1', expected a permutation of 0..3 or of the letters 'NCHW'");
  }
}

}  // namespace
}  // namespace vkc::ir
