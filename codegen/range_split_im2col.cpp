// im2col whose one output row (all output positions of one index of the first spatial dim, times
// the columns K) is beyond one binding: its result dim P runs over every output spatial dim, so no
// run of whole rows fits. It is cut first into one piece per output row (per image): each an
// im2col of the input rows that row's window reads, with pads of its own, whose result is one row
// of P at an aligned offset of the whole result (a view: the rows are joined in place). A later
// round cuts each piece along its next spatial dim (codegen/split_axes.cpp: an im2col with one
// output row is cut along the columns, with their halo), like any other im2col.
#include <optional>
#include <tuple>

#include "codegen/range_split_parts.h"
#include "codegen/storage_plan.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::split_detail {

std::vector<ir::Op*> split_im2col_rows(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                       std::string& how) {
  if (op->kind != ir::OpKind::Im2Col) return {};
  const AxisMap m = axis_map(*op);
  const Shape& out = op->result()->type.shape;
  if (out.size() != 3 || !m.window[1] || m.window[1]->unit == 1) return {};  // rows of one position: no finer cut
  const Window& w = *m.window[1];
  // Each row a view of the result: its offset a multiple of the alignment, for every image too.
  const uint64_t es = dtype_size(op->result()->type.dtype);
  const uint64_t row_bytes = uint64_t(w.unit) * uint64_t(out[2]) * es;
  if (row_bytes % l.align != 0 || (uint64_t(out[1]) * uint64_t(out[2]) * es) % l.align != 0) return {};
  const int64_t pieces = out[0] * w.rows(out[1]);
  if (pieces > kMaxPieces) return {};
  // Each row's input rows (all channels) must fit one binding, or be one aligned run of the input
  // (a view): a copy of them would itself be beyond a binding.
  const ir::TensorType& in = op->operand(0)->type;
  const int in_dim = m.operand_axis[0][1];
  for (int64_t row = 0; row < w.rows(out[1]); ++row) {
    Ints start(in.shape.size(), 0), extent = in.shape;
    extent[0] = 1;  // one image at a time
    std::tie(start[size_t(in_dim)], extent[size_t(in_dim)]) = w.input_rows(row * w.unit, w.unit, in.shape[size_t(in_dim)]);
    extent[size_t(in_dim)] -= start[size_t(in_dim)];
    if (!too_big(in, extent, l)) continue;
    for (int64_t n = 0; n < out[0]; ++n) {
      start[0] = n;
      const std::optional<int64_t> at = contiguous_run_offset(in.shape, start, extent);
      if (!at || (uint64_t(*at) * dtype_size(in.dtype)) % l.align != 0) return {};
    }
  }
  const std::string dim = dim_name(*op, 1);
  std::vector<ir::Op*> rows = cut_into_pieces(g, op, Cut{1, w.unit, pieces}, bound_tensors(*op, m, {}), l, made, false);
  how = cat("im2col rows, one piece per output row of ", w.unit, " positions (", dim,
            ") with the input rows its window reads, each cut again along its columns");
  return rows;
}

}  // namespace vkc::codegen::split_detail
