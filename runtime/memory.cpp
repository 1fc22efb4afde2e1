#include "runtime/memory.h"

#include "runtime/vk_util.h"
#include "support/error.h"

namespace vkc::rt {

namespace {

constexpr VkMemoryPropertyFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// First memory type allowed by `type_bits` that has all of `required`, preferring one that also has
// `preferred`; -1 if none.
int find_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t type_bits,
                     VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  int fallback = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags flags = mem.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return int(i);
    if (fallback < 0) fallback = int(i);
  }
  return fallback;
}

// A device-local memory type that is not host visible; -1 if the device has none (UMA devices).
int find_device_only_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t type_bits) {
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags flags = mem.memoryTypes[i].propertyFlags;
    if ((type_bits & (1u << i)) && (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
        !(flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
      return int(i);
  }
  return -1;
}

}  // namespace

Buffer::Buffer(Context::Impl& ctx, uint64_t size, BufferUse use, const std::string& what)
    : ctx_(ctx), size_(size) {
  check(size > 0, "internal error: zero-size buffer for ", what);
  VkBufferCreateInfo info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = size;
  info.usage = use == BufferUse::Storage ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                               VK_BUFFER_USAGE_TRANSFER_DST_BIT
               : use == BufferUse::Upload ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                                          : VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(ctx.vk.vkCreateBuffer(ctx.device, &info, nullptr, &buffer_), "vkCreateBuffer",
           cat(what, ", ", size, " bytes"));
  try {
    VkMemoryRequirements req{};
    ctx.vk.vkGetBufferMemoryRequirements(ctx.device, buffer_, &req);
    int type = -1;
    if (use == BufferUse::Storage) {
      // Discrete GPUs: plain device-local memory, with uploads and downloads through staging.
      // Host-visible device-local memory (ReBAR) halved kernel bandwidth on NVIDIA H100/H200 with
      // driver 580 (copy 1.4-2.1 TB/s against 3.35 TB/s; bench/RESULTS.md, 2026-11-21). Devices
      // that share memory with the host (integrated, CPU) map storage buffers directly instead,
      // which saves the staging copy.
      bool staged = ctx.force_staging || ctx.info.type == "discrete";
      if (staged) type = find_device_only_type(ctx.memory, req.memoryTypeBits);
      if (type < 0)
        type = find_memory_type(ctx.memory, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                staged ? 0 : kHostCoherent);
      if (type < 0) type = find_memory_type(ctx.memory, req.memoryTypeBits, 0, 0);
    } else {
      VkMemoryPropertyFlags preferred =
          use == BufferUse::Download ? VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_HOST_CACHED_BIT) : 0u;
      type = find_memory_type(ctx.memory, req.memoryTypeBits, kHostCoherent, preferred);
    }
    check(type >= 0, "no suitable Vulkan memory type for ", what);
    VkMemoryAllocateInfo alloc = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = uint32_t(type);
    vk_check(ctx.vk.vkAllocateMemory(ctx.device, &alloc, nullptr, &memory_), "vkAllocateMemory",
             cat("asked ", req.size, " bytes for ", what));
    vk_check(ctx.vk.vkBindBufferMemory(ctx.device, buffer_, memory_, 0), "vkBindBufferMemory", what);
    if (use == BufferUse::Storage) {
      counted_ = req.size;
      ctx.storage_bytes_in_use += counted_;
    }
    VkMemoryPropertyFlags flags = ctx.memory.memoryTypes[type].propertyFlags;
    bool map = (flags & kHostCoherent) == kHostCoherent &&
               !(use == BufferUse::Storage && (ctx.force_staging || ctx.info.type == "discrete"));
    if (map) {
      void* p = nullptr;
      vk_check(ctx.vk.vkMapMemory(ctx.device, memory_, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory", what);
      mapped_ = static_cast<uint8_t*>(p);
    }
  } catch (...) {
    ctx.storage_bytes_in_use -= counted_;
    if (memory_) ctx.vk.vkFreeMemory(ctx.device, memory_, nullptr);
    ctx.vk.vkDestroyBuffer(ctx.device, buffer_, nullptr);
    throw;
  }
}

Buffer::~Buffer() {
  // Freeing mapped memory unmaps it implicitly.
  ctx_.vk.vkDestroyBuffer(ctx_.device, buffer_, nullptr);
  ctx_.vk.vkFreeMemory(ctx_.device, memory_, nullptr);
  ctx_.storage_bytes_in_use -= counted_;
}

}  // namespace vkc::rt
