#include "runtime/storage_plan.h"

#include "support/error.h"

namespace vkc::rt {

StorageRange resolve_storage(const Manifest& m, const std::string& tensor) {
  const TensorDesc& t = m.tensor(tensor);
  const TensorDesc& s = m.storage_of(tensor);
  StorageRange r;
  r.owner = s.name;
  r.size = t.size_bytes();
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
  // Constants and arena tensors share one buffer: their owner is that buffer, not the tensor.
  if (r.kind == StorageKind::Constants || r.kind == StorageKind::Arena) r.owner.clear();
  return r;
}

std::vector<bool> plan_barriers(const Manifest& m) {
  std::vector<bool> barrier(m.dispatches.size(), false);
  std::vector<StorageRange> written, read;  // since the last barrier
  for (size_t i = 0; i < m.dispatches.size(); ++i) {
    const DispatchDesc& d = m.dispatches[i];
    bool hazard = false;
    for (const BindingDesc& b : d.bindings) {
      StorageRange r = resolve_storage(m, b.tensor);
      for (const StorageRange& w : written) hazard |= r.overlaps(w);
      if (b.writes)
        for (const StorageRange& x : read) hazard |= r.overlaps(x);
    }
    if (hazard) {
      barrier[i] = true;
      written.clear();
      read.clear();
    }
    for (const BindingDesc& b : d.bindings)
      (b.writes ? written : read).push_back(resolve_storage(m, b.tensor));
  }
  return barrier;
}

}  // namespace vkc::rt
