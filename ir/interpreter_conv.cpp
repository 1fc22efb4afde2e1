// conv, conv_transpose and im2col, in any layout.
//
// All index math goes through ConvGeometry's logical -> physical positions (input_pos,
// filter_pos, output_pos): the loops run over logical dims (N, C/F, spatial in D,H,W order) and
// each access turns the logical index into a physical offset with per-logical-dim strides.
#include "ir/conv_geometry.h"
#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

// Iterates all multi-indices of `extents` in row-major order (last fastest); calls f(index).
template <typename F>
void for_each_index(const std::vector<int64_t>& extents, F&& f) {
  int64_t total = shape_numel(extents);
  std::vector<int64_t> index(extents.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    f(index);
    for (size_t d = extents.size(); d-- > 0;) {
      if (++index[d] < extents[d]) break;
      index[d] = 0;
    }
  }
}

std::vector<double> bias_values(const Operands& in, int64_t channels, const Op& op) {
  if (in.size() < 3) return std::vector<double>(size_t(channels), 0.0);
  if (in[2]->numel() != channels)
    fail(op, "bias has ", in[2]->numel(), " elements, expected ", channels, " (one per output channel)");
  return to_f64(*in[2]);
}

}  // namespace

Padded3 pad_to_3d(const ConvGeometry& g, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                  const std::vector<int64_t>& ys) {
  Padded3 p{};
  const size_t S = size_t(g.spatial_rank), lead = 3 - S;
  for (size_t i = 0; i < 3; ++i) {
    bool real = i >= lead;
    size_t j = i - lead;
    p.in[i] = real ? g.in_spatial[j] : 1;
    p.out[i] = real ? g.out_spatial[j] : 1;
    p.k[i] = real ? g.kernel[j] : 1;
    p.s[i] = real ? g.strides[j] : 1;
    p.d[i] = real ? g.dilations[j] : 1;
    p.pb[i] = real ? g.pad_begin[j] : 0;
    p.xs[i] = real ? xs[2 + j] : 0;
    p.ws[i] = real ? ws[2 + j] : 0;
    p.ys[i] = real ? ys[2 + j] : 0;
  }
  return p;
}

// out[n, g*Fg + f, o] = bias[g*Fg + f] + sum_{c < Cg, k} in[n, g*Cg + c, o*s - pb + k*d] * w[g*Fg + f, c, k]
Results eval_conv(const Op& op, const Operands& in, const ResultTypes& types) {
  ConvGeometry g = conv_geometry(op);
  check_result_shape(op, g.output_shape(), types[0]);
  std::vector<double> x = to_f64(*in[0]), w = to_f64(*in[1]);
  std::vector<double> bias = bias_values(in, g.out_channels, op);
  std::vector<int64_t> xs = logical_strides(in[0]->shape(), g.input_pos);
  std::vector<int64_t> ws = logical_strides(in[1]->shape(), g.filter_pos);
  std::vector<int64_t> ys = logical_strides(types[0].shape, g.output_pos);
  std::vector<double> y(size_t(shape_numel(types[0].shape)), 0.0);
  conv_forward_sums<double>(
      g, xs, ws, ys, [&](int64_t f) { return bias[size_t(f)]; },
      [&](int64_t xo, int64_t wo, int64_t) { return x[size_t(xo)] * w[size_t(wo)]; },
      [&](int64_t yo, int64_t, double acc) { y[size_t(yo)] = acc; });
  return {from_f64(types[0], y)};
}

// ONNX ConvTranspose: every input element scatters into the output:
//   out[n, g*Fg + f, i*s - pb + k*d] += in[n, g*Cg + c, i] * w[g*Cg + c, f, k], plus bias.
// Positions outside [0, out) (cut by pads) are dropped.
Results eval_conv_transpose(const Op& op, const Operands& in, const ResultTypes& types) {
  ConvGeometry g = conv_geometry(op);
  check_result_shape(op, g.output_shape(), types[0]);
  const size_t S = size_t(g.spatial_rank);
  std::vector<double> x = to_f64(*in[0]), w = to_f64(*in[1]);
  std::vector<double> bias = bias_values(in, g.out_channels, op);
  std::vector<int64_t> xs = logical_strides(in[0]->shape(), g.input_pos);
  std::vector<int64_t> ws = logical_strides(in[1]->shape(), g.filter_pos);
  std::vector<int64_t> ys = logical_strides(types[0].shape, g.output_pos);
  std::vector<double> y(size_t(shape_numel(types[0].shape)), 0.0);
  const int64_t Cg = g.in_channels_per_group(), Fg = g.out_channels_per_group();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t f = 0; f < g.out_channels; ++f)
      for_each_index(g.out_spatial, [&](const std::vector<int64_t>& o) {
        int64_t yoff = n * ys[0] + f * ys[1];
        for (size_t i = 0; i < S; ++i) yoff += o[i] * ys[2 + i];
        y[size_t(yoff)] = bias[size_t(f)];
      });
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t c = 0; c < g.in_channels; ++c) {
      int64_t group = c / Cg;
      for_each_index(g.in_spatial, [&](const std::vector<int64_t>& i_pos) {
        int64_t xoff = n * xs[0] + c * xs[1];
        for (size_t i = 0; i < S; ++i) xoff += i_pos[i] * xs[2 + i];
        double xv = x[size_t(xoff)];
        for (int64_t f = 0; f < Fg; ++f)
          for_each_index(g.kernel, [&](const std::vector<int64_t>& k) {
            int64_t yoff = n * ys[0] + (group * Fg + f) * ys[1];
            for (size_t i = 0; i < S; ++i) {
              int64_t p = i_pos[i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
              if (p < 0 || p >= g.out_spatial[i]) return;
              yoff += p * ys[2 + i];
            }
            int64_t woff = f * ws[0] + c * ws[1];
            for (size_t i = 0; i < S; ++i) woff += k[i] * ws[2 + i];
            y[size_t(yoff)] += xv * w[size_t(woff)];
          });
      });
    }
  return {from_f64(types[0], y)};
}

// im2col result [N, P, K] (groups == 1) or [N, G, P, K]: row p is output position p (row-major
// over D,H,W); column k decodes into (C-in-group, kernel offsets) in filter_layout's letter order.
Results eval_im2col(const Op& op, const Operands& in, const ResultTypes& types) {
  ConvGeometry g = conv_geometry(op);
  Im2ColColumns cols = im2col_columns(g);
  const size_t S = size_t(g.spatial_rank);
  int64_t P = shape_numel(g.out_spatial);
  Shape shape = g.groups == 1 ? Shape{g.batch, P, cols.k} : Shape{g.batch, g.groups, P, cols.k};
  check_result_shape(op, shape, types[0]);
  if (types[0].dtype != in[0]->dtype())
    fail(op, "result dtype ", dtype_name(types[0].dtype), " differs from the input's ",
         dtype_name(in[0]->dtype()));
  HostTensor out(types[0].dtype, shape);
  HostTensor zero(in[0]->dtype(), {});
  std::vector<int64_t> xs = logical_strides(in[0]->shape(), g.input_pos);
  std::string sp = spatial_letters(g.spatial_rank);
  const int64_t Cg = g.in_channels_per_group();
  int64_t row = 0;  // flat index of (n, g, p) rows, each cols.k long
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.groups; ++grp)
      for_each_index(g.out_spatial, [&](const std::vector<int64_t>& o) {
        int64_t col = 0;
        for_each_index(cols.extents, [&](const std::vector<int64_t>& kk) {
          int64_t c = 0;
          std::vector<int64_t> k(S, 0);
          for (size_t j = 0; j < cols.order.size(); ++j) {
            if (cols.order[j] == 'C')
              c = kk[j];
            else
              k[sp.find(cols.order[j])] = kk[j];
          }
          int64_t xoff = n * xs[0] + (grp * Cg + c) * xs[1];
          bool inside = true;
          for (size_t i = 0; i < S && inside; ++i) {
            int64_t p = o[i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
            inside = p >= 0 && p < g.in_spatial[i];
            xoff += p * xs[2 + i];
          }
          int64_t dst = row * cols.k + col++;
          if (inside)
            copy_element(out, dst, *in[0], xoff);
          else
            copy_element(out, dst, zero, 0);
        });
        ++row;
      });
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
