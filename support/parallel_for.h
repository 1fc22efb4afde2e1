// Work that is independent per item, on several threads: compiling a module's kernels (glslang and
// spirv-opt in codegen) and creating their pipelines (the driver's compiler in the runtime) are
// most of the time before a model's first run, and each kernel compiles on its own.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace vkc {

// A thread count from environment variable `variable` (1 to 64), else the hardware's threads up to
// `default_max`. A malformed value is an Error naming the variable.
unsigned threads_from_env(const char* variable, unsigned default_max);

// Threads for compiling: VKC_COMPILE_THREADS (1 compiles in the calling thread), else the
// hardware's threads up to kMaxDefaultCompileThreads.
inline constexpr unsigned kMaxDefaultCompileThreads = 16;
inline unsigned compile_threads() { return threads_from_env("VKC_COMPILE_THREADS", kMaxDefaultCompileThreads); }

// f(i) for every i in [0, n), on up to `threads` threads (in the calling thread when 1 or n <= 1).
// Every item runs; then the exception of the lowest failing i is rethrown, so the error is the one
// that a loop in order would have stopped at. f must be safe to call concurrently for distinct i.
template <class F>
void parallel_for(size_t n, unsigned threads, F&& f) {
  if (threads <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (unsigned t = 0; t < std::min<size_t>(threads, n); ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {  // no more threads: the ones started do the rest
  }
  if (pool.empty()) work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace vkc
