// conv, conv_transpose and im2col against hand-computed values and an independent naive loop.
#include <gtest/gtest.h>

#include <random>

#include "common/test_util.h"
#include "ir/interpreter_test_helpers.h"

namespace vkc::test {
namespace {

using ir::OpKind;
using Ints = std::vector<int64_t>;

HostTensor x3x3() { return make_f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

TEST(InterpreterConv, Conv2dValidWithBias) {
  // out[i][j] = 1 + x[i][j]*1 + x[i][j+1]*2 + x[i+1][j]*3 + x[i+1][j+1]*4
  //   (0,0): 1 + 1 + 4 + 12 + 20 = 38     (0,1): 1 + 2 + 6 + 15 + 24 = 48
  //   (1,0): 1 + 4 + 10 + 21 + 32 = 68    (1,1): 1 + 5 + 12 + 24 + 36 = 78
  HostTensor y = run_op(OpKind::Conv, {x3x3(), make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_f32({1}, {1})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_values(y, {38, 48, 68, 78});
}

TEST(InterpreterConv, Conv2dPaddingAndStride) {
  // 3x3 ones kernel, pads 1, stride 2: windows centred on (0,0), (0,2), (2,0), (2,2); padding is 0.
  //   (0,0): 1+2+4+5 = 12   (0,1): 2+3+5+6 = 16   (1,0): 4+5+7+8 = 24   (1,1): 5+6+8+9 = 28
  HostTensor w = make_f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  HostTensor y = run_op(OpKind::Conv, {x3x3(), w}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_values(y, {12, 16, 24, 28});
}

TEST(InterpreterConv, Conv2dDilation) {
  // x[i][j] = 4i + j on 4x4; kernel [[1,2],[3,4]] dilated by 2 reads x[i][j], x[i][j+2],
  // x[i+2][j], x[i+2][j+2]: 1*v + 2*(v+2) + 3*(v+8) + 4*(v+10) = 10v + 68 with v = 4i + j.
  std::vector<float> xs(16);
  for (int i = 0; i < 16; ++i) xs[size_t(i)] = float(i);
  HostTensor y = run_op(OpKind::Conv, {make_f32({1, 1, 4, 4}, xs), make_f32({1, 1, 2, 2}, {1, 2, 3, 4})},
                        {{"dilations", Ints{2, 2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_values(y, {68, 78, 108, 118});
}

TEST(InterpreterConv, Conv2dGroups) {
  // groups 2, C 4, F 2: f0 sees channels 0,1 and f1 channels 2,3.
  //   f0 = 1*1 + 10*2 = 21;   f1 = 100*3 + 1000*4 = 4300
  HostTensor y = run_op(OpKind::Conv, {make_f32({1, 4, 1, 1}, {1, 2, 3, 4}),
                                       make_f32({2, 2, 1, 1}, {1, 10, 100, 1000})},
                        {{"groups", int64_t(2)}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  expect_values(y, {21, 4300});
}

TEST(InterpreterConv, DepthwiseConv) {
  // groups = C = F = 2, filter [2, 1, 2, 2]: each channel convolved with its own 2x2 kernel.
  //   c0: [1,2,3,4] . [1,1,1,1] = 10;   c1: [5,6,7,8] . [1,0,0,-1] = 5 - 8 = -3
  HostTensor y = run_op(OpKind::Conv, {make_f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                       make_f32({2, 1, 2, 2}, {1, 1, 1, 1, 1, 0, 0, -1})},
                        {{"groups", int64_t(2)}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  expect_values(y, {10, -3});
}

// Straightforward NCHW/FCHW conv, written without the geometry helpers.
std::vector<double> naive_conv_nchw(const HostTensor& x, const HostTensor& w, int64_t groups,
                                    Ints s, Ints d, Ints p, int64_t OH, int64_t OW) {
  int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  int64_t F = w.shape()[0], KH = w.shape()[2], KW = w.shape()[3], Cg = C / groups, Fg = F / groups;
  std::vector<double> y(size_t(N * F * OH * OW), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                int64_t ci = (f / Fg) * Cg + c;
                acc += x.get_f64(((n * C + ci) * H + ih) * W + iw) *
                       w.get_f64(((f * Cg + c) * KH + kh) * KW + kw);
              }
          y[size_t(((n * F + f) * OH + oh) * OW + ow)] = acc;
        }
  return y;
}

// Physical copy of a rank-4 tensor into another dim order: out dim i = in dim perm[i].
HostTensor permuted(const HostTensor& t, Ints perm) {
  Shape shape;
  for (int64_t p : perm) shape.push_back(t.shape()[size_t(p)]);
  HostTensor out(t.dtype(), shape);
  std::vector<int64_t> in_strides = shape_strides(t.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i, src = 0;
    for (size_t dd = 4; dd-- > 0;) {
      src += (rest % shape[dd]) * in_strides[size_t(perm[dd])];
      rest /= shape[dd];
    }
    out.set_f64(i, t.get_f64(src));
  }
  return out;
}

TEST(InterpreterConv, NchwAndNhwcAgreeWithNaiveLoop) {
  std::mt19937 rng(7);
  HostTensor x = random_tensor(DType::f32, {2, 4, 7, 6}, rng);
  HostTensor w = random_tensor(DType::f32, {6, 2, 3, 2}, rng);
  ir::AttrMap attrs{{"groups", int64_t(2)}, {"strides", Ints{2, 1}}, {"dilations", Ints{1, 2}},
                    {"pads", Ints{1, 0, 2, 1}}};
  // OH = (7 + 1 + 2 - 3) / 2 + 1 = 4;  OW = (6 + 0 + 1 - 3) / 1 + 1 = 5
  HostTensor nchw = run_op(OpKind::Conv, {x, w}, attrs);
  ASSERT_EQ(nchw.shape(), (Shape{2, 6, 4, 5}));
  expect_values(nchw, naive_conv_nchw(x, w, 2, {2, 1}, {1, 2}, {1, 0}, 4, 5), 1e-5);

  ir::AttrMap nhwc_attrs = attrs;
  nhwc_attrs["input_layout"] = std::string("NHWC");
  nhwc_attrs["filter_layout"] = std::string("HWCF");
  nhwc_attrs["output_layout"] = std::string("NHWC");
  HostTensor nhwc = run_op(OpKind::Conv, {permuted(x, {0, 2, 3, 1}), permuted(w, {2, 3, 1, 0})}, nhwc_attrs);
  ASSERT_EQ(nhwc.shape(), (Shape{2, 4, 5, 6}));
  expect_values(nhwc, values_of(permuted(nchw, {0, 2, 3, 1})), 1e-6);
}

// The 1-D regression: NWC input [[0,1],[0,0],[0,0]], filter CWF [[[1,2],[3,4]],[[5,6],[7,8]]].
// out[o][f] = sum_{c,k} in[o+k][c] * w[c][k][f]; the only nonzero input is in[0][1] = 1, which
// reaches o = 0 through k = 0: out[0] = w[1][0][:] = [5, 6], out[1] = [0, 0].
HostTensor regression_input() { return make_f32({1, 3, 2}, {0, 1, 0, 0, 0, 0}); }
HostTensor regression_filter() { return make_f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}); }

TEST(InterpreterConv, Regression1dConvNwcCwf) {
  HostTensor y = run_op(OpKind::Conv, {regression_input(), regression_filter()},
                        {{"input_layout", std::string("NWC")}, {"filter_layout", std::string("CWF")},
                         {"output_layout", std::string("NWC")}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  expect_values(y, {5, 6, 0, 0});
}

TEST(InterpreterConv, Regression1dViaIm2colAndMatmul) {
  // Columns follow the filter's non-F letters, "CW": column = c*2 + kw. Row p = output position:
  //   p0: (c0,k0)=in[0][0]=0, (c0,k1)=in[1][0]=0, (c1,k0)=in[0][1]=1, (c1,k1)=in[1][1]=0
  //   p1: all zero.
  HostTensor cols = run_op(OpKind::Im2Col, {regression_input()},
                           {{"kernel", Ints{2}}, {"input_layout", std::string("NWC")},
                            {"filter_layout", std::string("CWF")}});
  ASSERT_EQ(cols.shape(), (Shape{1, 2, 4}));
  expect_values(cols, {0, 0, 1, 0, 0, 0, 0, 0});
  // CWF bytes read as [C*KW, F] = [[1,2],[3,4],[5,6],[7,8]]; row p0 picks row 2 = [5, 6].
  HostTensor y = run_op(OpKind::MatMul, {cols, regression_filter().reshaped({4, 2})});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  expect_values(y, {5, 6, 0, 0});
}

TEST(InterpreterConv, Regression1dAsConvTranspose) {
  // A stride-1 conv is the conv_transpose with the kernel flipped and pads K-1-p = 1 each side:
  //   conv_transpose: out[o] += in[i] * wt[c][f][k] with o = i - 1 + k, i.e. i = o + (1 - k).
  //   Setting k' = 1 - k gives out[o] = sum_{k'} in[o + k'] * wt[c][f][1 - k'], the conv above
  //   when wt[c][f][k] = w[c][1 - k][f]. In CWF order: wt = [[[3,4],[1,2]],[[7,8],[5,6]]].
  //   Size: (3 - 1)*1 + (2 - 1) + 1 - 1 - 1 = 2. out[0]: k = 1 reads in[0][1] = 1 -> wt[1][:][1] =
  //   [5, 6]; out[1] reads in[1], in[2] = 0.
  HostTensor wt = make_f32({2, 2, 2}, {3, 4, 1, 2, 7, 8, 5, 6});
  HostTensor y = run_op(OpKind::ConvTranspose, {regression_input(), wt},
                        {{"pads", Ints{1, 1}}, {"input_layout", std::string("NWC")},
                         {"filter_layout", std::string("CWF")}, {"output_layout", std::string("NWC")}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  expect_values(y, {5, 6, 0, 0});
}

TEST(InterpreterConv, ConvTranspose1dStride2) {
  // in [1, 2], kernel [1, 1, 1], stride 2: size (2-1)*2 + 3 = 5.
  //   in[0] scatters to 0,1,2 (+1 each), in[1] to 2,3,4 (+2 each): [1, 1, 3, 2, 2]
  HostTensor x = make_f32({1, 1, 2}, {1, 2});
  HostTensor w = make_f32({1, 1, 3}, {1, 1, 1});
  expect_values(run_op(OpKind::ConvTranspose, {x, w}, {{"strides", Ints{2}}}), {1, 1, 3, 2, 2});
  // pads 1 each side crop the first and last: [1, 3, 2]
  expect_values(run_op(OpKind::ConvTranspose, {x, w}, {{"strides", Ints{2}}, {"pads", Ints{1, 1}}}),
                {1, 3, 2});
  // output_padding 1 appends one position that only the bias reaches: [1, 1, 3, 2, 2, 0] + 10
  expect_values(run_op(OpKind::ConvTranspose, {x, w, make_f32({1}, {10})},
                       {{"strides", Ints{2}}, {"output_padding", Ints{1}}}),
                {11, 11, 13, 12, 12, 10});
}

TEST(InterpreterConv, ConvTranspose2dStride2IsKroneckerProduct) {
  // Stride 2 with a 2x2 kernel: windows never overlap, out[2i+a][2j+b] = x[i][j] * w[a][b] + bias.
  HostTensor y = run_op(OpKind::ConvTranspose, {make_f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                                                make_f32({1, 1, 2, 2}, {1, 2, 3, 4}), make_f32({1}, {1})},
                        {{"strides", Ints{2, 2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  expect_values(y, {2, 3, 3, 5,  //
                    4, 5, 7, 9,  //
                    4, 7, 5, 9,  //
                    10, 13, 13, 17});
}

TEST(InterpreterConv, ConvTransposeGroups) {
  // groups 2, C 4, filter [C=4, F/g=1, 1]: out channel g takes channels 2g, 2g+1.
  //   out0 = 1*1 + 2*10 = 21;   out1 = 3*100 + 4*1000 = 4300
  HostTensor y = run_op(OpKind::ConvTranspose, {make_f32({1, 4, 1}, {1, 2, 3, 4}),
                                                make_f32({4, 1, 1}, {1, 10, 100, 1000})},
                        {{"groups", int64_t(2)}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1}));
  expect_values(y, {21, 4300});
}

TEST(InterpreterConv, Im2colNchwWithPaddingAndGroups) {
  // NCW input, 2 channels [[1,2,3],[4,5,6]], kernel 2, pads [1,0], groups 2 -> [N, G, P, K]:
  //   positions p = 0..2 read input at (p-1, p); padding is 0. K = C/g * KW = 2.
  //   g0: [0,1],[1,2],[2,3];   g1: [0,4],[4,5],[5,6]
  HostTensor cols = run_op(OpKind::Im2Col, {make_f32({1, 2, 3}, {1, 2, 3, 4, 5, 6})},
                           {{"kernel", Ints{2}}, {"pads", Ints{1, 0}}, {"groups", int64_t(2)}});
  ASSERT_EQ(cols.shape(), (Shape{1, 2, 3, 2}));
  expect_values(cols, {0, 1, 1, 2, 2, 3, 0, 4, 4, 5, 5, 6});
}

TEST(InterpreterConv, Im2colColumnOrderFollowsFilterLayout) {
  // 2 channels, kernel 2, no pads, input [[1,2,3],[4,5,6]] (NCW).
  //   "FCW": column = c*2 + k -> p0: [1,2,4,5], p1: [2,3,5,6]
  //   "FWC": column = k*2 + c -> p0: [1,4,2,5], p1: [2,5,3,6]
  HostTensor x = make_f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  expect_values(run_op(OpKind::Im2Col, {x}, {{"kernel", Ints{2}}, {"filter_layout", std::string("FCW")}}),
                {1, 2, 4, 5, 2, 3, 5, 6});
  expect_values(run_op(OpKind::Im2Col, {x}, {{"kernel", Ints{2}}, {"filter_layout", std::string("FWC")}}),
                {1, 4, 2, 5, 2, 5, 3, 6});
}

TEST(InterpreterConv, Conv3dAndPool3d) {
  // 2x2x3 input (D,H,W) with x = 0..11, kernel 2x2x2 of ones, pads 0: output 1x1x2, the sums of
  // W-windows (0,1) and (1,2) over all D,H: w=0,1 -> (0+1+3+4+6+7+9+10) = 40; w=1,2 -> 48.
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[size_t(i)] = float(i);
  HostTensor x = make_f32({1, 1, 2, 2, 3}, xs);
  HostTensor y = run_op(OpKind::Conv, {x, make_f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f))});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1, 2}));
  expect_values(y, {40, 48});
  HostTensor m = run_op(OpKind::MaxPool, {x}, {{"kernel", Ints{2, 2, 2}}});
  expect_values(m, {10, 11});
}

}  // namespace
}  // namespace vkc::test
