// A chain of index maps (reshape views, transposes, slices, broadcasts, reversals) composed into
// one strided view of the chain's source: element c of the result is source element
// offset + sum(c[d] * strides[d]). A prologue then unravels each index once, where a function per
// map unravels it once per map (a div and a mod per dim each, real divisions at shapes such as
// ViT's 197 tokens and 12 heads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace vkc::codegen {

struct StridedView {
  Shape shape;
  std::vector<int64_t> strides;  // in elements of the source; 0 where broadcast, negative where reversed
  int64_t offset = 0;
  // No reversal in it: every address is the offset plus non-negative multiples of the strides, so
  // kernels can compute them in unsigned arithmetic piece by piece (a row's offset, then + k).
  bool forward() const {
    return offset >= 0 && std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s >= 0; });
  }
};

// The contiguous view of a tensor of `shape`.
StridedView contiguous_view(const Shape& shape);

// `view` after one index-map op whose operand it describes (result shape `out`), or nullopt when
// the op is not an index map or a reshape cannot be written as strides (it merges dims that are
// not contiguous with each other).
std::optional<StridedView> apply_index_map(const StridedView& view, const ir::Op& op, const Shape& out);

}  // namespace vkc::codegen
