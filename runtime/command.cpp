#include "runtime/command.h"

#include "support/error.h"

namespace vkc::rt {

CommandPool::CommandPool(Context::Impl& ctx) : ctx_(ctx) {
  VkCommandPoolCreateInfo info = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  info.queueFamilyIndex = ctx.queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  vk_check(ctx.vk.vkCreateCommandPool(ctx.device, &info, nullptr, &pool), "vkCreateCommandPool");
  pool_ = Unique<VkCommandPool>(pool, [&ctx](VkCommandPool p) { ctx.vk.vkDestroyCommandPool(ctx.device, p, nullptr); });
}

VkCommandBuffer CommandPool::allocate() {
  VkCommandBufferAllocateInfo info = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  info.commandPool = pool_.get();
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  vk_check(ctx_.vk.vkAllocateCommandBuffers(ctx_.device, &info, &cmd), "vkAllocateCommandBuffers");
  return cmd;
}

Fence::Fence(Context::Impl& ctx) : ctx_(ctx) {
  VkFenceCreateInfo info = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence fence = VK_NULL_HANDLE;
  vk_check(ctx.vk.vkCreateFence(ctx.device, &info, nullptr, &fence), "vkCreateFence");
  fence_ = Unique<VkFence>(fence, [&ctx](VkFence f) { ctx.vk.vkDestroyFence(ctx.device, f, nullptr); });
}

void Fence::submit_and_wait(VkCommandBuffer cmd) {
  VkFence fence = fence_.get();
  vk_check(ctx_.vk.vkResetFences(ctx_.device, 1, &fence), "vkResetFences");
  VkSubmitInfo submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  vk_check(ctx_.vk.vkQueueSubmit(ctx_.queue, 1, &submit, fence), "vkQueueSubmit");
  VkResult r = ctx_.vk.vkWaitForFences(ctx_.device, 1, &fence, VK_TRUE, kSubmitTimeoutNs);
  if (r == VK_TIMEOUT) {
    // Wait for the work anyway so that the buffers it uses are not freed under it.
    ctx_.vk.vkQueueWaitIdle(ctx_.queue);
    throw Error(cat("GPU execution timed out after ", kSubmitTimeoutNs / 1000000000ull, " s"));
  }
  vk_check(r, "vkWaitForFences");
}

void memory_barrier(Context::Impl& ctx, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  ctx.vk.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace vkc::rt
