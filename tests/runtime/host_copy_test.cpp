// Host copies split among threads (runtime/copy_pool.h, runtime/host_copy.h; vkc issue 21): every
// byte of seeded random blocks arrives, at any size and alignment and with any thread count, no
// byte outside the destination range is written, small copies start no thread, and executions and
// device tensors whose inputs and outputs take the threaded path still match a CPU loop.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "common/test_util.h"
#include "runtime/context_internal.h"
#include "runtime/copy_pool.h"
#include "runtime/device_tensor.h"
#include "runtime/host_copy.h"
#include "runtime_fixture.h"
#include "support/error.h"

namespace vkc::rt {
namespace {

using vkc::test::ScopedEnv;

using CopyFn = std::function<void(void*, const void*, size_t)>;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = uint8_t(rng());
  return v;
}

// Copies `bytes` from offset `src_at` of a random block to offset `dst_at` of another, and checks
// that the range arrived and that the 64 guard bytes around it (and the destination's head) kept
// their values. Returns the first bad index ("" when all is well).
std::string check_copy(const CopyFn& copy, size_t bytes, size_t src_at, size_t dst_at, uint32_t seed) {
  const std::vector<uint8_t> src = random_bytes(src_at + bytes, seed);
  const std::vector<uint8_t> before = random_bytes(dst_at + bytes + 64, seed + 1);
  std::vector<uint8_t> dst = before;
  copy(dst.data() + dst_at, src.data() + src_at, bytes);
  for (size_t i = 0; i < dst.size(); ++i) {
    const bool inside = i >= dst_at && i < dst_at + bytes;
    const uint8_t want = inside ? src[src_at + i - dst_at] : before[i];
    if (dst[i] != want)
      return vkc::cat("byte ", i, " of ", dst.size(), " (", inside ? "inside" : "outside", " the copied range [", dst_at,
                      ", ", dst_at + bytes, ")): ", int(dst[i]), ", expected ", int(want));
  }
  return "";
}

TEST(CopyChunkPlan, ChunksCoverTheBlockInCacheLinesOfAtLeastTheMinimum) {
  for (size_t bytes : {size_t(1), size_t(63), size_t(64), size_t(1) << 20, (size_t(1) << 20) + 1, size_t(2408448),
                       size_t(77070336), size_t(77070336) + 13})
    for (unsigned threads : {1u, 2u, 3u, 8u, 64u}) {
      const CopyChunks c = plan_copy_chunks(bytes, threads, kCopyChunkMinBytes);
      SCOPED_TRACE(vkc::cat(bytes, " bytes, ", threads, " threads: ", c.count, " chunks of ", c.size));
      EXPECT_EQ(c.size % 64, 0u);
      ASSERT_GE(c.count, 1u);
      EXPECT_GE(c.size, kCopyChunkMinBytes);
      EXPECT_GE(c.size * c.count, bytes);       // covered...
      EXPECT_LT(c.size * (c.count - 1), bytes); // ...and no chunk empty
      EXPECT_LE(c.count, std::max<size_t>(4 * threads, 1));
      if (threads == 1) {
        EXPECT_EQ(c.count, 1u);
      }
    }
  EXPECT_EQ(plan_copy_chunks(0, 8, kCopyChunkMinBytes).count, 0u);
  // The two sizes of issue 21: r2plus1d_18's batch-1 input and resnet50's batch-128 input.
  EXPECT_EQ(plan_copy_chunks(2408448, 8, kCopyChunkMinBytes).count, 10u);  // 256 KiB chunks
  EXPECT_EQ(plan_copy_chunks(77070336, 8, kCopyChunkMinBytes).count, 32u);  // 4 per thread
}

TEST(CopyPool, EveryByteArrivesAtAnySizeAlignmentAndThreadCount) {
  // A 4 KiB minimum chunk (the runtime uses 256 KiB) gives many chunks on small blocks.
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    CopyPool pool(threads, 4096);
    EXPECT_EQ(pool.threads(), threads);
    const CopyFn copy = [&](void* d, const void* s, size_t n) { pool.copy(d, s, n); };
    uint32_t seed = 100 * threads;
    for (size_t bytes : {size_t(0), size_t(1), size_t(7), size_t(4095), size_t(4097), size_t(65536), size_t(65537 * 3),
                         (size_t(1) << 20) - 1, size_t(1) << 20, (size_t(1) << 20) + 1, size_t(5000011)})
      for (auto [src_at, dst_at] : {std::pair<size_t, size_t>{0, 0}, {3, 61}, {1, 0}, {0, 17}, {64, 64}}) {
        std::string bad = check_copy(copy, bytes, src_at, dst_at, ++seed);
        EXPECT_EQ(bad, "") << threads << " threads, " << bytes << " bytes from offset " << src_at << " to " << dst_at;
      }
  }
}

TEST(CopyPool, ManyChunksAndManyBlocksInARow) {
  // 64 threads over a 64-byte minimum: 256 chunks per block; back-to-back blocks of different sizes
  // check that no worker carries a chunk of one block into the next.
  CopyPool pool(64, 64);
  const CopyFn copy = [&](void* d, const void* s, size_t n) { pool.copy(d, s, n); };
  for (int i = 0; i < 40; ++i) {
    const size_t bytes = 1 + size_t(i) * 10007 % 300000;
    EXPECT_EQ(check_copy(copy, bytes, size_t(i) % 5, size_t(i) % 3, 7000 + i), "") << "block " << i << ", " << bytes << " bytes";
  }
  EXPECT_EQ(plan_copy_chunks(1 << 20, 64, 64).count, 256u);
  EXPECT_EQ(check_copy(copy, 1 << 20, 0, 0, 1), "");
}

TEST(CopyPool, WorkersTakePart) {
  // The caller copies chunks too, so on a loaded machine it may finish a block before a worker
  // wakes; over a few 16 MiB blocks of 64 chunks, the workers must have copied some.
  CopyPool pool(4, 4096);
  const std::vector<uint8_t> src = random_bytes(16 << 20, 5);
  std::vector<uint8_t> dst(src.size());
  for (int i = 0; i < 50 && pool.worker_chunks() == 0; ++i) pool.copy(dst.data(), src.data(), src.size());
  EXPECT_GT(pool.worker_chunks(), 0u);
  EXPECT_TRUE(dst == src);
}

TEST(HostCopy, SmallCopiesAndOneThreadStartNoPool) {
  HostCopy one(1);
  const CopyFn copy1 = [&](void* d, const void* s, size_t n) { one.copy(d, s, n); };
  EXPECT_EQ(check_copy(copy1, 3 << 20, 5, 3, 11), "");
  EXPECT_EQ(one.pool(), nullptr);

  HostCopy four(4);
  const CopyFn copy4 = [&](void* d, const void* s, size_t n) { four.copy(d, s, n); };
  for (size_t bytes : {size_t(0), size_t(1), size_t(1000), kParallelCopyMinBytes - 1})
    EXPECT_EQ(check_copy(copy4, bytes, 1, 2, 12), "") << bytes << " bytes";
  EXPECT_EQ(four.pool(), nullptr) << "a copy below the threshold started threads";
  for (size_t bytes : {kParallelCopyMinBytes, kParallelCopyMinBytes + 1, size_t(7 << 20) + 3})
    EXPECT_EQ(check_copy(copy4, bytes, 3, 1, 13), "") << bytes << " bytes";
  ASSERT_NE(four.pool(), nullptr) << "a copy above the threshold did not use the pool";
  EXPECT_EQ(four.pool()->threads(), 4u);

  four.set_threads(1);  // stops the pool
  EXPECT_EQ(four.pool(), nullptr);
  EXPECT_EQ(check_copy(copy4, 2 << 20, 0, 0, 14), "");
  EXPECT_EQ(four.pool(), nullptr);
}

TEST(HostCopy, ThreadCountFromTheEnvironment) {
  {
    ScopedEnv e("VKC_COPY_THREADS", nullptr);
    EXPECT_GE(copy_threads_from_env(), 1u);
    EXPECT_LE(copy_threads_from_env(), kMaxDefaultCopyThreads);
  }
  {
    ScopedEnv e("VKC_COPY_THREADS", "1");
    EXPECT_EQ(copy_threads_from_env(), 1u);
  }
  {
    ScopedEnv e("VKC_COPY_THREADS", "12");
    EXPECT_EQ(copy_threads_from_env(), 12u);
  }
  for (const char* bad : {"0", "-2", "65", "four", "3x"}) {
    ScopedEnv e("VKC_COPY_THREADS", bad);
    EXPECT_EQ(vkc::test::error_of([] { copy_threads_from_env(); }),
              vkc::cat("VKC_COPY_THREADS: expected a thread count from 1 to 64, found '", bad, "'"));
  }
}

// Runtime paths on the device: the context's copies set to 4 threads for the test's scope.
class RuntimeHostCopy : public test::RuntimeFixture {
 protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    saved_threads_ = ctx().impl().host_copy.threads();
    ctx().impl().host_copy.set_threads(4);
  }
  void TearDown() override {
    ctx().impl().force_staging = false;
    ctx().impl().host_copy.set_threads(saved_threads_);
    RuntimeFixture::TearDown();
  }
  std::mt19937 rng{2121};
  unsigned saved_threads_ = 1;
};

TEST_F(RuntimeHostCopy, LargeInputsAndOutputsThroughMappedAndStagingBuffers) {
  // 1.25 Mi + 7 floats (5 MiB + 28 bytes): each input and the output cross the threshold, in
  // chunks of which the last is short.
  const uint32_t n = (5u << 18) + 7;
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staging buffers" : "mapped storage buffers");
    ctx().impl().force_staging = staged;
    Program program(ctx(), test::add_module(ctx().limits(), n));
    ctx().impl().force_staging = false;
    for (int run = 0; run < 2; ++run) {
      HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
      HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
      ExecuteOptions options;
      options.poison_outputs = true;
      HostTensor c = program.execute({{"a", a}, {"b", b}}, options).at("c");
      HostTensor expected(DType::f32, {n});
      for (uint32_t i = 0; i < n; ++i) expected.as<float>()[i] = a.as<float>()[i] + b.as<float>()[i];
      auto cmp = vkc::test::compare(c, expected, 0, 0);
      EXPECT_TRUE(cmp.ok) << cmp.message;
    }
  }
  ASSERT_NE(ctx().impl().host_copy.pool(), nullptr) << "the copies did not take the threaded path";
  EXPECT_EQ(ctx().impl().host_copy.pool()->threads(), 4u);
}

TEST_F(RuntimeHostCopy, SmallExecutionsStartNoThread) {
  ctx().impl().host_copy.set_threads(1);  // stops a pool an earlier test started
  ctx().impl().host_copy.set_threads(4);
  const uint32_t n = 1000;
  Program program(ctx(), test::add_module(ctx().limits(), n));
  HostTensor a = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor b = vkc::test::random_tensor(DType::f32, {n}, rng);
  HostTensor c = program.execute({{"a", a}, {"b", b}}).at("c");
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c.as<float>()[i], a.as<float>()[i] + b.as<float>()[i]) << i;
  EXPECT_EQ(ctx().impl().host_copy.pool(), nullptr);
}

TEST_F(RuntimeHostCopy, DeviceTensorRoundTrip) {
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staging buffers" : "mapped storage buffers");
    ctx().impl().force_staging = staged;
    DeviceTensor t(ctx(), DType::u8, {3, (1 << 20) + 5});  // 3 MiB + 15 bytes: not whole words
    ctx().impl().force_staging = false;
    HostTensor h = vkc::test::random_tensor(DType::u8, {3, (1 << 20) + 5}, rng, 0, 255);
    t.upload(h);
    HostTensor back = t.download();
    EXPECT_TRUE(back == h);
  }
  EXPECT_NE(ctx().impl().host_copy.pool(), nullptr);
}

TEST(HostCopySegments, DeviceTensorInSeveralAllocations) {
  // Allocations of at most 2 MiB: a 5 MiB tensor is held in three segments, and each host copy is
  // cut at the segment boundaries, every part above the threshold.
  ContextOptions options;
  options.max_allocation_bytes = 2 << 20;
  Context ctx(options);
  ctx.impl().host_copy.set_threads(3);
  std::mt19937 rng(77);
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staging buffers" : "mapped storage buffers");
    ctx.impl().force_staging = staged;
    DeviceTensor t(ctx, DType::f32, {5, 262147});
    ctx.impl().force_staging = false;
    EXPECT_EQ(t.impl().buffer->segment_count(), 3u);
    HostTensor h = vkc::test::random_tensor(DType::f32, {5, 262147}, rng);
    t.upload(h);
    EXPECT_TRUE(t.download() == h);
  }
  EXPECT_NE(ctx.impl().host_copy.pool(), nullptr);
  EXPECT_TRUE(ctx.validation_messages().empty());
}

}  // namespace
}  // namespace vkc::rt
