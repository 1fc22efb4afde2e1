#include "codegen/split_axes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/conv_geometry.h"
#include "ir/resize_geometry.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

void map_right_aligned(const ir::Op& op, int operand, AxisMap& m) {
  const Shape& out = op.result()->type.shape;
  const Shape& in = op.operand(operand)->type.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t od = int64_t(d) - int64_t(out.size() - in.size());
    if (od >= 0 && in[size_t(od)] == out[d]) m.operand_axis[size_t(operand)][d] = int(od);
  }
}

// A product of matrices (A and B of rank >= 2): batch dims and rows of A cut; columns of B too
// unless `columns` is false. The contraction dim is never cut here (range_split's partial sums).
void map_matrix_product(const ir::Op& op, AxisMap& m, bool columns) {
  const Shape& a = op.operand(0)->type.shape;
  const Shape& b = op.operand(1)->type.shape;
  const bool ta = op.attr_bool("transpose_a"), tb = op.attr_bool("transpose_b");
  const size_t batch = m.parallel.size() - 2;
  for (size_t d = 0; d < batch; ++d) m.parallel[d] = true;
  map_right_aligned(op, 0, m);
  map_right_aligned(op, 1, m);
  for (int k = 0; k < 2; ++k) m.operand_axis[size_t(k)][batch] = m.operand_axis[size_t(k)][batch + 1] = -1;
  m.parallel[batch] = true;
  m.operand_axis[0][batch] = int(ta ? a.size() - 1 : a.size() - 2);  // rows of A
  if (!columns) return;
  m.parallel[batch + 1] = true;
  m.operand_axis[1][batch + 1] = int(tb ? b.size() - 2 : b.size() - 1);  // columns of B
}

// Result dims equal to an operand dim of the same index (sort, softmax, reductions that keep dims).
void map_same_axes(const ir::Op& op, const std::set<int>& excluded, AxisMap& m) {
  for (size_t d = 0; d < m.parallel.size(); ++d) {
    if (excluded.count(int(d))) continue;
    m.parallel[d] = true;
    for (size_t k = 0; k < op.operands.size(); ++k)
      if (op.operand(int(k))->type.shape.size() == m.parallel.size()) m.operand_axis[k][d] = int(d);
  }
}


// Conv and pooling: each output spatial dim reads its input dim through a window.
void map_windows(const ir::ConvGeometry& g, AxisMap& m) {
  for (int j = 0; j < g.spatial_rank; ++j) {
    size_t d = size_t(g.output_pos[size_t(2 + j)]);
    m.parallel[d] = true;
    m.operand_axis[0][d] = g.input_pos[size_t(2 + j)];
    m.window[d] = Window{g.strides[size_t(j)], (g.kernel[size_t(j)] - 1) * g.dilations[size_t(j)] + 1,
                         g.pad_begin[size_t(j)], j};
  }
}

// conv_transpose: each output spatial dim gathers its input dim through a transposed window.
void map_transposed_windows(const ir::ConvGeometry& g, AxisMap& m) {
  for (int j = 0; j < g.spatial_rank; ++j) {
    size_t d = size_t(g.output_pos[size_t(2 + j)]);
    m.parallel[d] = true;
    m.operand_axis[0][d] = g.input_pos[size_t(2 + j)];
    m.window[d] = Window{g.strides[size_t(j)], (g.kernel[size_t(j)] - 1) * g.dilations[size_t(j)] + 1,
                         g.pad_begin[size_t(j)], j, 1, true};
  }
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Entries of an integer product's per-channel requantize scale (0: none or per tensor).
size_t per_channel_requantize(const ir::Op& op) {
  if (!op.has_attr("requantize_scale")) return 0;
  size_t n = op.attr_floats("requantize_scale").size();
  return n > 1 ? n : 0;
}

// A bound on the input rows any run of `run` output rows of a resized dim reads: the rounded
// coordinates of the run spread over at most ceil((run - 1) * |slope|) + 1 rows, plus the taps.
int64_t resize_rows_bound(const ir::ResizeGeometry& g, size_t d, int64_t run) {
  const ir::ResizeAxis& a = g.axes[d];
  if (a.identity) return run;
  const double spread = std::ceil(double(run - 1) * std::abs(a.slope));
  return spread >= double(a.in) ? a.in : std::min<int64_t>(a.in, int64_t(spread) + g.taps_per_dim() + 1);
}

}  // namespace

std::pair<int64_t, int64_t> Window::input_rows(int64_t begin, int64_t run, int64_t dim) const {
  if (resize) {
    const auto [first, last] = ir::resize_input_range(*resize, resize_dim, begin, begin + run);
    return {std::max<int64_t>(0, first), std::min(dim, last)};
  }
  if (transposed)
    return {std::max<int64_t>(0, floor_div(begin + pad_begin - (span - 1), stride)),
            std::min(dim, floor_div(begin + run - 1 + pad_begin, stride) + 1)};
  const int64_t row = begin / unit;
  return {std::max<int64_t>(0, row * stride - pad_begin), std::min(dim, (row + rows(run) - 1) * stride - pad_begin + span)};
}

int64_t Window::max_input_rows(int64_t run) const {
  if (resize) return resize_rows_bound(*resize, resize_dim, run);
  return transposed ? (run + span - 2) / stride + 2 : (rows(run) - 1) * stride + span;
}

int64_t Window::max_run(int64_t rows) const {
  if (resize) {  // the longest run whose bound fits: the bound grows with the run
    const ir::ResizeAxis& a = resize->axes[resize_dim];
    if (resize_rows_bound(*resize, resize_dim, 1) > rows) return 0;
    int64_t lo = 1, hi = a.out;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (resize_rows_bound(*resize, resize_dim, mid) <= rows) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  if (transposed) return rows < 2 ? 0 : std::max<int64_t>(0, (rows - 1) * stride - span + 1);
  return rows < span ? 0 : ((rows - span) / stride + 1) * unit;
}

AxisMap pool_axis_map(const ir::Op& op) {
  AxisMap m = no_parallel(op);
  ir::ConvGeometry g = ir::pool_geometry(op);
  for (int i = 0; i < 2; ++i) {
    m.parallel[size_t(g.output_pos[size_t(i)])] = true;
    m.operand_axis[0][size_t(g.output_pos[size_t(i)])] = g.input_pos[size_t(i)];
  }
  // ceil_mode: a piece keeps it, and pads at its end no more than the op does, so that its last
  // window reaches past the pads as the op's does (range_split.cpp, piece_attrs).
  if (!op.attr_bool("global")) map_windows(g, m);
  return m;
}

AxisMap no_parallel(const ir::Op& op) {
  size_t rank = op.result()->type.shape.size();
  return {std::vector<bool>(rank, false), std::vector<std::vector<int>>(op.operands.size(), std::vector<int>(rank, -1)),
          std::vector<std::optional<Window>>(rank)};
}

// Numpy broadcasting: operand dim d lines up with result dim d + (result rank - operand rank);
// a size-1 operand dim under a larger result dim is read whole.

AxisMap axis_map(const ir::Op& op) {
  AxisMap m = no_parallel(op);
  const size_t rank = m.parallel.size();
  using K = ir::OpKind;
  // Integer products split by batch and output channels (conv_integer; filter rows, per-channel
  // filter zero points and the bias follow) or by batch, rows and columns (matmul_integer; per-
  // column zero points follow); per-tensor zero points are read whole.
  if (op.kind == K::ConvInteger) {
    ir::ConvGeometry g = ir::conv_geometry(op);
    size_t n = size_t(g.output_pos[0]);
    m.parallel[n] = true;
    m.operand_axis[0][n] = g.input_pos[0];
    // Per-channel requantize scales are an attribute, which pieces do not slice: channels whole.
    if (g.groups == 1 && per_channel_requantize(op) == 0) {
      size_t f = size_t(g.output_pos[1]);
      m.parallel[f] = true;
      m.operand_axis[1][f] = g.filter_pos[0];
      if (op.operand(3)->type.numel() > 1) m.operand_axis[3][f] = 0;
      if (op.num_operands() == 5) m.operand_axis[4][f] = 0;
    }
    return m;
  }
  if (op.kind == K::MatMulInteger) {
    const size_t batch = rank - 2;
    map_matrix_product(op, m, per_channel_requantize(op) == 0);  // columns whole when their scales are an attribute
    if (m.parallel[batch + 1] && op.operand(3)->type.numel() > 1) m.operand_axis[3][batch + 1] = 0;
    return m;
  }
  switch (op.schema().category) {
    case ir::OpCategory::Unary:
    case ir::OpCategory::Binary:
    case ir::OpCategory::Ternary:
      std::fill(m.parallel.begin(), m.parallel.end(), true);
      for (int k = 0; k < op.num_operands(); ++k) map_right_aligned(op, k, m);
      return m;
    case ir::OpCategory::Quant: {
      // The tensor lines up dim by dim; per-axis scales and zero points follow dim `axis`.
      std::fill(m.parallel.begin(), m.parallel.end(), true);
      map_right_aligned(op, 0, m);
      int axis = normalized_axis(op.attr_int("axis"), rank);
      for (int k = 1; k < op.num_operands(); ++k)
        if (op.operand(k)->type.numel() > 1 && axis >= 0 && size_t(axis) < rank) m.operand_axis[size_t(k)][size_t(axis)] = 0;
      return m;
    }
    case ir::OpCategory::Conv: {
      ir::ConvGeometry g = ir::conv_geometry(op);
      size_t n = size_t(g.output_pos[0]);
      m.parallel[n] = true;
      m.operand_axis[0][n] = g.input_pos[0];
      if (op.kind != K::Im2Col && g.groups == 1) {  // output channels: filter rows (and bias)
        size_t f = size_t(g.output_pos[1]);
        m.parallel[f] = true;
        m.operand_axis[1][f] = g.filter_pos[0];
        if (op.num_operands() == 3) m.operand_axis[2][f] = 0;
      } else if (op.kind == K::Conv && g.groups == g.in_channels && g.groups == g.out_channels) {
        // Depthwise, one filter per channel: output channel c reads input channel c only, so a
        // run of channels is a depthwise conv of its own (groups: the run; range_split.cpp).
        size_t f = size_t(g.output_pos[1]);
        m.parallel[f] = true;
        m.operand_axis[0][f] = g.input_pos[1];
        m.operand_axis[1][f] = g.filter_pos[0];
        if (op.num_operands() == 3) m.operand_axis[2][f] = 0;
      }
      if (op.kind == K::Conv) map_windows(g, m);
      if (op.kind == K::ConvTranspose) map_transposed_windows(g, m);
      // im2col [N, P, K]: P runs over the output spatial dims, row-major; whole rows of the first
      // spatial dim of more than one output index (one output row of an image, once the rows
      // are cut one at a time: range_split_im2col.cpp) read a window of its input rows (the
      // columns K are read whole).
      if (op.kind == K::Im2Col && g.groups == 1 && rank == 3) {
        int first = 0;
        while (first + 1 < g.spatial_rank && g.out_spatial[size_t(first)] == 1) ++first;
        int64_t unit = 1;
        for (int j = first + 1; j < g.spatial_rank; ++j) unit *= g.out_spatial[size_t(j)];
        const size_t f = size_t(first);
        m.parallel[1] = true;
        m.operand_axis[0][1] = g.input_pos[2 + f];
        m.window[1] = Window{g.strides[f], (g.kernel[f] - 1) * g.dilations[f] + 1, g.pad_begin[f], first, unit};
      }
      return m;
    }
    case ir::OpCategory::Pool:
      // max_pool_with_indices: its indices count over the whole input, which a piece does not see
      // (range_split_pool_indices.cpp cuts it with pool_axis_map and moves them).
      return op.kind == K::MaxPoolWithIndices ? m : pool_axis_map(op);
    case ir::OpCategory::Contraction: {
      if (op.operand(0)->type.rank() < 2 || op.operand(1)->type.rank() < 2) return m;
      map_matrix_product(op, m, true);
      if (op.num_operands() == 3) map_right_aligned(op, 2, m);  // gemm's C
      return m;
    }
    case ir::OpCategory::Attention: {
      // Batch (and head) dims and query rows (a causal piece of rows keeps the whole op's mask
      // through causal_offset: range_split.cpp, piece_attrs). Keys and values are read whole.
      if (rank < 2) return m;
      for (size_t d = 0; d + 1 < rank; ++d) m.parallel[d] = true;
      for (int k = 0; k < op.num_operands(); ++k) {
        map_right_aligned(op, k, m);
        m.operand_axis[size_t(k)][rank - 2] = m.operand_axis[size_t(k)][rank - 1] = -1;
      }
      const Shape& q = op.operand(0)->type.shape;
      if (q.size() >= 2 && q[q.size() - 2] == op.result()->type.shape[rank - 2]) m.operand_axis[0][rank - 2] = int(q.size() - 2);
      for (int k = 3; k < op.num_operands(); ++k) {  // the masks
        const Shape& mask = op.operand(k)->type.shape;
        if (mask.size() >= 2 && mask[mask.size() - 2] == op.result()->type.shape[rank - 2])
          m.operand_axis[size_t(k)][rank - 2] = int(mask.size() - 2);
      }
      return m;
    }
    case ir::OpCategory::Reduction: {
      const Shape& in = op.operand(0)->type.shape;
      std::set<int> reduced;
      if (op.kind == K::ArgMax || op.kind == K::ArgMin) {
        reduced.insert(normalized_axis(op.attr_int("axis"), in.size()));
      } else if (op.has_attr("axes")) {
        for (int64_t a : op.attr_ints("axes")) reduced.insert(normalized_axis(a, in.size()));
      } else {
        for (size_t d = 0; d < in.size(); ++d) reduced.insert(int(d));
      }
      if (op.attr_bool("keepdims")) {
        map_same_axes(op, reduced, m);
      } else {  // the kept dims in order
        size_t out = 0;
        for (size_t d = 0; d < in.size(); ++d) {
          if (reduced.count(int(d))) continue;
          m.parallel[out] = true;
          m.operand_axis[0][out++] = int(d);
        }
      }
      return m;
    }
    case ir::OpCategory::Normalize:
      // Normalizations group (issue 23): layer_norm is cut only along the dims before its axis,
      // group_norm only along the batch; every piece reads scale and bias whole.
      if (op.kind == K::LayerNorm || op.kind == K::GroupNorm) {
        int first = op.kind == K::LayerNorm ? normalized_axis(op.attr_int("axis"), rank) : 1;
        std::set<int> normalized;
        for (int d = first; d < int(rank); ++d) normalized.insert(d);
        map_same_axes(op, normalized, m);
        for (size_t k = 1; k < op.operands.size(); ++k) std::fill(m.operand_axis[k].begin(), m.operand_axis[k].end(), -1);
        return m;
      }
      map_same_axes(op, {normalized_axis(op.attr_int("axis"), rank)}, m);  // softmax, cumsum: the axis
      return m;
    case ir::OpCategory::Sort:
      map_same_axes(op, {normalized_axis(op.attr_int("axis"), rank)}, m);
      return m;
    case ir::OpCategory::DataMovement:
      switch (op.kind) {
        case K::Resize: {
          // Every dim: identity dims as any elementwise op's; resized dims through a window of
          // the input rows their outputs sample, each piece a resize with the attribute 'window'
          // that computes the whole op's coordinates (range_split.cpp, piece_attrs).
          if (op.has_attr("window")) return m;  // already a piece, cut to fit
          auto g = std::make_shared<const ir::ResizeGeometry>(ir::resize_geometry(op));
          map_same_axes(op, {}, m);
          for (size_t d = 0; d < rank; ++d) {
            if (g->axes[d].identity) continue;
            Window w;
            w.resize = g;
            w.resize_dim = d;
            m.window[d] = w;
          }
          return m;
        }
        case K::Transpose: {
          const std::vector<int64_t>& perm = op.attr_ints("perm");
          std::fill(m.parallel.begin(), m.parallel.end(), true);
          for (size_t d = 0; d < rank; ++d) m.operand_axis[0][d] = int(perm[d]);
          return m;
        }
        case K::Pad: {
          const std::vector<int64_t>& pads = op.attr_ints("pads");
          std::set<int> padded;
          for (size_t d = 0; d < rank; ++d)
            if (pads[d] != 0 || pads[rank + d] != 0) padded.insert(int(d));
          map_same_axes(op, padded, m);
          return m;
        }
        case K::Reverse: {
          std::set<int> reversed;
          for (int64_t a : op.attr_ints("axes")) reversed.insert(normalized_axis(a, rank));
          map_same_axes(op, reversed, m);
          return m;
        }
        case K::Slice: {
          std::set<int> sliced;
          const std::vector<int64_t>& starts = op.attr_ints("starts");
          for (size_t i = 0; i < starts.size(); ++i) {
            int a = op.has_attr("axes") ? normalized_axis(op.attr_ints("axes")[i], rank) : int(i);
            if (op.operand(0)->type.shape[size_t(a)] != op.result()->type.shape[size_t(a)] ||
                op.attr_ints_or("steps", std::vector<int64_t>(starts.size(), 1))[i] != 1)
              sliced.insert(a);
          }
          map_same_axes(op, sliced, m);
          return m;
        }
        case K::Concat:
          map_same_axes(op, {normalized_axis(op.attr_int("axis"), rank)}, m);
          return m;
        case K::Broadcast:
          std::fill(m.parallel.begin(), m.parallel.end(), true);
          map_right_aligned(op, 0, m);
          return m;
        case K::ScatterElements: {
          // Away from the axis, data, indices and updates line up index for index: along a dim the
          // indices span whole, a piece is the scatter of its own rows (updates land in their row).
          const int axis = normalized_axis(op.attr_int("axis"), rank);
          const Shape& idx = op.operand(1)->type.shape;
          for (size_t d = 0; d < rank; ++d) {
            if (int(d) == axis || idx[d] != op.result()->type.shape[d]) continue;
            m.parallel[d] = true;
            for (size_t k = 0; k < 3; ++k) m.operand_axis[k][d] = int(d);
          }
          return m;
        }
        default: return m;
      }
    default: return m;  // constants and reshape views bind nothing; anything new: not split
  }
}

std::string dim_name(const ir::Op& op, int axis) {
  if (op.kind == ir::OpKind::Im2Col) {  // [N, (G,) P, K]: not the conv layout letters
    const size_t rank = op.result()->type.shape.size();
    if (axis == 0) return "batch";
    if (size_t(axis) == rank - 2) {  // whole rows of a spatial dim, or single positions along the last
      const AxisMap m = axis_map(op);
      return m.window[size_t(axis)] && m.window[size_t(axis)]->unit > 1 ? "output positions (whole rows)" : "output positions";
    }
    return cat("dim ", axis);
  }
  if (op.schema().category == ir::OpCategory::Conv || op.schema().category == ir::OpCategory::Pool) {
    ir::ConvGeometry g = op.schema().category == ir::OpCategory::Pool ? ir::pool_geometry(op) : ir::conv_geometry(op);
    if (axis == g.output_pos[0]) return "batch";
    if (axis == g.output_pos[1]) return "channels";
  }
  return cat("dim ", axis);
}

}  // namespace vkc::codegen
