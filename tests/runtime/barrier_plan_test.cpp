// Storage resolution and barrier planning (no device needed).
#include <gtest/gtest.h>

#include "common/manifest_builders.h"
#include "runtime/barrier_plan.h"
#include "runtime/storage_range.h"
#include "runtime_fixture.h"

namespace vkc::rt {
namespace {

using test::tensor_desc;

DispatchDesc dispatch(const std::string& name, std::vector<std::string> reads, std::string write) {
  return vkc::test::dispatch_rw(name, reads, write);
}

Manifest arena_manifest() {
  Manifest m;
  m.arena_bytes = 1024;
  m.tensors = {tensor_desc("x", {16}, TensorRole::Input),
               tensor_desc("t0", {16}, TensorRole::Intermediate, 0),
               tensor_desc("t1", {16}, TensorRole::Intermediate, 256),
               tensor_desc("t1_view", {4, 4}, TensorRole::Intermediate, 0, "t1"),
               tensor_desc("t2", {64}, TensorRole::Intermediate, 512),
               tensor_desc("y", {16}, TensorRole::Output)};
  return m;
}

TEST(RuntimeStorageRange, ViewsResolveToTheirStorage) {
  Manifest m = arena_manifest();
  StorageRange v = resolve_storage(m, "t1_view");
  EXPECT_EQ(v.kind, StorageKind::Arena);
  EXPECT_EQ(v.offset, 256u);
  EXPECT_EQ(v.size, 64u);
  StorageRange y = resolve_storage(m, "y");
  EXPECT_EQ(y.kind, StorageKind::Output);
  EXPECT_EQ(y.owner, "y");
  EXPECT_FALSE(resolve_storage(m, "t0").overlaps(resolve_storage(m, "t1")));
  EXPECT_TRUE(resolve_storage(m, "t1").overlaps(v));
}

TEST(RuntimeBarrierPlan, IndependentDispatchesShareOneBarrier) {
  Manifest m = arena_manifest();
  m.dispatches = {dispatch("d0", {"x"}, "t0"), dispatch("d1", {"x"}, "t1"),
                  dispatch("d2", {"t0", "t1_view"}, "y")};
  EXPECT_EQ(plan_barriers(m), (std::vector<bool>{false, false, true}));
}

TEST(RuntimeBarrierPlan, ReadAfterWriteThroughAView) {
  Manifest m = arena_manifest();
  m.dispatches = {dispatch("d0", {"x"}, "t1_view"), dispatch("d1", {"t1"}, "y")};
  EXPECT_EQ(plan_barriers(m), (std::vector<bool>{false, true}));
}

TEST(RuntimeBarrierPlan, WriteAfterReadNeedsABarrier) {
  Manifest m = arena_manifest();
  m.dispatches = {dispatch("d0", {"t0"}, "y"), dispatch("d1", {"x"}, "t0")};
  EXPECT_EQ(plan_barriers(m), (std::vector<bool>{false, true}));
}

TEST(RuntimeBarrierPlan, BarrierResetsTheHazardWindow) {
  Manifest m = arena_manifest();
  // d1 waits for d0; d2 reads t0 (written before that barrier) and writes t2: no new hazard.
  m.dispatches = {dispatch("d0", {"x"}, "t0"), dispatch("d1", {"t0"}, "t1"), dispatch("d2", {"t0"}, "t2"),
                  dispatch("d3", {"t2"}, "y")};
  EXPECT_EQ(plan_barriers(m), (std::vector<bool>{false, true, false, true}));
}

// Between two barriers the dispatches with workgroup memory are recorded first (more first), the
// others after them in manifest order; nothing moves across a barrier.
TEST(RuntimeBarrierPlan, WorkgroupMemoryFirstBetweenBarriers) {
  Manifest m = arena_manifest();
  m.dispatches = {dispatch("d0", {"x"}, "t0"), dispatch("d1", {"x"}, "t1"), dispatch("d2", {"x"}, "t2"),
                  dispatch("d3", {"t0", "t1", "t2"}, "y")};
  m.dispatches[1].workgroup_memory_bytes = 1024;
  m.dispatches[2].workgroup_memory_bytes = 8192;
  m.dispatches[3].workgroup_memory_bytes = 16384;
  const std::vector<bool> barrier = plan_barriers(m);
  EXPECT_EQ(barrier, (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(plan_record_order(m, barrier), (std::vector<size_t>{2, 1, 0, 3}));
  m.dispatches[2].workgroup_memory_bytes = 0;  // a tie keeps manifest order
  EXPECT_EQ(plan_record_order(m, barrier), (std::vector<size_t>{1, 0, 2, 3}));
}
TEST(RuntimeBarrierPlan, ReadsOfTheSameBytesNeedNoBarrier) {
  Manifest m = arena_manifest();
  m.dispatches = {dispatch("d0", {"x"}, "t0"), dispatch("d1", {"x"}, "t1")};
  EXPECT_EQ(plan_barriers(m), (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace vkc::rt
