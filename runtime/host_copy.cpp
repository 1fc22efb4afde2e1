#include "runtime/host_copy.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "support/error.h"

namespace vkc::rt {

unsigned copy_threads_from_env() {
  const char* v = std::getenv("VKC_COPY_THREADS");
  if (v == nullptr || *v == '\0') {
    const unsigned hw = std::thread::hardware_concurrency();  // 0 when unknown
    return std::clamp(hw, 1u, kMaxDefaultCopyThreads);
  }
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  check(*end == '\0' && n >= 1 && n <= 64, "VKC_COPY_THREADS: expected a thread count from 1 to 64, found '", v, "'");
  return unsigned(n);
}

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
