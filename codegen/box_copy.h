// A box of a tensor too large to bind whole, copied into a tensor of its own while binding only
// ranges that fit: how the range split (codegen/range_split.h) gives a piece its operand when the
// piece is not a view (it starts at an offset a device may not bind, or it is not one contiguous
// range, like columns of a row-major matrix).
//
// The source is seen flat (a reshape: no copy) and a window of whole rows is bound as a view at
// an offset aligned DOWN to the view alignment; an ordinary slice kernel then reads the box from
// that window at the residual element offset into the small tensor. Windows that would exceed
// the limit are cut into runs of rows (or, where one row is too large, one index at a time of
// the outer dim) and the copies are rejoined by concat. Only the split path pays these copies:
// a piece that is an aligned contiguous run stays a view.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vkc::codegen {

struct BoxCopyLimits {
  uint64_t bytes;  // the most one binding may hold
  uint64_t align;  // where views may start (view_alignment)
};

// The box [start, start + extent) of `source`, inserted before `position`. Every op it inserts is
// added to `made` (views and copies that fit: not work to split again). Returns a value of shape
// `extent`.
ir::Value* copy_box(ir::Graph& g, ir::Op* position, ir::Value* source, const std::vector<int64_t>& start,
                    const std::vector<int64_t>& extent, const BoxCopyLimits& limits, std::set<const ir::Op*>& made);

}  // namespace vkc::codegen
