#include "runtime/copy_pool.h"

#include <algorithm>
#include <cstring>
#include <system_error>

namespace vkc::rt {

namespace {

constexpr size_t kLine = 64;
constexpr uint64_t kIndexMask = 0xffffffffull;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

CopyChunks plan_copy_chunks(size_t bytes, unsigned threads, size_t min_chunk) {
  if (bytes == 0) return {};
  const size_t parts = threads <= 1 ? 1 : size_t(threads) * 4;
  const size_t target = (bytes + parts - 1) / parts;
  size_t size = round_up(std::max({target, min_chunk, kLine}), kLine);
  // Chunk indices travel in 32 bits (CopyPool::claim_); only a block of hundreds of TiB gets here.
  size = std::max(size, round_up(bytes / kIndexMask + 1, kLine));
  return {size, (bytes + size - 1) / size};
}

CopyPool::CopyPool(unsigned threads, size_t min_chunk) : min_chunk_(min_chunk) {
  for (unsigned i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back(&CopyPool::work, this);
    } catch (const std::system_error&) {
      break;  // out of threads: copy with those that started (with none, the caller alone)
    }
  }
}

CopyPool::~CopyPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void CopyPool::copy(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> turn(caller_);
  const CopyChunks chunks = plan_copy_chunks(bytes, threads(), min_chunk_);
  if (chunks.count <= 1 || workers_.empty()) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  const Job job{static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes, chunks};
  uint32_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    generation = ++generation_;
    done_.store(0, std::memory_order_relaxed);
    claim_.store(uint64_t(generation) << 32, std::memory_order_release);
  }
  // Wake only as many workers as there are chunks besides the caller's first one.
  const size_t helpers = std::min(workers_.size(), chunks.count - 1);
  for (size_t i = 0; i < helpers; ++i) wake_.notify_one();
  copy_chunks(job, generation);
  // Every chunk claimed is finished before this returns, so no worker touches dst or src after.
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_.load(std::memory_order_acquire) == chunks.count; });
}

size_t CopyPool::copy_chunks(const Job& job, uint32_t generation) noexcept {
  size_t copied = 0;
  for (;;) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    do {
      if (uint32_t(c >> 32) != generation || (c & kIndexMask) >= job.chunks.count) return copied;
    } while (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire));
    const size_t offset = size_t(c & kIndexMask) * job.chunks.size;
    std::memcpy(job.dst + offset, job.src + offset, std::min(job.chunks.size, job.bytes - offset));
    ++copied;
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == job.chunks.count) {
      // Under the mutex, so that the caller cannot miss it between its check and its wait.
      std::lock_guard<std::mutex> lock(mutex_);
      finished_.notify_one();
    }
  }
}

// A worker copies nothing but memory: nothing in its loop throws (a failed lock or wait would
// terminate the process, as noexcept says, rather than lose a chunk silently).
void CopyPool::work() noexcept {
  uint32_t seen = 0;
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    worker_chunks_.fetch_add(copy_chunks(job, seen), std::memory_order_relaxed);
  }
}

}  // namespace vkc::rt
