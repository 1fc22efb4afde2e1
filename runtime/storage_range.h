// Where each tensor's bytes live at run time: which device buffer, at which offset. Program binds
// and copies through it, and barrier_plan.h compares the ranges for hazards. Plain manifest logic
// with no Vulkan calls, so it is unit-tested directly.
#pragma once

#include <string>

#include "module/manifest.h"
#include "module/tensor_lookup.h"

namespace vkc::rt {

enum class StorageKind { Input, Output, Constants, Arena };

// A tensor's byte range: in the buffer of input/output `owner`, or in the constants/arena buffer.
struct StorageRange {
  StorageKind kind = StorageKind::Arena;
  std::string owner;  // the storage tensor (inputs/outputs have a buffer each)
  uint64_t offset = 0;
  uint64_t size = 0;  // the (view) tensor's own size in bytes

  bool overlaps(const StorageRange& o) const {
    return kind == o.kind && owner == o.owner && size > 0 && o.size > 0 && offset < o.offset + o.size &&
           o.offset < offset + size;
  }
};

// Resolves views to their storage tensor. Views share the storage's first bytes (reshapes).
StorageRange resolve_storage(const TensorLookup& tensors, const std::string& tensor);
// The same for one name; loops over bindings build one TensorLookup and use the overload above.
StorageRange resolve_storage(const Manifest& manifest, const std::string& tensor);

}  // namespace vkc::rt
