// Arena offsets planned against the target's maxMemoryAllocationSize (codegen/storage_plan.h): a
// tensor that fits one allocation never crosses a multiple of it, so an arena larger than one
// allocation can always be cut into several (module/storage_segments.h). Found on the H200: a sort
// of 1.2e9 keys cut into blocks left 2 GiB intermediates across the 4 GiB allocation limit.
#include <gtest/gtest.h>

#include "codegen/storage_plan.h"
#include "module/storage_segments.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

// Three 600-byte tensors live at once, and one of 2048 bytes live after them, bound as two halves
// (a tensor larger than one allocation is only ever bound in pieces, codegen/range_split.h).
std::vector<LiveRange> three_then_one() {
  return {{"a", 600, 0, 2}, {"b", 600, 0, 2}, {"c", 600, 0, 2}, {"big", 2048, 3, 4}};
}

std::vector<ByteRange> bound(const std::vector<LiveRange>& ranges, const std::map<std::string, uint64_t>& offsets) {
  std::vector<ByteRange> out;
  for (const LiveRange& r : ranges)
    if (r.bytes > 1024) {
      out.push_back({offsets.at(r.tensor), r.bytes / 2});
      out.push_back({offsets.at(r.tensor) + r.bytes / 2, r.bytes / 2});
    } else {
      out.push_back({offsets.at(r.tensor), r.bytes});
    }
  return out;
}

TEST(ArenaPages, TensorsThatFitAPageNeverCrossOne) {
  std::map<std::string, uint64_t> packed, paged;
  const uint64_t size = assign_arena_offsets(three_then_one(), 16, packed);
  // Without pages the three pack end to end and the 1024-byte cut falls inside one of them.
  EXPECT_EQ(packed.at("b") + packed.at("c"), 608u + 1216u);
  EXPECT_THROW(plan_segments(size, bound(three_then_one(), packed), 1024, "arena"), Error);
  const uint64_t paged_size = assign_arena_offsets(three_then_one(), 16, paged, 1024);
  for (const char* t : {"a", "b", "c"}) EXPECT_EQ(paged.at(t) % 1024, 0u) << t;  // one per page
  EXPECT_EQ(paged.at("big") % 1024, 0u);  // larger than a page: starts at one
  const std::vector<uint64_t> starts = plan_segments(paged_size, bound(three_then_one(), paged), 1024, "arena");
  for (size_t i = 1; i < starts.size(); ++i) EXPECT_LE(starts[i] - starts[i - 1], 1024u);
}

TEST(ArenaPages, NoPageKeepsThePackedLayout) {
  std::map<std::string, uint64_t> a, b;
  EXPECT_EQ(assign_arena_offsets(three_then_one(), 16, a), assign_arena_offsets(three_then_one(), 16, b, 0));
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace vkc::codegen
