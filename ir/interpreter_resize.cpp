// resize: nearest (bit-exact copies), linear and cubic (float64 weighted sums), any rank.
#include "ir/interpreter_ops.h"
#include "ir/resize_geometry.h"

namespace vkc::ir::interp {
namespace {

// What one output index along one dim reads: taps (index, weight), or nothing when the source
// coordinate is outside the crop window (tf_crop_and_resize).
struct DimTaps {
  bool inside = true;
  ResizeTaps taps;
};

// Per output index of the op (a piece: of its window), the taps as indices into its operand.
std::vector<DimTaps> dim_taps(const ResizeGeometry& g, size_t d) {
  const ResizeAxis& a = g.axes[d];
  std::vector<DimTaps> out(size_t(a.piece_out));
  for (int64_t p = 0; p < a.piece_out; ++p) {
    DimTaps& t = out[size_t(p)];
    const int64_t x = a.out_start + p;  // the whole op's output index
    if (a.identity) {
      t.taps.count = 1;
      t.taps.index[0] = x - a.in_start;
      t.taps.weight[0] = 1;
      continue;
    }
    double xi = resize_source_coordinate(g, d, x);
    if (g.extrapolates() && !resize_coordinate_inside(xi, a.in)) {
      t.inside = false;
      continue;
    }
    if (g.interpolation == ResizeInterpolation::Nearest) {
      t.taps.count = 1;
      t.taps.index[0] = resize_nearest_index(g, xi, a.in);
      t.taps.weight[0] = 1;
    } else {
      t.taps = resize_interpolation_taps(g, xi, a.in);
    }
    for (int k = 0; k < t.taps.count; ++k) t.taps.index[size_t(k)] -= a.in_start;  // within the operand (verified)
  }
  return out;
}

}  // namespace

// Output element y[o] is extrapolation_value when any dim's coordinate is outside the crop window;
// else nearest copies x at the per-dim nearest indices, and linear / cubic sum, over every
// combination of per-dim taps, the product of the tap weights times x at the tap indices. Every
// tap is multiplied, even one of weight 0 (as ONNX's reference does: an inf neighbour gives NaN).
Results eval_resize(const Op& op, const Operands& in, const ResultTypes& types) {
  ResizeGeometry g = resize_geometry(op);
  check_result_shape(op, g.output_shape(), types[0]);
  const HostTensor& x = *in[0];
  const size_t rank = g.axes.size();
  std::vector<std::vector<DimTaps>> taps;
  for (size_t d = 0; d < rank; ++d) taps.push_back(dim_taps(g, d));
  std::vector<int64_t> xstr = shape_strides(x.shape());
  const Shape& out_shape = types[0].shape;
  const int64_t total = shape_numel(out_shape);
  const bool nearest = g.interpolation == ResizeInterpolation::Nearest;
  HostTensor y(types[0].dtype, out_shape);
  std::vector<double> values;
  if (!nearest) values.assign(size_t(total), 0.0);
  std::vector<double> xs = nearest ? std::vector<double>() : to_f64(x);
  for (int64_t oi = 0; oi < total; ++oi) {
    std::vector<int64_t> o = unravel(oi, out_shape);
    std::vector<const ResizeTaps*> t(rank);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      const DimTaps& dt = taps[d][size_t(o[d])];
      inside = inside && dt.inside;
      t[d] = &dt.taps;
    }
    if (!inside) {
      if (nearest) y.set_f64(oi, g.extrapolation_value);
      else values[size_t(oi)] = g.extrapolation_value;
      continue;
    }
    if (nearest) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += t[d]->index[0] * xstr[d];
      copy_element(y, oi, x, src);
      continue;
    }
    // Walk every combination of taps (an odometer over the per-dim tap counts).
    std::vector<int> k(rank, 0);
    double acc = 0;
    for (;;) {
      double w = 1;
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) {
        w *= t[d]->weight[size_t(k[d])];
        src += t[d]->index[size_t(k[d])] * xstr[d];
      }
      acc += w * xs[size_t(src)];
      bool done = true;
      for (size_t d = rank; done && d-- > 0;) {
        if (++k[d] < t[d]->count) done = false;
        else k[d] = 0;
      }
      if (done) break;
    }
    values[size_t(oi)] = acc;
  }
  if (nearest) return {std::move(y)};
  return {from_f64(types[0], values)};
}

}  // namespace vkc::ir::interp
