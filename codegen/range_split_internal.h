// What the range split's files share (codegen/range_split.cpp and the cuts that live in files of
// their own, such as codegen/range_split_sort.cpp): the limits of one binding, the size tests, and
// the slicing helpers. Private to codegen/range_split*.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/int_math.h"

namespace vkc::codegen::split_detail {

// One binding's limits, from the target (limits_of in range_split.cpp).
struct Limits {
  uint64_t bytes;
  int64_t elements;
  uint64_t align;          // where views may start (codegen/storage_plan.h)
  std::string range_name;  // "target 'lavapipe' maxStorageBufferRange 134217728"
  bool int64_arithmetic = true;  // shaderInt64: i64 indices may be added to (moved by a block's start)
};

// The most pieces one op is cut into (compile time grows with them: every piece is a dispatch).
inline constexpr int64_t kMaxPieces = 4096;

inline uint64_t bytes_of(const ir::TensorType& t, const std::vector<int64_t>& extent) {
  return uint64_t(shape_numel(extent)) * dtype_size(t.dtype);
}

// Whether a box of `extent` of a tensor of type t is beyond one binding.
inline bool too_big(const ir::TensorType& t, const std::vector<int64_t>& extent, const Limits& l) {
  return bytes_of(t, extent) > l.bytes || shape_numel(extent) > l.elements;
}

// The longest block of a tensor along `axis` (every other dim whole) one binding holds, cut to a
// multiple of the offset-alignment granule where longer than one. 0 when not one slice fits.
int64_t binding_block(const ir::TensorType& t, int64_t axis, const Limits& l);
int64_t binding_block(const ir::Value* x, int64_t axis, const Limits& l);

// A slice [k0, k1) of `v` along `axis`, inserted before `at`: a view where it is one aligned run,
// else a copy (codegen/box_copy.h where `v` is too large to bind whole, an ordinary slice kernel
// otherwise). The slices it makes go into `made`, which the split does not cut again.
ir::Value* slice_along(ir::Graph& g, ir::Op* at, ir::Value* v, int64_t axis, int64_t k0, int64_t k1, const Limits& l,
                       std::set<const ir::Op*>& made);

// The flat pieces `flats` (contiguous runs of a result of type `whole`, in row-major order, at
// any offsets) joined into it: one concat where it fits a binding, else chunks that start at
// aligned offsets and fit one, each a concat of the parts of the pieces it overlaps, the chunks
// joined in place. `add` inserts an op (the caller names it and marks it made).
ir::Value* assemble_runs(const std::vector<ir::Value*>& flats, const ir::TensorType& whole, const Limits& l,
                         const std::function<ir::Value*(ir::OpKind, std::vector<ir::Value*>, ir::AttrMap)>& add);

// A sort, or a topk whose k is as long as a block of its axis, along an axis beyond one binding:
// an odd-even transposition sort over blocks of the axis (codegen/range_split_sort.cpp). Returns
// the first round's sorts (empty when the op is of another kind or no block plan fits) and sets
// `how`; the op is replaced and erased.
std::vector<ir::Op*> split_sort_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                       std::string& how);

// A gather whose data is beyond one binding along the gathered axis: a gather per block of the
// axis, each index's block chosen by selects (codegen/range_split_gather.cpp).
std::vector<ir::Op*> split_gather_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                         std::string& how);

}  // namespace vkc::codegen::split_detail
