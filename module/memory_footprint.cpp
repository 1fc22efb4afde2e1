#include "module/memory_footprint.h"

#include <cstdint>
#include <map>

#include "module/storage_segments.h"
#include "support/error.h"

namespace vkc {

uint64_t storage_buffer_bytes(uint64_t bytes) { return bytes < 4 ? 4 : (bytes + 3) / 4 * 4; }

std::vector<DeviceAllocation> module_allocations(const Manifest& m, uint64_t max_allocation, uint64_t alignment) {
  std::vector<DeviceAllocation> whole;
  for (const TensorDesc& t : m.tensors) {
    if (!t.view_of.empty()) continue;
    if (t.role == TensorRole::Input || t.role == TensorRole::Output)
      whole.push_back({storage_name(t.role, t.name), storage_buffer_bytes(t.size_bytes())});
  }
  whole.push_back({storage_name(TensorRole::Constant, ""), storage_buffer_bytes(m.constants_bytes)});
  whole.push_back({storage_name(TensorRole::Intermediate, ""), storage_buffer_bytes(m.arena_bytes)});
  if (max_allocation == 0) return whole;
  // Storage above one allocation is held in segments (module/storage_segments.h).
  std::map<std::string, std::vector<ByteRange>> used;
  std::vector<DeviceAllocation> out;
  for (DeviceAllocation& a : whole) {
    if (a.bytes <= max_allocation) {
      out.push_back(std::move(a));
      continue;
    }
    if (used.empty()) used = bound_ranges(m);
    std::vector<uint64_t> starts = plan_segments(a.bytes, used[a.what], max_allocation, a.what, alignment);
    for (size_t i = 0; i < starts.size(); ++i) {
      uint64_t end = i + 1 < starts.size() ? starts[i + 1] : a.bytes;
      out.push_back({cat(a.what, " (segment ", i + 1, " of ", starts.size(), ")"), end - starts[i]});
    }
  }
  return out;
}

MemoryFootprint memory_footprint(const std::vector<DeviceAllocation>& allocations) {
  MemoryFootprint f;
  for (const DeviceAllocation& a : allocations) {
    f.total = a.bytes > UINT64_MAX - f.total ? UINT64_MAX : f.total + a.bytes;  // saturates, never wraps
    if (a.bytes > f.largest.bytes || f.largest.what.empty()) f.largest = a;
  }
  return f;
}

std::string device_memory_misfit(const std::vector<DeviceAllocation>& allocations, uint64_t in_use, uint64_t heap,
                                 uint64_t max_allocation) {
  for (const DeviceAllocation& a : allocations)
    if (max_allocation != 0 && a.bytes > max_allocation)
      return cat(a.what, " needs ", a.bytes, " bytes in one allocation, the device allows ", max_allocation,
                 " (maxMemoryAllocationSize)");
  const MemoryFootprint f = memory_footprint(allocations);
  // Written so that no sum can wrap around.
  if (heap != 0 && (f.total > heap || in_use > heap - f.total))
    return cat("its buffers need ", f.total, " bytes of device memory (largest: ", f.largest.what, ", ",
               f.largest.bytes, " bytes)", in_use ? cat(" beside ", in_use, " bytes in use") : std::string(),
               ", the device's memory heap has ", heap, " bytes");
  return "";
}

}  // namespace vkc
