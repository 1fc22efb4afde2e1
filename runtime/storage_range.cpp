#include "runtime/storage_range.h"

#include <cstdint>

#include "support/error.h"

namespace vkc::rt {

namespace {

// Manifest (one name: a scan) or TensorLookup (many names: indexed); both have tensor/storage_of.
template <typename Lookup>
StorageRange resolve(const Lookup& m, const std::string& tensor) {
  const TensorDesc& t = m.tensor(tensor);
  const TensorDesc& s = m.storage_of(tensor);  // also rejects unknown names and view cycles
  StorageRange r;
  r.owner = s.name;
  r.size = t.size_bytes();
  // A view starts view_offset bytes into what it views (slices, in-place concat operands).
  // (storage_of above already refused view cycles.)
  const uint64_t within = offset_in_storage(m, tensor, SIZE_MAX);
  switch (s.role) {
    case TensorRole::Input: r.kind = StorageKind::Input; break;
    case TensorRole::Output: r.kind = StorageKind::Output; break;
    case TensorRole::Constant:
      r.kind = StorageKind::Constants;
      r.offset = s.offset;
      break;
    case TensorRole::Intermediate:
      r.kind = StorageKind::Arena;
      r.offset = s.offset;
      break;
  }
  r.offset += within;
  // Constants and arena tensors share one buffer: their owner is that buffer, not the tensor.
  if (r.kind == StorageKind::Constants || r.kind == StorageKind::Arena) r.owner.clear();
  return r;
}

}  // namespace

StorageRange resolve_storage(const TensorLookup& tensors, const std::string& tensor) {
  return resolve(tensors, tensor);
}

StorageRange resolve_storage(const Manifest& manifest, const std::string& tensor) {
  return resolve(manifest, tensor);
}

}  // namespace vkc::rt
