// conv_integer and matmul_integer: (x - x_zero_point) * (w - w_zero_point) summed exactly in int64,
// plus the i32 bias, then wrapped to i32 (two's complement), which is what the kernels' 32-bit
// integer adds give; with requantize_* attributes then requantized to 8 bits as ORT does.
// Sums of real models stay far inside the i32 range (|sum| <= K * 255^2).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/interpreter_ops.h"
#include "ir/matmul_geometry.h"

namespace vkc::ir::interp {
namespace {

std::vector<int64_t> to_i64(const HostTensor& t) {
  std::vector<int64_t> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = t.get_i64(i);
  return v;
}

// Zero point at `channel` (per tensor: the only element).
int64_t zero_point(const HostTensor& zp, int64_t channel) { return zp.get_i64(zp.numel() == 1 ? 0 : channel); }

int64_t wrap_i32(int64_t v) { return int64_t(int32_t(uint32_t(uint64_t(v)))); }

// The result's value of the wrapped sum `acc` at `channel`: the sum itself, or with requantize_to
// ONNX Runtime's requantization: f32(f32(acc) * M[channel]), rounded half to even, plus the zero
// point, saturated (docs/int8.md).
struct Requantize {
  bool on = false;
  std::vector<double> scale;
  int64_t zp = 0, lo = 0, hi = 0;
  explicit Requantize(const Op& op) {
    if (!op.has_attr("requantize_to")) return;
    on = true;
    scale = op.attr_floats("requantize_scale");
    zp = op.attr_int("requantize_zero_point");
    bool i8 = op.attr_string("requantize_to") == "i8";
    lo = i8 ? -128 : 0;
    hi = i8 ? 127 : 255;
  }
  int64_t operator()(int64_t acc, int64_t channel) const {
    if (!on) return acc;
    float m = float(scale[scale.size() == 1 ? 0 : size_t(channel)]);
    float v = float(int32_t(acc)) * m;
    double q = std::nearbyint(double(v)) + double(zp);
    return int64_t(std::clamp(q, double(lo), double(hi)));
  }
};

}  // namespace

Results eval_conv_integer(const Op& op, const Operands& in, const ResultTypes& types) {
  ConvGeometry g = conv_geometry(op);
  check_result_shape(op, g.output_shape(), types[0]);
  std::vector<int64_t> x = to_i64(*in[0]), w = to_i64(*in[1]);
  const int64_t xz = zero_point(*in[2], 0);
  std::vector<int64_t> xs = logical_strides(in[0]->shape(), g.input_pos);
  std::vector<int64_t> ws = logical_strides(in[1]->shape(), g.filter_pos);
  std::vector<int64_t> ys = logical_strides(types[0].shape, g.output_pos);
  const Padded3 p = pad_to_3d(g, xs, ws, ys);
  HostTensor y(types[0].dtype, types[0].shape);
  const Requantize requantize(op);
  const int64_t Cg = g.in_channels_per_group(), Fg = g.out_channels_per_group();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t f = 0; f < g.out_channels; ++f) {
      const int64_t group = f / Fg, wz = zero_point(*in[3], f);
      const int64_t bias = in.size() > 4 ? in[4]->get_i64(f) : 0;
      for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
            int64_t acc = bias;
            for (int64_t c = 0; c < Cg; ++c) {
              const int64_t xbase = n * xs[0] + (group * Cg + c) * xs[1];
              const int64_t wbase = f * ws[0] + c * ws[1];
              for (int64_t k0 = 0; k0 < p.k[0]; ++k0) {
                const int64_t i0 = o0 * p.s[0] - p.pb[0] + k0 * p.d[0];
                if (i0 < 0 || i0 >= p.in[0]) continue;  // padding is the zero point: contributes 0
                for (int64_t k1 = 0; k1 < p.k[1]; ++k1) {
                  const int64_t i1 = o1 * p.s[1] - p.pb[1] + k1 * p.d[1];
                  if (i1 < 0 || i1 >= p.in[1]) continue;
                  for (int64_t k2 = 0; k2 < p.k[2]; ++k2) {
                    const int64_t i2 = o2 * p.s[2] - p.pb[2] + k2 * p.d[2];
                    if (i2 < 0 || i2 >= p.in[2]) continue;
                    acc += (x[size_t(xbase + i0 * p.xs[0] + i1 * p.xs[1] + i2 * p.xs[2])] - xz) *
                           (w[size_t(wbase + k0 * p.ws[0] + k1 * p.ws[1] + k2 * p.ws[2])] - wz);
                  }
                }
              }
            }
            y.set_i64(n * ys[0] + f * ys[1] + o0 * p.ys[0] + o1 * p.ys[1] + o2 * p.ys[2],
                      requantize(wrap_i32(acc), f));
          }
    }
  return {std::move(y)};
}

Results eval_matmul_integer(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& a = *in[0];
  const HostTensor& b = *in[1];
  MatrixView va = matrix_view(a.shape(), true, op.attr_bool("transpose_a"));
  MatrixView vb = matrix_view(b.shape(), false, op.attr_bool("transpose_b"));
  if (va.cols != vb.rows) fail(op, "contraction dims differ: lhs has ", va.cols, ", rhs has ", vb.rows);
  const int64_t M = va.rows, N = vb.cols, K = va.cols;
  Shape batch(types[0].shape.begin(), types[0].shape.end() - 2);
  std::vector<int64_t> x = to_i64(a), w = to_i64(b);
  const int64_t az = zero_point(*in[2], 0);
  HostTensor out(types[0].dtype, types[0].shape);
  const Requantize requantize(op);
  const int64_t batches = shape_numel(batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    std::vector<int64_t> index = unravel(bi, batch);
    int64_t abase = broadcast_offset(va.batch, batch, index) * va.matrix_size;
    int64_t bbase = broadcast_offset(vb.batch, batch, index) * vb.matrix_size;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        const int64_t bz = zero_point(*in[3], n);
        int64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (x[size_t(abase + m * va.row_stride + k * va.col_stride)] - az) *
                 (w[size_t(bbase + k * vb.row_stride + n * vb.col_stride)] - bz);
        out.set_i64((bi * M + m) * N + n, requantize(wrap_i32(acc), n));
      }
  }
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
