#include "runtime/host_copy.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "support/error.h"
#include "support/parallel_for.h"

namespace vkc::rt {

unsigned copy_threads_from_env() { return threads_from_env("VKC_COPY_THREADS", kMaxDefaultCopyThreads); }

void HostCopy::copy(void* dst, const void* src, size_t bytes) {
  if (bytes < kParallelCopyMinBytes) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (threads_ <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  if (!pool_) pool_ = std::make_unique<CopyPool>(threads_, kCopyChunkMinBytes);
  pool_->copy(dst, src, bytes);
}

void HostCopy::set_threads(unsigned threads) {
  std::lock_guard<std::mutex> lock(mutex_);
  threads = std::max(threads, 1u);
  if (pool_ && pool_->threads() != threads) pool_.reset();
  threads_ = threads;
}

unsigned HostCopy::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_;
}

const CopyPool* HostCopy::pool() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pool_.get();
}

}  // namespace vkc::rt
