// Where each tensor's bytes live at run time, and which dispatches need a barrier before them.
// Plain manifest logic with no Vulkan calls, so it is unit-tested directly.
#pragma once

#include <string>
#include <vector>

#include "module/manifest.h"

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
StorageRange resolve_storage(const Manifest& manifest, const std::string& tensor);

// barrier[i]: dispatch i touches bytes that a dispatch since the last barrier wrote (RAW, WAW), or
// writes bytes that one read (WAR), so a compute->compute barrier must precede it.
std::vector<bool> plan_barriers(const Manifest& manifest);

}  // namespace vkc::rt
