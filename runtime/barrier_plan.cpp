#include "runtime/barrier_plan.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>

#include "runtime/storage_range.h"

namespace vkc::rt {
namespace {

// The bytes some dispatches since the last barrier touched, per buffer, as disjoint sorted
// intervals, so each binding is checked in O(log n) rather than against every earlier binding:
// a module with thousands of dispatches between barriers stays linear (issue 24 item 11).
class ByteSet {
 public:
  bool overlaps(const StorageRange& r) const {
    if (r.size == 0) return false;  // StorageRange::overlaps: empty ranges touch nothing
    auto buffer = intervals_.find({r.kind, r.owner});
    if (buffer == intervals_.end()) return false;
    const std::map<uint64_t, uint64_t>& set = buffer->second;
    auto it = set.lower_bound(r.offset + r.size);  // the first interval starting at or past the end
    if (it == set.begin()) return false;
    return std::prev(it)->second > r.offset;  // the last one starting before the end
  }
  void add(const StorageRange& r) {
    if (r.size == 0) return;
    std::map<uint64_t, uint64_t>& set = intervals_[{r.kind, r.owner}];
    uint64_t begin = r.offset, end = r.offset + r.size;
    auto it = set.upper_bound(begin);
    if (it != set.begin() && std::prev(it)->second >= begin) --it;  // merge with one that reaches us
    while (it != set.end() && it->first <= end) {
      begin = std::min(begin, it->first);
      end = std::max(end, it->second);
      it = set.erase(it);
    }
    set.emplace(begin, end);
  }
  void clear() { intervals_.clear(); }

 private:
  std::map<std::pair<StorageKind, std::string>, std::map<uint64_t, uint64_t>> intervals_;
};

}  // namespace

std::vector<bool> plan_barriers(const Manifest& m) {
  const TensorLookup tensors(m);
  std::vector<bool> barrier(m.dispatches.size(), false);
  ByteSet written, read;  // since the last barrier
  for (size_t i = 0; i < m.dispatches.size(); ++i) {
    const DispatchDesc& d = m.dispatches[i];
    std::vector<StorageRange> ranges;
    bool hazard = false;
    for (const BindingDesc& b : d.bindings) {
      ranges.push_back(resolve_storage(tensors, b.tensor));
      hazard |= written.overlaps(ranges.back()) || (b.writes && read.overlaps(ranges.back()));
    }
    if (hazard) {
      barrier[i] = true;
      written.clear();
      read.clear();
    }
    for (size_t b = 0; b < d.bindings.size(); ++b) (d.bindings[b].writes ? written : read).add(ranges[b]);
  }
  return barrier;
}

std::vector<size_t> plan_record_order(const Manifest& m, const std::vector<bool>& barrier) {
  std::vector<size_t> order(m.dispatches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t first = 0; first < order.size();) {
    size_t end = first + 1;
    while (end < order.size() && !barrier[end]) ++end;
    auto more_workgroup_memory = [&](size_t a, size_t b) {
      return m.dispatches[a].workgroup_memory_bytes > m.dispatches[b].workgroup_memory_bytes;
    };
    std::stable_sort(order.begin() + std::ptrdiff_t(first), order.begin() + std::ptrdiff_t(end), more_workgroup_memory);
    first = end;
  }
  return order;
}

}  // namespace vkc::rt
