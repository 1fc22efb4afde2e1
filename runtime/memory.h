// Device buffers: one VkDeviceMemory per buffer (no sub-allocator yet; modules allocate a handful
// of buffers: inputs, outputs, constants, arena).
#pragma once

#include "runtime/context_internal.h"

namespace vkc::rt {

enum class BufferUse {
  Storage,  // bound to shaders; device local, and mapped when device-local memory is host visible
  Upload,   // host-visible staging, written by the host
  Download  // host-visible staging, read by the host (cached memory preferred)
};

class Buffer {
 public:
  Buffer(Context::Impl& ctx, uint64_t size, BufferUse use, const std::string& what);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  // Host pointer when the memory is host visible and coherent, else nullptr (use staging).
  uint8_t* mapped() const { return mapped_; }

 private:
  Context::Impl& ctx_;
  uint64_t size_ = 0;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint8_t* mapped_ = nullptr;
  uint64_t counted_ = 0;  // bytes added to ctx.storage_bytes_in_use (storage buffers only)
};

}  // namespace vkc::rt
