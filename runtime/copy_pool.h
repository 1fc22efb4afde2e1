// A small pool of threads that copy one large block of host memory together (vkc issue 21).
//
// Why: an execution's inputs are copied by the host into mapped staging (or storage) memory and
// its outputs back out. One thread's memcpy reaches 4-6 GB/s into write-combined staging memory
// on an H200 host (bench/RESULTS.md, session 22): resnet50's 77 MB batch-128 input took 13.5-23 ms
// of a 44 ms run. Several threads copying disjoint parts of the block add up toward the memory
// system's bandwidth. The policy (when to use the pool, how many threads) is runtime/host_copy.h.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace vkc::rt {

// A block cut for copying: `count` chunks of `size` bytes, the last one shorter (never empty).
struct CopyChunks {
  size_t size = 0;
  size_t count = 0;
};

// How `bytes` are cut for `threads` threads. Chunks are multiples of 64 bytes (a cache line, so
// no two threads write the same line, which would bounce it between cores) and at least
// `min_chunk` (rounded up to 64) bytes, so that each thread's wake-up is paid for by a long copy;
// aiming at 4 chunks per thread lets a thread that starts late take fewer chunks while the others
// take more. Zero bytes: no chunks.
CopyChunks plan_copy_chunks(size_t bytes, unsigned threads, size_t min_chunk);

class CopyPool {
 public:
  // `threads` copy each block: the caller of copy() and threads - 1 workers started here (at
  // least 1). If the system refuses to start a worker, the pool keeps those it has.
  CopyPool(unsigned threads, size_t min_chunk);
  // Stops and joins the workers. No copy may be running.
  ~CopyPool();
  CopyPool(const CopyPool&) = delete;
  CopyPool& operator=(const CopyPool&) = delete;

  // Threads that take part in a copy: the workers started, plus the caller.
  unsigned threads() const { return unsigned(workers_.size()) + 1; }

  // Copies `bytes` from `src` to `dst` (not overlapping), cut as plan_copy_chunks says, and
  // returns when every chunk is done. The caller copies chunks too, and waits only for chunks a
  // worker has started: if no worker wakes in time (a loaded machine, or a child process after
  // fork(), which has no workers), it copies every chunk itself. Callers on several threads take
  // turns.
  void copy(void* dst, const void* src, size_t bytes);

  // Chunks the workers (not the callers) copied since the pool started: tests check with it
  // that the workers take part.
  uint64_t worker_chunks() const { return worker_chunks_.load(std::memory_order_relaxed); }

 private:
  // One block being copied. Published under mutex_ with a new generation; chunks are claimed
  // through `claim_`, which holds the generation in its high 32 bits and the next chunk index in
  // the low 32, so that a worker that wakes after its block is finished cannot claim a chunk of
  // the next block with the old block's pointers.
  struct Job {
    uint8_t* dst = nullptr;
    const uint8_t* src = nullptr;
    size_t bytes = 0;
    CopyChunks chunks;
  };

  void work() noexcept;  // a worker's loop
  // Claims and copies chunks of `job` (generation `generation`) until none is left; returns how
  // many this thread copied.
  size_t copy_chunks(const Job& job, uint32_t generation) noexcept;

  size_t min_chunk_;
  std::vector<std::thread> workers_;
  std::mutex caller_;  // one copy at a time

  std::mutex mutex_;                 // guards job_, generation_, stop_, and the waits below
  std::condition_variable wake_;     // workers: a new job, or stop
  std::condition_variable finished_; // the caller: every chunk done
  Job job_;
  uint32_t generation_ = 0;
  bool stop_ = false;
  std::atomic<uint64_t> claim_{0};
  std::atomic<size_t> done_{0};  // chunks of the current job copied
  std::atomic<uint64_t> worker_chunks_{0};
};

}  // namespace vkc::rt
