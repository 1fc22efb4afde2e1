// Along which dims of its result each op can be computed piece by piece, and what each piece
// reads of each operand: the per-op rules behind the range split (codegen/range_split.h). A dim
// is listed only where pieces computed on their own and rejoined equal the whole op exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/resize_geometry.h"

namespace vkc::codegen {

// A result dim along which operand 0 is read through a sliding window (conv and pooling rows):
// output indices [o, o + r) read input indices [o * stride - pad, (o + r - 1) * stride - pad + span)
// of the mapped dim, the overlap between pieces being the halo. Pieces get their own pads.
struct Window {
  int64_t stride = 1, span = 1, pad_begin = 0;  // span: (kernel - 1) * dilation + 1
  int spatial = 0;                              // which spatial dim (index into pads)
  // Result indices per output row: 1, except im2col, whose result dim P runs over all output
  // spatial dims (row-major), so that one row of spatial dim 0 is `unit` indices of P. Pieces are
  // then whole rows: runs of a multiple of `unit`.
  int64_t unit = 1;
  // conv_transpose: output row o gathers input rows i with i * stride + k * dilation = o + pad.
  bool transposed = false;
  // resize along a resized dim: output rows read the input rows their taps sample
  // (ir::resize_input_range), about |slope| per output row plus the taps; a piece is a resize with
  // the attribute 'window' (range_split.cpp, piece_attrs). stride, span and pad are unused.
  std::shared_ptr<const ir::ResizeGeometry> resize = nullptr;
  size_t resize_dim = 0;
  // Pieces start at input rows that no multiple of a stride gives: operand pieces are copies.
  bool uneven() const { return transposed || resize != nullptr; }
  int64_t rows(int64_t indices) const { return (indices + unit - 1) / unit; }
  // Input rows [first, last) that result indices [begin, begin + run) read, within [0, dim).
  std::pair<int64_t, int64_t> input_rows(int64_t begin, int64_t run, int64_t dim) const;
  // The most input rows any run of `run` result indices reads, and the longest run that reads at
  // most `rows` input rows (0: none).
  int64_t max_input_rows(int64_t run) const;
  int64_t max_run(int64_t rows) const;
};

// Per dim of the op's results: whether the op can be computed piece by piece along it, and which
// dim of each operand follows it (-1: every piece reads that operand whole along it).
struct AxisMap {
  std::vector<bool> parallel;                  // per result dim (every result has result 0's rank)
  std::vector<std::vector<int>> operand_axis;  // [operand][result dim]
  std::vector<std::optional<Window>> window;   // per result dim: operand 0 read through a window
};

// No dim can be cut: every operand read whole.
AxisMap no_parallel(const ir::Op& op);

// Pooling: batch, channels and (through windows) the output spatial dims, each piece's values and
// indices those of its own input (max_pool_with_indices: positions in the piece's input).
AxisMap pool_axis_map(const ir::Op& op);

// The rules per op category (a new category is not split until it gets its row here).
AxisMap axis_map(const ir::Op& op);

// "batch" / "channels" for conv and pooling results, else "dim N": for reports.
std::string dim_name(const ir::Op& op, int axis);

// A possibly negative axis attribute as an index into `rank` dims.
inline int normalized_axis(int64_t axis, size_t rank) { return int(axis < 0 ? axis + int64_t(rank) : axis); }

}  // namespace vkc::codegen
