// Command pool, command buffers and fenced submission with a timeout.
#pragma once

#include "runtime/context_internal.h"
#include "runtime/vk_util.h"

namespace vkc::rt {

// How long a submission may run before execute() gives up: generous, since CPU devices are slow.
inline constexpr uint64_t kSubmitTimeoutNs = 60ull * 1000 * 1000 * 1000;

class CommandPool {
 public:
  explicit CommandPool(Context::Impl& ctx);
  // Command buffers are freed with the pool.
  VkCommandBuffer allocate();

 private:
  Context::Impl& ctx_;
  Unique<VkCommandPool> pool_;
};

class Fence {
 public:
  explicit Fence(Context::Impl& ctx);
  // Submits `cmd` on the context's queue and waits; throws "GPU execution timed out" after
  // kSubmitTimeoutNs and a clear error on device loss.
  void submit_and_wait(VkCommandBuffer cmd);

 private:
  Context::Impl& ctx_;
  Unique<VkFence> fence_;
};

// vkCmdPipelineBarrier with one global memory barrier.
void memory_barrier(Context::Impl& ctx, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

}  // namespace vkc::rt
