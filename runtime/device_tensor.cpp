// rt::DeviceTensor: a storage buffer holding one tensor between executions.
#include "runtime/device_tensor.h"

#include <cstring>

#include "runtime/command.h"
#include "module/storage_segments.h"
#include "support/error.h"

namespace vkc::rt {

namespace {

constexpr VkPipelineStageFlags kDeviceStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kDeviceAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                        VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

// Records and runs one copy between the tensor and a staging buffer, ordered after all earlier
// device work on the queue and made visible to the host or to later work.
void copy_once(Context::Impl& ctx, const SegmentedBuffer& src, const SegmentedBuffer& dst, uint64_t bytes) {
  CommandPool pool(ctx);
  VkCommandBuffer cmd = pool.allocate();
  VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(ctx.vk.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  memory_barrier(ctx, cmd, kDeviceStages, kDeviceAccess, VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  record_copy(ctx.vk, cmd, src, 0, dst, 0, bytes);
  memory_barrier(ctx, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 kDeviceStages | VK_PIPELINE_STAGE_HOST_BIT, kDeviceAccess | VK_ACCESS_HOST_READ_BIT);
  vk_check(ctx.vk.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  Fence(ctx).submit_and_wait(cmd);
}

void check_matches(const DeviceTensor::Impl& t, const HostTensor& h) {
  check(h.dtype() == t.dtype && h.shape() == t.shape, "device tensor upload: expected ", dtype_name(t.dtype), " ",
        shape_str(t.shape), ", found ", dtype_name(h.dtype()), " ", shape_str(h.shape()));
}

}  // namespace

DeviceTensor::DeviceTensor(Context& context, DType dtype, Shape shape)
    : impl_(std::make_unique<Impl>(Impl{context.impl(), dtype, std::move(shape), 0, nullptr})) {
  impl_->bytes = uint64_t(shape_numel(impl_->shape)) * dtype_size(dtype);
  const uint64_t words = impl_->bytes < 4 ? 4 : (impl_->bytes + 3) / 4 * 4;
  impl_->buffer = std::make_unique<SegmentedBuffer>(impl_->ctx, words, even_segments(words, impl_->ctx.max_allocation_bytes),
                                                    BufferUse::Storage,
                                                    cat("device tensor ", dtype_name(dtype), " ", shape_str(impl_->shape)));
}

DeviceTensor::~DeviceTensor() {
  // An execution still in flight may read or write the buffer.
  if (impl_ && impl_->ctx.queue) impl_->ctx.vk.vkQueueWaitIdle(impl_->ctx.queue);
}

DType DeviceTensor::dtype() const { return impl_->dtype; }
const Shape& DeviceTensor::shape() const { return impl_->shape; }

void DeviceTensor::upload(const HostTensor& tensor) {
  Impl& t = *impl_;
  check_matches(t, tensor);
  if (t.bytes == 0) return;
  vk_check(t.ctx.vk.vkQueueWaitIdle(t.ctx.queue), "vkQueueWaitIdle");
  if (t.buffer->mapped()) {
    t.buffer->write(0, tensor.data(), t.bytes);
    return;
  }
  SegmentedBuffer staging(t.ctx, t.buffer->size(), even_segments(t.buffer->size(), t.ctx.max_allocation_bytes),
                          BufferUse::Upload, "device tensor upload");
  staging.write(0, tensor.data(), t.bytes);
  copy_once(t.ctx, staging, *t.buffer, t.buffer->size());
}

HostTensor DeviceTensor::download() const {
  const Impl& t = *impl_;
  HostTensor out(t.dtype, t.shape);
  if (t.bytes == 0) return out;
  vk_check(t.ctx.vk.vkQueueWaitIdle(t.ctx.queue), "vkQueueWaitIdle");
  if (t.buffer->mapped()) {
    t.buffer->read(0, out.data(), t.bytes);
    return out;
  }
  SegmentedBuffer staging(t.ctx, t.buffer->size(), even_segments(t.buffer->size(), t.ctx.max_allocation_bytes),
                          BufferUse::Download, "device tensor download");
  copy_once(t.ctx, *t.buffer, staging, t.buffer->size());
  staging.read(0, out.data(), t.bytes);
  return out;
}

}  // namespace vkc::rt
