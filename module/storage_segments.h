// Storage larger than one device allocation, placed in several (issue #25 item 2).
//
// maxMemoryAllocationSize caps one VkDeviceMemory (about 4 GiB on NVIDIA's driver, 1 GiB as the
// Vulkan minimum), and a buffer must lie in one allocation. An input, output, the arena or the
// constants larger than that is held in segments, each its own buffer and allocation: consecutive
// byte ranges cut only where no dispatch binding straddles (a tensor split over buffer ranges binds
// pieces, codegen/range_split.h, and the cuts fall between them) and at multiples of the device's
// minStorageBufferOffsetAlignment, so every binding's offset inside its segment keeps it.
// Copies between host and device are cut at the segments too. Plain manifest logic: both the
// runtime and `vk-compile --report` use it, and it is unit-tested without a device.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "module/manifest.h"

namespace vkc {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

// The name of the storage a root tensor of `role` owns, as reports, errors and the maps below use
// it: "input 'x'", "output 'y'", "constants", "arena".
std::string storage_name(TensorRole role, const std::string& tensor);

// The byte ranges the dispatches bind in each storage, keyed by storage_name.
std::map<std::string, std::vector<ByteRange>> bound_ranges(const Manifest& m);

// Segment starts (the first is 0) for a storage of `size` bytes in which `used` ranges must each
// lie inside one segment, with every segment at most `max_segment` bytes. One segment when `size`
// fits. Cuts are multiples of `alignment` (a power of two). Throws vkc::Error naming `what` and
// both numbers when a used range cannot fit one segment.
std::vector<uint64_t> plan_segments(uint64_t size, std::vector<ByteRange> used, uint64_t max_segment,
                                    const std::string& what, uint64_t alignment = 256);

// Segment starts for a buffer nothing binds in part (staging, device-resident tensors): equal
// segments of the largest multiple of 256 bytes within `max_segment`.
std::vector<uint64_t> even_segments(uint64_t size, uint64_t max_segment);

}  // namespace vkc
