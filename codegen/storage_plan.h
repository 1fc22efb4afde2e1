// Where every IR value's bytes live in the compiled module.
//
// Reshape views share their operand's bytes, so values are grouped into storage classes (union
// over view ops). Each class has one owning tensor: the graph input or constant it comes from, the
// graph output it ends in, or an arena intermediate. Graph outputs that cannot own their class
// (the class already belongs to an input, a constant or another output) get a copy group.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/dispatch_group.h"
#include "module/manifest.h"

namespace vkc::codegen {

struct StoragePlan {
  std::vector<TensorDesc> tensors;                 // offsets of constants/intermediates unset yet
  std::map<const ir::Value*, std::string> tensor_of;  // every live value -> its tensor name
  std::vector<std::string> inputs, outputs;        // manifest input/output tensor names in order
  std::vector<DispatchGroup> copy_groups;          // to append after the graph's groups
  std::map<std::string, const ir::Value*> constant_source;  // constant tensor -> its value

  TensorDesc& tensor(const std::string& name);
};

StoragePlan plan_storage(const ir::Graph& graph);

// Arena offsets for intermediates from their live ranges (dispatch indices, inclusive), aligned to
// `alignment`. Returns the arena size; writes each offset.
struct LiveRange {
  std::string tensor;
  uint64_t bytes = 0;
  int first = 0, last = 0;
};
uint64_t assign_arena_offsets(const std::vector<LiveRange>& ranges, uint64_t alignment,
                              std::map<std::string, uint64_t>& offsets);

}  // namespace vkc::codegen
