// Where every IR value's bytes live in the compiled module.
//
// Reshape views share their operand's bytes, so values are grouped into storage classes (union
// over view ops). Each class has one owning tensor: the graph input or constant it comes from, the
// graph output it ends in, or an arena intermediate. Graph outputs that cannot own their class
// (the class already belongs to an input, a constant or another output) get a copy group.
//
// Two more ops name bytes that exist anyway, at an offset (zero-copy, no dispatch):
//  * a slice whose elements are one contiguous run of its operand (a range of the outermost
//    non-unit dim) is a view `view_offset` bytes into it;
//  * a concat whose operands lie end to end in its result (all dims before the axis are 1) is
//    written in place: each operand's class becomes a view inside the result, so the producers
//    write straight into it. Only when every operand can: produced by a dispatch (not an input or a
//    constant), owning its class whole, no graph output in it, each class once.
// View offsets are multiples of view_alignment(target): the target's minStorageBufferOffsetAlignment
// (at least 16, for kernels that read vec4s), so that a device of that profile can bind them; a
// device needing more refuses the module at load, naming the binding. This is how a tensor larger
// than maxStorageBufferRange is computed piece by piece (codegen/range_split.h).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/dispatch_group.h"
#include "module/manifest.h"
#include "module/target_limits.h"

namespace vkc::codegen {

// The largest minStorageBufferOffsetAlignment Vulkan allows: view offsets that are multiples of it
// can be bound on every device (plan_storage's default when no target is given).
inline constexpr uint64_t kViewAlignment = 256;

// Where views may start when planning for `target`.
inline uint64_t view_alignment(const TargetLimits& target) {
  return std::max<uint64_t>(16, target.min_storage_buffer_offset_alignment);
}

struct StoragePlan {
  std::vector<TensorDesc> tensors;                 // offsets of constants/intermediates unset yet
  std::map<const ir::Value*, std::string> tensor_of;  // every live value -> its tensor name
  std::vector<std::string> inputs, outputs;        // manifest input/output tensor names in order
  std::vector<DispatchGroup> copy_groups;          // to append after the graph's groups
  std::map<std::string, const ir::Value*> constant_source;  // constant tensor -> its value
  std::set<const ir::Op*> zero_copy;               // slices and concats that are views: no dispatch

  TensorDesc& tensor(const std::string& name);
};

StoragePlan plan_storage(const ir::Graph& graph, uint64_t view_alignment = kViewAlignment);

// The element offset of the box [start, start + extent) of a row-major `shape` when its elements
// are one contiguous run (every dim after the last partial one whole, every dim before it a single
// index); nullopt otherwise.
std::optional<int64_t> contiguous_run_offset(const Shape& shape, const std::vector<int64_t>& start,
                                             const std::vector<int64_t>& extent);

// Byte offset of a slice's elements in its operand when they are one contiguous run (unit steps,
// a range of one dim with every dim before it a single index); nullopt otherwise.
std::optional<uint64_t> contiguous_slice_offset(const ir::Op& slice);

// Arena offsets for intermediates from their live ranges (dispatch indices, inclusive), aligned to
// `alignment`. Returns the arena size; writes each offset. `page` (the target's
// maxMemoryAllocationSize; 0: unknown): an arena larger than one allocation is held in several
// (module/storage_segments.h), cut where no binding crosses; so a tensor that fits a page never
// crosses a multiple of it, and a larger one starts at one.
struct LiveRange {
  std::string tensor;
  uint64_t bytes = 0;
  int first = 0, last = 0;
};
uint64_t assign_arena_offsets(const std::vector<LiveRange>& ranges, uint64_t alignment,
                              std::map<std::string, uint64_t>& offsets, uint64_t page = 0);

}  // namespace vkc::codegen
