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
  HostTensor y(types[0].dtype, types[0].shape);
  const Requantize requantize(op);
  std::vector<int64_t> wz(size_t(g.out_channels));
  for (int64_t f = 0; f < g.out_channels; ++f) wz[size_t(f)] = zero_point(*in[3], f);
  // Padding is the zero point: it contributes 0, as the shared loop skips it.
  conv_forward_sums<int64_t>(
      g, xs, ws, ys, [&](int64_t f) { return in.size() > 4 ? in[4]->get_i64(f) : int64_t(0); },
      [&](int64_t xo, int64_t wo, int64_t f) { return (x[size_t(xo)] - xz) * (w[size_t(wo)] - wz[size_t(f)]); },
      [&](int64_t yo, int64_t f, int64_t acc) { y.set_i64(yo, requantize(wrap_i32(acc), f)); });
  return {std::move(y)};
}

Results eval_matmul_integer(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& a = *in[0];
  const HostTensor& b = *in[1];
  MatrixView va = matrix_view(a.shape(), true, op.attr_bool("transpose_a"));
  MatrixView vb = matrix_view(b.shape(), false, op.attr_bool("transpose_b"));
  if (va.cols != vb.rows) fail(op, "contraction dims differ: lhs has ", va.cols, ", rhs has ", vb.rows);
  const int64_t N = vb.cols;
  Shape batch(types[0].shape.begin(), types[0].shape.end() - 2);
  std::vector<int64_t> x = to_i64(a), w = to_i64(b);
  const int64_t az = zero_point(*in[2], 0);
  HostTensor out(types[0].dtype, types[0].shape);
  const Requantize requantize(op);
  std::vector<int64_t> bz(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) bz[size_t(n)] = zero_point(*in[3], n);
  matrix_product_sums<int64_t>(
      va, vb, batch, [&](int64_t ao, int64_t bo, int64_t n) { return (x[size_t(ao)] - az) * (w[size_t(bo)] - bz[size_t(n)]); },
      [&](int64_t o, int64_t, int64_t n, int64_t acc) { out.set_i64(o, requantize(wrap_i32(acc), n)); });
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
