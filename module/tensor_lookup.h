// Tensors by name for code that resolves many names, e.g. every binding of every dispatch: the
// Manifest's own find_tensor scans its tensor list, which made such loops quadratic in the module
// size (issue 24 item 11). Built once in linear time.
//
// It points into manifest.tensors: build it after the list is final and drop it before the list
// changes.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "module/manifest.h"
#include "support/error.h"

namespace vkc {

// The tensor that owns `name`'s storage, following view_of links through `lookup` (a Manifest or a
// TensorLookup: anything with tensor(name)); throws on unknown names and on cycles, which cannot be
// longer than `tensor_count`.
template <typename Lookup>
const TensorDesc& follow_views(const Lookup& lookup, const std::string& name, size_t tensor_count) {
  const TensorDesc* t = &lookup.tensor(name);
  for (size_t hops = 0; !t->view_of.empty(); ++hops) {
    check(hops <= tensor_count, "manifest: view cycle through tensor '", name, "'");
    t = &lookup.tensor(t->view_of);
  }
  return *t;
}

// Where `name`'s bytes start inside the tensor that owns its storage: the sum of view_offset along
// its view_of links (0 for a tensor that owns its storage). Same lookups and checks as follow_views.
template <typename Lookup>
uint64_t offset_in_storage(const Lookup& lookup, const std::string& name, size_t tensor_count) {
  uint64_t offset = 0;
  const TensorDesc* t = &lookup.tensor(name);
  for (size_t hops = 0; !t->view_of.empty(); ++hops) {
    check(hops <= tensor_count, "manifest: view cycle through tensor '", name, "'");
    offset += t->view_offset;
    t = &lookup.tensor(t->view_of);
  }
  return offset;
}

class TensorLookup {
 public:
  explicit TensorLookup(const Manifest& manifest);

  // The first tensor of that name (the manifest reader rejects duplicates), or nullptr.
  const TensorDesc* find(const std::string& name) const;
  // As find, but throws vkc::Error if absent.
  const TensorDesc& tensor(const std::string& name) const;
  // Follows view_of links to the tensor that owns the storage; throws on unknown names and cycles.
  const TensorDesc& storage_of(const std::string& name) const;
  // offset_in_storage above, through this index.
  uint64_t offset_in_storage(const std::string& name) const;

 private:
  std::unordered_map<std::string_view, const TensorDesc*> by_name_;
};

}  // namespace vkc
