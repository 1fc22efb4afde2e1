#include "runtime/segmented_buffer.h"

#include "support/error.h"

namespace vkc::rt {

SegmentedBuffer::SegmentedBuffer(Context::Impl& ctx, uint64_t size, const std::vector<uint64_t>& starts,
                                 BufferUse use, const std::string& what)
    : ctx_(ctx), size_(size), starts_(starts) {
  check(!starts_.empty() && starts_[0] == 0, "internal: segments of ", what, " must start at 0");
  for (size_t i = 0; i < starts_.size(); ++i) {
    const uint64_t end = i + 1 < starts_.size() ? starts_[i + 1] : size;
    check(end > starts_[i], "internal: empty segment ", i, " of ", what);
    segments_.push_back(std::make_unique<Buffer>(
        ctx, end - starts_[i], use, starts_.size() == 1 ? what : cat(what, " (segment ", i + 1, " of ", starts_.size(), ")")));
  }
}

bool SegmentedBuffer::mapped() const {
  for (const auto& s : segments_)
    if (s->mapped() == nullptr) return false;
  return true;
}

SegmentedBuffer::Slot SegmentedBuffer::locate(uint64_t offset, uint64_t bytes) const {
  for (size_t i = segments_.size(); i-- > 0;)
    if (offset >= starts_[i]) {
      check(offset + bytes <= starts_[i] + segments_[i]->size(), "internal: bytes [", offset, ", ", offset + bytes,
            ") cross the end of segment ", i + 1, " at ", starts_[i] + segments_[i]->size());
      return {segments_[i].get(), offset - starts_[i]};
    }
  throw Error("internal: no segment holds offset " + std::to_string(offset));
}

void SegmentedBuffer::write(uint64_t offset, const void* src, uint64_t bytes) const {
  for_each_part(offset, bytes, [&](Buffer& b, uint64_t at, uint64_t from, uint64_t n) {
    ctx_.host_copy.copy(b.mapped() + at, static_cast<const uint8_t*>(src) + from, n);
  });
}

void SegmentedBuffer::read(uint64_t offset, void* dst, uint64_t bytes) const {
  for_each_part(offset, bytes, [&](Buffer& b, uint64_t at, uint64_t from, uint64_t n) {
    ctx_.host_copy.copy(static_cast<uint8_t*>(dst) + from, b.mapped() + at, n);
  });
}

void record_copy(const VolkDeviceTable& vk, VkCommandBuffer cmd, const SegmentedBuffer& src, uint64_t src_offset,
                 const SegmentedBuffer& dst, uint64_t dst_offset, uint64_t bytes) {
  src.for_each_part(src_offset, bytes, [&](Buffer& s, uint64_t s_at, uint64_t from, uint64_t n) {
    dst.for_each_part(dst_offset + from, n, [&](Buffer& d, uint64_t d_at, uint64_t from2, uint64_t m) {
      VkBufferCopy region{s_at + from2, d_at, m};
      vk.vkCmdCopyBuffer(cmd, s.handle(), d.handle(), 1, &region);
    });
  });
}

}  // namespace vkc::rt
