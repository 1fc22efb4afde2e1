// parallel_for and the compile thread count (support/parallel_for.h): every item runs once on
// any number of threads, the lowest failing item's error is the one rethrown, and
// VKC_COMPILE_THREADS is read strictly.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/error.h"
#include "support/parallel_for.h"
#include "tests/common/scoped_env.h"

namespace vkc {
namespace {

TEST(ParallelFor, EveryItemRunsOnceOnAnyNumberOfThreads) {
  for (unsigned threads : {1u, 2u, 7u, 64u})
    for (size_t n : {size_t(0), size_t(1), size_t(5), size_t(1000)}) {
      SCOPED_TRACE(cat(threads, " threads, ", n, " items"));
      std::vector<std::atomic<int>> runs(n);
      parallel_for(n, threads, [&](size_t i) { ++runs[i]; });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << i;
    }
}

TEST(ParallelFor, UsesSeveralThreadsAndOnlyTheCallerForOne) {
  std::mutex m;
  std::set<std::thread::id> ids;
  auto record = [&](size_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  };
  parallel_for(16, 1, record);
  EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
  ids.clear();
  parallel_for(16, 4, record);
  EXPECT_GT(ids.size(), 1u);
  EXPECT_LE(ids.size(), 4u);
}

TEST(ParallelFor, TheLowestFailingItemIsRethrownAfterAllRan) {
  for (unsigned threads : {1u, 3u, 8u}) {
    SCOPED_TRACE(cat(threads, " threads"));
    for (int round = 0; round < 5; ++round) {
      std::atomic<int> ran{0};
      try {
        parallel_for(40, threads, [&](size_t i) {
          ++ran;
          // Later failures finish first: the late items fail at once, item 9 after a pause.
          if (i == 9) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            throw std::runtime_error("item 9");
          }
          if (i >= 30) throw std::runtime_error(cat("item ", i));
        });
        FAIL() << "nothing thrown";
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "item 9");
      }
      // One thread stops at the first error, as a loop does; several run every item.
      EXPECT_EQ(ran.load(), threads == 1 ? 10 : 40);
    }
  }
}

TEST(ParallelFor, CompileThreadsFromTheEnvironment) {
  {
    test::ScopedEnv env("VKC_COMPILE_THREADS", "3");
    EXPECT_EQ(compile_threads(), 3u);
  }
  {
    test::ScopedEnv env("VKC_COMPILE_THREADS", nullptr);
    EXPECT_GE(compile_threads(), 1u);
    EXPECT_LE(compile_threads(), kMaxDefaultCompileThreads);
  }
  for (const char* bad : {"0", "65", "four", "2x", "-1"}) {
    test::ScopedEnv env("VKC_COMPILE_THREADS", bad);
    try {
      compile_threads();
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("VKC_COMPILE_THREADS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace vkc
