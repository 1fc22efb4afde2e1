// max_pool and avg_pool, N-D, any layout (through pool_geometry's positions).
#include <cmath>
#include <limits>

#include "ir/conv_geometry.h"
#include "ir/interpreter_ops.h"
#include "support/int_math.h"

namespace vkc::ir::interp {

// Window of output position o along spatial dim i: input positions o*s - pb + k*d, k < kernel.
//   max_pool: max over positions inside the input (padding is -inf, so it never wins); NaN
//             propagates.
//   avg_pool: sum over positions inside the input, divided by the number of window positions
//             inside the padded input [-pb, in + pe) when count_include_pad, else inside the
//             input [0, in). Positions past the padded end (ceil_mode windows) never count.
Results eval_pool(const Op& op, const Operands& in, const ResultTypes& types) {
  ConvGeometry g = pool_geometry(op);
  check_result_shape(op, g.output_shape(), types[0]);
  const size_t S = size_t(g.spatial_rank);
  const bool is_max = op.kind == OpKind::MaxPool;
  const bool include_pad = op.attr_bool("count_include_pad");
  std::vector<double> x = to_f64(*in[0]);
  std::vector<int64_t> xstr = shape_strides(in[0]->shape()), ystr = shape_strides(types[0].shape);
  std::vector<double> y(size_t(shape_numel(types[0].shape)), 0.0);
  Shape outer{g.batch, g.in_channels};
  for (size_t i = 0; i < S; ++i) outer.push_back(g.out_spatial[i]);
  Shape window = g.kernel;
  int64_t total_out = shape_numel(outer), total_k = shape_numel(window);
  for (int64_t oi = 0; oi < total_out; ++oi) {
    std::vector<int64_t> o = unravel(oi, outer);  // [n, c, spatial...] logical
    int64_t base = o[0] * xstr[size_t(g.input_pos[0])] + o[1] * xstr[size_t(g.input_pos[1])];
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    bool nan = false;
    int64_t count = 0;
    for (int64_t ki = 0; ki < total_k; ++ki) {
      std::vector<int64_t> k = unravel(ki, window);
      int64_t off = base;
      bool in_input = true, in_padded = true;
      for (size_t i = 0; i < S; ++i) {
        int64_t p = o[2 + i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
        in_input = in_input && p >= 0 && p < g.in_spatial[i];
        in_padded = in_padded && p >= -g.pad_begin[i] && p < g.in_spatial[i] + g.pad_end[i];
        off += p * xstr[size_t(g.input_pos[2 + i])];
      }
      if (include_pad ? in_padded : in_input) ++count;
      if (!in_input) continue;
      double v = x[size_t(off)];
      if (is_max) {
        nan = nan || std::isnan(v);
        acc = v > acc ? v : acc;
      } else {
        acc += v;
      }
    }
    if (is_max && nan) acc = std::numeric_limits<double>::quiet_NaN();
    if (!is_max) acc = acc / double(count);  // count 0 (dilated window wholly in padding): NaN
    int64_t yoff = o[0] * ystr[size_t(g.output_pos[0])] + o[1] * ystr[size_t(g.output_pos[1])];
    for (size_t i = 0; i < S; ++i) yoff += o[2 + i] * ystr[size_t(g.output_pos[2 + i])];
    y[size_t(yoff)] = acc;
  }
  return {from_f64(types[0], y)};
}

// max_pool_with_indices: the values of max_pool, and the flat index of the element that won:
// the first position in window order (row-major over the kernel dims) holding the maximum, or
// holding the first NaN when the window has one. The index is into the input seen in logical
// N, C, spatial order whatever the layout: ((n * C + c) * prod(spatial)) + the spatial position
// flattened row-major (storage_order 0) or column-major (storage_order 1, first dim fastest).
// A window with no position inside the input gives -inf and index -1.
Results eval_max_pool_with_indices(const Op& op, const Operands& in, const ResultTypes& types) {
  ConvGeometry g = pool_geometry(op);
  check_result_shape(op, g.output_shape(), types[0]);
  const size_t S = size_t(g.spatial_rank);
  const bool column_major = op.attr_int("storage_order") == 1;
  std::vector<double> x = to_f64(*in[0]);
  std::vector<int64_t> xstr = shape_strides(in[0]->shape()), ystr = shape_strides(types[0].shape);
  std::vector<double> y(size_t(shape_numel(types[0].shape)), 0.0);
  HostTensor indices(DType::i64, types[1].shape);
  const int64_t spatial_total = product(g.in_spatial);
  Shape outer{g.batch, g.in_channels};
  for (size_t i = 0; i < S; ++i) outer.push_back(g.out_spatial[i]);
  int64_t total_out = shape_numel(outer), total_k = shape_numel(g.kernel);
  for (int64_t oi = 0; oi < total_out; ++oi) {
    std::vector<int64_t> o = unravel(oi, outer);
    double best = -std::numeric_limits<double>::infinity();
    int64_t best_index = -1;
    bool nan = false;
    for (int64_t ki = 0; ki < total_k && !nan; ++ki) {
      std::vector<int64_t> k = unravel(ki, g.kernel);
      int64_t off = o[0] * xstr[size_t(g.input_pos[0])] + o[1] * xstr[size_t(g.input_pos[1])];
      int64_t flat = 0, mult = 1;
      bool inside = true;
      for (size_t i = 0; i < S; ++i) {
        int64_t p = o[2 + i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
        inside = inside && p >= 0 && p < g.in_spatial[i];
        off += p * xstr[size_t(g.input_pos[2 + i])];
        if (column_major) {
          flat += p * mult;
          mult *= g.in_spatial[i];
        } else {
          flat = flat * g.in_spatial[i] + p;
        }
      }
      if (!inside) continue;
      double v = x[size_t(off)];
      if (std::isnan(v) || v > best || best_index < 0) {
        nan = std::isnan(v);
        best = v;
        best_index = (o[0] * g.in_channels + o[1]) * spatial_total + flat;
      }
    }
    int64_t yoff = o[0] * ystr[size_t(g.output_pos[0])] + o[1] * ystr[size_t(g.output_pos[1])];
    for (size_t i = 0; i < S; ++i) yoff += o[2 + i] * ystr[size_t(g.output_pos[2 + i])];
    y[size_t(yoff)] = best;
    indices.set_i64(yoff, best_index);
  }
  return {from_f64(types[0], y), std::move(indices)};
}

}  // namespace vkc::ir::interp
