#include "module/tensor_lookup.h"

#include "support/error.h"

namespace vkc {

TensorLookup::TensorLookup(const Manifest& manifest) {
  by_name_.reserve(manifest.tensors.size());
  for (const TensorDesc& t : manifest.tensors) by_name_.try_emplace(t.name, &t);
}

const TensorDesc* TensorLookup::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const TensorDesc& TensorLookup::tensor(const std::string& name) const {
  const TensorDesc* t = find(name);
  check(t != nullptr, "module has no tensor named '", name, "'");
  return *t;
}

const TensorDesc& TensorLookup::storage_of(const std::string& name) const {
  return follow_views(*this, name, by_name_.size());
}

uint64_t TensorLookup::offset_in_storage(const std::string& name) const {
  return vkc::offset_in_storage(*this, name, by_name_.size());
}

}  // namespace vkc
