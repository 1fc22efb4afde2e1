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

// The index maps `maps` (each one's operand the previous one's result, the first reading a
// contiguous tensor of shape `source`) as one strided view of that tensor, or nullopt when one of
// them is not an index map or the chain as a whole is not a strided view.
//
// A reshape may merge dims that are not contiguous with each other as long as a later reshape
// splits them apart again before anything else touches them: the merged dim is carried as its
// parts (extent and stride each) meanwhile. ViT's q, k and v read straight from the in-projection's
// [S, B, 3E] result pass through [S, B * H, D] (B's stride is 3E, not H * D) on their way to
// [B, H, S, D]. A dim still made of parts that do not merge at the end (a transpose of two dims
// merged into one) is not a strided view, and neither is a slice or reversal of one.
std::optional<StridedView> compose_index_maps(const Shape& source, const std::vector<const ir::Op*>& maps);

}  // namespace vkc::codegen
