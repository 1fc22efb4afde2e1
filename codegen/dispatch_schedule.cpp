#include "codegen/dispatch_schedule.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "module/tensor_lookup.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

// One binding's use of a storage tensor's bytes [begin, end).
struct Use {
  uint64_t begin = 0, end = 0;
  int level = 0;
  int dispatch = 0;
  bool writes = false;
};

}  // namespace

DispatchDependencies dispatch_dependencies(const Manifest& m) {
  const TensorLookup tensors(m);
  // Per storage tensor, its earlier writes and reads. A binding scans the uses of its own storage
  // only, and a read only the writes: a graph input read by every layer costs each reader nothing,
  // and a tensor computed in many pieces (range_split.h) has one write per piece, so this stays
  // near linear in the bindings for real models.
  struct Uses {
    std::vector<Use> writes, reads;
  };
  std::map<std::string, Uses> uses;
  DispatchDependencies out;
  out.level.assign(m.dispatches.size(), 0);
  int window = 0;  // the first dispatch since the last barrier, in graph order
  for (size_t i = 0; i < m.dispatches.size(); ++i) {
    const DispatchDesc& d = m.dispatches[i];
    std::vector<std::pair<std::string, Use>> mine;
    int at = 0, latest = -1;  // level; the last dispatch it depends on
    for (const BindingDesc& b : d.bindings) {
      const TensorDesc& t = tensors.tensor(b.tensor);
      const std::string& root = tensors.storage_of(b.tensor).name;
      uint64_t begin = tensors.offset_in_storage(b.tensor);
      Use u{begin, begin + t.size_bytes(), 0, int(i), b.writes};
      if (u.end == u.begin) continue;  // touches no bytes
      if (auto it = uses.find(root); it != uses.end()) {
        auto wait_for = [&](const std::vector<Use>& earlier) {
          for (const Use& e : earlier)
            if (e.begin < u.end && u.begin < e.end) {
              at = std::max(at, e.level + 1);
              latest = std::max(latest, e.dispatch);
            }
        };
        wait_for(it->second.writes);              // read or write after write
        if (u.writes) wait_for(it->second.reads);  // write after read
      }
      mine.emplace_back(root, u);
    }
    out.level[i] = at;
    if (latest >= window) {
      ++out.graph_order_barriers;
      window = int(i);
    }
    for (auto& [root, u] : mine) {
      u.level = at;
      (u.writes ? uses[root].writes : uses[root].reads).push_back(u);
    }
  }
  return out;
}

std::vector<int> dispatch_levels(const Manifest& m) { return dispatch_dependencies(m).level; }

std::vector<int> order_by_level(const std::vector<int>& level) {
  std::vector<int> order(level.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return level[a] < level[b]; });
  return order;
}

std::vector<LiveRange> arena_live_ranges(const Manifest& m, const std::vector<int>& order, const std::vector<int>& level) {
  const TensorLookup tensors(m);
  // Positions where each level's dispatches start and end (levels are nondecreasing along `order`).
  std::map<int, std::pair<int, int>> span;
  for (size_t k = 0; k < order.size(); ++k) {
    auto [it, fresh] = span.try_emplace(level[size_t(order[k])], int(k), int(k));
    if (!fresh) it->second.second = int(k);
  }
  std::map<std::string, std::pair<int, int>> range;  // storage tensor -> [first, last] position
  for (size_t k = 0; k < order.size(); ++k) {
    const std::pair<int, int>& s = span.at(level[size_t(order[k])]);
    for (const BindingDesc& b : m.dispatches[size_t(order[k])].bindings) {
      const std::string& root = tensors.storage_of(b.tensor).name;
      auto [it, fresh] = range.try_emplace(root, s.first, s.second);
      if (!fresh) it->second.second = s.second;
    }
  }
  std::vector<LiveRange> out;
  for (const TensorDesc& t : m.tensors) {
    if (t.role != TensorRole::Intermediate || !t.view_of.empty()) continue;
    auto it = range.find(t.name);
    if (it == range.end()) continue;  // never bound: no storage needed
    out.push_back({t.name, t.size_bytes(), it->second.first, it->second.second});
  }
  return out;
}

void apply_dispatch_order(ModuleImage& image, const std::vector<int>& order) {
  std::vector<DispatchDesc>& ds = image.manifest.dispatches;
  check(order.size() == ds.size(), "internal: dispatch order of ", order.size(), " for ", ds.size(), " dispatches");
  std::vector<DispatchDesc> sorted;
  std::map<std::string, std::vector<uint32_t>> spirv;
  for (size_t k = 0; k < order.size(); ++k) {
    DispatchDesc d = std::move(ds[size_t(order[k])]);
    auto words = image.spirv.find(d.spv);
    check(words != image.spirv.end(), "internal: dispatch '", d.name, "' has no SPIR-V");
    d.name = cat("d", k, "_", d.kernel);
    std::string spv = d.name + ".spv";
    spirv[spv] = std::move(words->second);
    d.spv = std::move(spv);
    sorted.push_back(std::move(d));
  }
  ds = std::move(sorted);
  image.spirv = std::move(spirv);
}

}  // namespace vkc::codegen
