#include "runtime/barrier_plan.h"

#include "runtime/storage_range.h"

namespace vkc::rt {

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
