// Where storage above one allocation is cut (module/storage_segments.h): never inside a binding,
// at 256-byte multiples, each segment within the limit, and a clear error when a binding is larger.
#include <gtest/gtest.h>

#include "module/storage_segments.h"
#include "support/error.h"

namespace vkc {
namespace {

using Starts = std::vector<uint64_t>;

TEST(StorageSegments, OneSegmentWhenItFits) {
  EXPECT_EQ(plan_segments(8192, {{0, 8192}}, 8192, "x"), Starts{0});
  EXPECT_EQ(plan_segments(8192, {{0, 8192}}, 0, "x"), Starts{0});  // 0: no limit known
}

TEST(StorageSegments, CutsBetweenPiecesAndWithinTheLimit) {
  // Eight pieces of 4 KiB: segments of two pieces each under an 8 KiB limit.
  std::vector<ByteRange> pieces;
  for (uint64_t i = 0; i < 8; ++i) pieces.push_back({i * 4096, 4096});
  EXPECT_EQ(plan_segments(32768, pieces, 8192, "x"), (Starts{0, 8192, 16384, 24576}));
  // A 10 KiB limit still cuts where pieces meet, never inside one.
  EXPECT_EQ(plan_segments(32768, pieces, 10240, "x"), (Starts{0, 8192, 16384, 24576}));
  // Pieces of 3000 bytes at 3072-byte starts end mid-way: the cut goes to the next 256 multiple.
  std::vector<ByteRange> odd;
  for (uint64_t i = 0; i < 4; ++i) odd.push_back({i * 3072, 3000});
  EXPECT_EQ(plan_segments(12288, odd, 6400, "x"), (Starts{0, 6144}));
}

TEST(StorageSegments, UnboundBytesAreCutAtTheLimit) {
  EXPECT_EQ(plan_segments(20000, {}, 8192, "arena"), (Starts{0, 8192, 16384}));
  // Bindings that overlap (two views of one tensor) must share a segment.
  EXPECT_EQ(plan_segments(16384, {{0, 6000}, {4096, 4096}, {8192, 8192}}, 8192, "x"), (Starts{0, 8192}));
}

TEST(StorageSegments, BindingLargerThanOneAllocationIsRefused) {
  try {
    plan_segments(32768, {{0, 16384}, {16384, 16384}}, 8192, "input 'x'");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("input 'x': a binding of 16384 bytes at offset 0"), std::string::npos) << m;
    EXPECT_NE(m.find("8192 bytes (maxMemoryAllocationSize)"), std::string::npos) << m;
  }
}

TEST(StorageSegments, EvenSegments) {
  EXPECT_EQ(even_segments(100, 0), Starts{0});
  EXPECT_EQ(even_segments(8192, 8192), Starts{0});
  EXPECT_EQ(even_segments(20000, 8300), (Starts{0, 8192, 16384}));
}

}  // namespace
}  // namespace vkc
