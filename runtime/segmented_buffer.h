// A buffer held in one or more segments, each its own VkBuffer and allocation (storage above
// maxMemoryAllocationSize: module/storage_segments.h says where the cuts go and why). Bindings
// locate the one segment that holds them; copies and host reads/writes are cut at the segments.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/memory.h"

namespace vkc::rt {

class SegmentedBuffer {
 public:
  // `starts`: segment starts, the first 0, increasing, each below `size`.
  SegmentedBuffer(Context::Impl& ctx, uint64_t size, const std::vector<uint64_t>& starts, BufferUse use,
                  const std::string& what);

  uint64_t size() const { return size_; }
  size_t segment_count() const { return segments_.size(); }
  Buffer& segment(size_t i) const { return *segments_[i]; }
  // Host visible and coherent (every segment is mapped), so the host may read and write it.
  bool mapped() const;

  // The segment holding [offset, offset + bytes) whole, and where in it the range starts. Throws
  // an internal error if the range crosses a cut (the segment plan guarantees that none does).
  struct Slot {
    Buffer* buffer = nullptr;
    uint64_t offset = 0;
  };
  Slot locate(uint64_t offset, uint64_t bytes) const;

  // Calls f(Buffer&, offset in that segment, offset from `offset`, length) for each part of
  // [offset, offset + bytes) in order.
  template <typename F>
  void for_each_part(uint64_t offset, uint64_t bytes, F&& f) const {
    const uint64_t origin = offset;
    for (size_t i = 0; i < segments_.size() && bytes > 0; ++i) {
      const uint64_t begin = starts_[i], end = begin + segments_[i]->size();
      if (offset >= end) continue;
      const uint64_t n = std::min(bytes, end - offset);
      f(*segments_[i], offset - begin, offset - origin, n);
      offset += n;
      bytes -= n;
    }
  }

  // Host copies into and out of the mapped segments (mapped() only), large ones split among the
  // context's copy threads (runtime/host_copy.h).
  void write(uint64_t offset, const void* src, uint64_t bytes) const;
  void read(uint64_t offset, void* dst, uint64_t bytes) const;

 private:
  Context::Impl& ctx_;
  uint64_t size_ = 0;
  std::vector<uint64_t> starts_;
  std::vector<std::unique_ptr<Buffer>> segments_;
};

// Records the copy of `bytes` from `src` at `src_offset` to `dst` at `dst_offset`, one region per
// part where either side changes segment.
void record_copy(const VolkDeviceTable& vk, VkCommandBuffer cmd, const SegmentedBuffer& src, uint64_t src_offset,
                 const SegmentedBuffer& dst, uint64_t dst_offset, uint64_t bytes);

}  // namespace vkc::rt
