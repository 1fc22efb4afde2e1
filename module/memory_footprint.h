// The device memory a module takes when loaded: one buffer per input and output, the constants and
// the arena, sized as rt::Program allocates them. `vk-compile --report` prints it; rt::Program
// checks it against the device's memory before allocating anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "module/manifest.h"

namespace vkc {

// A buffer's size for a tensor of `bytes`: whole 32-bit words, at least one (storage buffers must
// not be empty, and kernels on targets without 8-bit storage read 8-bit tensors as packed words).
uint64_t storage_buffer_bytes(uint64_t bytes);

struct DeviceAllocation {
  std::string what;  // "input 'x'", "output 'y'", "constants", "arena"
  uint64_t bytes = 0;
};

// The module's device buffers, in the order rt::Program allocates them. With `max_allocation`
// (maxMemoryAllocationSize; 0: no limit), a storage above it is listed as the segments it is held
// in (module/storage_segments.h); vkc::Error when a binding cannot lie in one segment.
// `alignment`: the device's minStorageBufferOffsetAlignment, where segments may be cut.
std::vector<DeviceAllocation> module_allocations(const Manifest& m, uint64_t max_allocation = 0,
                                                 uint64_t alignment = 256);

struct MemoryFootprint {
  uint64_t total = 0;        // all buffers together: the module's peak device memory
  DeviceAllocation largest;  // the largest single buffer
};
MemoryFootprint memory_footprint(const std::vector<DeviceAllocation>& allocations);

// "" when `allocations` fit beside `in_use` bytes already allocated; otherwise one line naming the
// allocation and both numbers: the first one above `max_allocation` (maxMemoryAllocationSize), or
// the total above `heap` (the device-local heaps). A limit of 0 is unknown and not checked.
std::string device_memory_misfit(const std::vector<DeviceAllocation>& allocations, uint64_t in_use, uint64_t heap,
                                 uint64_t max_allocation);

}  // namespace vkc
