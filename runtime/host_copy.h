// Host-side copies of tensors into and out of mapped Vulkan memory (input uploads into staging or
// storage buffers, output reads, device-tensor uploads and downloads): when such a copy is split
// among threads, with how many, and the pool that does it (runtime/copy_pool.h), which a device
// context owns and starts at its first large copy, so that small models and tools start no thread.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "runtime/copy_pool.h"

namespace vkc::rt {

// Copies of at least this many bytes are split. Below it a single memcpy takes well under 0.1 ms,
// and each chunk must be long (kCopyChunkMinBytes) for a worker's wake-up (a few to tens of
// microseconds) to pay off, so a smaller block would give at most a few chunks for little gain.
// Above it: video models' batch-1 inputs (r2plus1d_18: 2.4 MB) and batched image inputs
// (resnet50 at batch 128: 77 MB); below it: one 224x224 image (602 KB), classifiers' outputs (4 KB).
constexpr size_t kParallelCopyMinBytes = size_t(1) << 20;
// The shortest chunk one thread copies (plan_copy_chunks).
constexpr size_t kCopyChunkMinBytes = size_t(256) << 10;
// The default thread count's ceiling: copies are bound by memory bandwidth, which a handful of
// cores already saturate; more threads only add wake-ups.
constexpr unsigned kMaxDefaultCopyThreads = 8;

// Threads per large copy: VKC_COPY_THREADS (1 to 64; 1 copies with one memcpy, as vkc did before)
// or, unset, min(hardware threads, 8). Throws vkc::Error on any other value.
unsigned copy_threads_from_env();

class HostCopy {
 public:
  explicit HostCopy(unsigned threads = 1) : threads_(threads < 1 ? 1 : threads) {}

  // Copies `bytes` from `src` to `dst` (not overlapping): below kParallelCopyMinBytes or with one
  // thread a memcpy, else through the pool, which the first such copy starts.
  void copy(void* dst, const void* src, size_t bytes);

  // The thread count for later copies; a pool started with another count is stopped (its threads
  // joined) and the next large copy starts a new one. Tests use it in place of VKC_COPY_THREADS.
  void set_threads(unsigned threads);
  unsigned threads() const;
  // The pool, or null while no large copy has run (or after set_threads).
  const CopyPool* pool() const;

 private:
  mutable std::mutex mutex_;  // guards pool_ and threads_; held through a pooled copy
  unsigned threads_;
  std::unique_ptr<CopyPool> pool_;
};

}  // namespace vkc::rt
