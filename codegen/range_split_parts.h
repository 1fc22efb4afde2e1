// More of what the range split's files share (beside codegen/range_split_internal.h: the limits,
// the size tests, the slicing helpers): how an op's tensors follow its result dims, the cut choice
// and the splitter, and the cuts of session 18 that live in files of their own
// (range_split_<what>.cpp). Private to codegen/range_split*.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "codegen/range_split_internal.h"
#include "codegen/split_axes.h"
#include "ir/graph.h"

namespace vkc::codegen::split_detail {

using Ints = std::vector<int64_t>;

// One tensor an op binds: an operand (dims follow result dims through `axis_of`) or a result.
struct Bound {
  std::string label;       // "input", "result 0", ...
  const ir::Value* value;
  std::vector<int> axis_of;  // per result dim: this tensor's dim, or -1
  bool in_registers = false;  // fused: never bound, so its size is no limit
  std::vector<std::optional<Window>> window;  // per result dim: read through a window (operand 0)
  bool is_result = false;
};

struct Cut {
  int axis = -1;     // result dim cut into runs; the dims before it go one index at a time
  int64_t run = 0;   // indices of `axis` per piece
  int64_t pieces = 0;
};

std::vector<Bound> bound_tensors(const ir::Op& op, const AxisMap& m, const std::set<const ir::Value*>& in_registers);

// The cut with the fewest pieces, or the reason there is none (copy_operands: operand pieces may
// be copies, result pieces contiguous runs at any offset).
std::variant<Cut, std::string> choose_cut(const ir::Op& op, const AxisMap& m, const std::vector<Bound>& tensors,
                                          const Limits& l, bool copy_operands);

// `op` cut by `cut` into pieces (erased, its uses redirected to the joined pieces); `assemble`:
// result pieces written into aligned chunks (the copy_operands cut). `operand0_starts`: where
// given, per piece, the start of its box of operand 0 in the whole operand (every dim).
std::vector<ir::Op*> cut_into_pieces(ir::Graph& g, ir::Op* op, const Cut& cut, std::vector<Bound> tensors,
                                     const Limits& l, std::set<const ir::Op*>& made, bool assemble,
                                     std::vector<Ints>* operand0_starts = nullptr);

// The blocks' results joined back along `axis`, before `op`.
ir::Value* join_along(ir::Graph& g, ir::Op* op, const std::vector<ir::Value*>& parts, int64_t axis, const char* what);

// The cuts in files of their own, tried in split_to_binding_limits when no cut of the op's
// parallel dims fits. Each returns the pieces (empty: not such an op, or no cut fits) and sets
// `how` for the report.

// layer_norm and group_norm (instance norm is a group_norm) whose normalized group is beyond one
// binding: the mean, the variance around it (two passes) and the normalization as ordinary ops
// that the later rounds cut (range_split_norm.cpp).
std::vector<ir::Op*> split_normalization(ir::Graph& g, ir::Op* op, std::string& how);
// softmax / log_softmax whose one row is beyond a binding, as the ops they are made of.
std::vector<ir::Op*> split_softmax(ir::Graph& g, ir::Op* op, std::string& how);

// max_pool_with_indices cut like max_pool, each piece's indices moved to the whole input's flat
// positions (range_split_pool_indices.cpp).
std::vector<ir::Op*> split_pool_with_indices(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                             std::string& how);

// scatter_nd (along dim 0) and scatter_elements (along its axis) whose data is beyond one
// binding: per-block scatters with the indices moved into the block; a scatter_nd whose indices
// or updates are beyond it: a chain over blocks of its tuples (range_split_scatter.cpp).
std::vector<ir::Op*> split_scatter_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                          std::string& how);

// im2col whose one output row is beyond one binding: one piece per output row, each cut again
// along its columns in a later round (range_split_im2col.cpp).
std::vector<ir::Op*> split_im2col_rows(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                       std::string& how);

}  // namespace vkc::codegen::split_detail
