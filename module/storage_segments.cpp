#include "module/storage_segments.h"

#include <algorithm>

#include "module/tensor_lookup.h"
#include "support/error.h"

namespace vkc {
namespace {

// Even segments (staging, device tensors) cut at 256 bytes: any device's alignment divides it.
constexpr uint64_t kEvenAlignment = 256;

uint64_t round_down(uint64_t x, uint64_t a) { return x / a * a; }
uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

std::string storage_name(TensorRole role, const std::string& tensor) {
  switch (role) {
    case TensorRole::Input: return cat("input '", tensor, "'");
    case TensorRole::Output: return cat("output '", tensor, "'");
    case TensorRole::Constant: return "constants";
    case TensorRole::Intermediate: return "arena";
  }
  return "arena";
}

std::map<std::string, std::vector<ByteRange>> bound_ranges(const Manifest& m) {
  std::map<std::string, std::vector<ByteRange>> out;
  const TensorLookup tensors(m);
  for (const DispatchDesc& d : m.dispatches)
    for (const BindingDesc& b : d.bindings) {
      const TensorDesc& t = tensors.tensor(b.tensor);
      const TensorDesc& root = tensors.storage_of(b.tensor);
      uint64_t base = root.role == TensorRole::Constant || root.role == TensorRole::Intermediate ? root.offset : 0;
      if (t.size_bytes() > 0) out[storage_name(root.role, root.name)].push_back({base + tensors.offset_in_storage(b.tensor), t.size_bytes()});
    }
  return out;
}

std::vector<uint64_t> plan_segments(uint64_t size, std::vector<ByteRange> used, uint64_t max_segment,
                                    const std::string& what, uint64_t alignment) {
  std::vector<uint64_t> starts{0};
  if (max_segment == 0 || size <= max_segment) return starts;
  const uint64_t a = std::max<uint64_t>(alignment, 4);  // buffer sizes are whole words
  check(max_segment >= a, what, ": maxMemoryAllocationSize ", max_segment, " is below ", a, " bytes");
  // Ranges by start, with the furthest end of any range starting at or before each: a cut at p is
  // inside some range exactly when a range starting before p ends after it.
  std::sort(used.begin(), used.end(), [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  std::vector<uint64_t> reach(used.size());
  for (size_t i = 0; i < used.size(); ++i)
    reach[i] = std::max(i ? reach[i - 1] : 0, used[i].offset + used[i].size);
  auto straddled = [&](uint64_t p) {
    auto it = std::lower_bound(used.begin(), used.end(), p, [](const ByteRange& r, uint64_t x) { return r.offset < x; });
    return it != used.begin() && reach[size_t(it - used.begin()) - 1] > p;
  };
  // Candidate cuts: where ranges start and (rounded up) end.
  std::vector<uint64_t> candidates;
  for (const ByteRange& r : used) {
    if (r.offset % a == 0) candidates.push_back(r.offset);
    candidates.push_back(round_up(r.offset + r.size, a));
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (uint64_t s = 0; size - s > max_segment;) {
    const uint64_t limit = round_down(s + max_segment, a);
    uint64_t cut = straddled(limit) ? 0 : limit;
    for (auto it = std::upper_bound(candidates.begin(), candidates.end(), limit); cut == 0 && it != candidates.begin();) {
      uint64_t p = *--it;
      if (p <= s) break;
      if (!straddled(p)) cut = p;
    }
    if (cut == 0) {
      // The range across `limit` that starts first names what does not fit.
      ByteRange big{};
      for (const ByteRange& r : used)
        if (r.offset < limit && r.offset + r.size > limit) {
          big = r;
          break;
        }
      throw Error(cat(what, ": a binding of ", big.size, " bytes at offset ", big.offset,
                      " cannot lie in one allocation of at most ", max_segment,
                      " bytes (maxMemoryAllocationSize) with the bindings around it"));
    }
    starts.push_back(cut);
    s = cut;
  }
  return starts;
}

std::vector<uint64_t> even_segments(uint64_t size, uint64_t max_segment) {
  std::vector<uint64_t> starts{0};
  if (max_segment == 0 || size <= max_segment) return starts;
  const uint64_t step = std::max(round_down(max_segment, kEvenAlignment), kEvenAlignment);
  for (uint64_t s = step; s < size; s += step) starts.push_back(s);
  return starts;
}

}  // namespace vkc
