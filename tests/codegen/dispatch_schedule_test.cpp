// Dispatch levels and the recording order (codegen/dispatch_schedule.h), on hand-made manifests:
// which bindings make one dispatch wait for another, and the arena ranges that keep a level free of
// shared bytes. The compiled form runs on a device in tests/e2e/dispatch_schedule_e2e_test.cpp.
#include <gtest/gtest.h>

#include "codegen/dispatch_schedule.h"
#include "common/manifest_builders.h"

namespace vkc::codegen {
namespace {

TensorDesc tensor(const std::string& name, int64_t n, TensorRole role, const std::string& view_of = "",
                  uint64_t view_offset = 0) {
  TensorDesc t;
  t.name = name;
  t.shape = {n};
  t.role = role;
  t.view_of = view_of;
  t.view_offset = view_offset;
  return t;
}

DispatchDesc dispatch(const std::string& kernel, std::vector<std::string> reads, std::string write) {
  return vkc::test::dispatch_rw(kernel, reads, write);
}

// Four towers from x into views of y (a concat written in place), as an Inception block records
// them in graph order: t1 = f(x); t2 = g(t1); t3 = h(x); ...
Manifest towers() {
  Manifest m;
  m.tensors = {tensor("x", 16, TensorRole::Input),         tensor("a", 16, TensorRole::Intermediate),
               tensor("b", 16, TensorRole::Intermediate),  tensor("c", 16, TensorRole::Intermediate),
               tensor("y", 64, TensorRole::Output),        tensor("y0", 16, TensorRole::Intermediate, "y", 0),
               tensor("y1", 16, TensorRole::Intermediate, "y", 64),
               tensor("y2", 16, TensorRole::Intermediate, "y", 128),
               tensor("y3", 16, TensorRole::Intermediate, "y", 192), tensor("z", 64, TensorRole::Output)};
  m.dispatches = {dispatch("t0", {"x"}, "y0"),      dispatch("t1a", {"x"}, "a"), dispatch("t1b", {"a"}, "y1"),
                  dispatch("t2a", {"x"}, "b"),      dispatch("t2b", {"b"}, "c"), dispatch("t2c", {"c"}, "y2"),
                  dispatch("t3", {"x"}, "y3"),      dispatch("next", {"y"}, "z")};
  return m;
}

TEST(DispatchSchedule, TowersGetOneLevelPerStepAndTheConcatWaitsForAll) {
  Manifest m = towers();
  const std::vector<int> level = dispatch_levels(m);
  EXPECT_EQ(level, (std::vector<int>{0, 0, 1, 0, 1, 2, 0, 3}));
  // Graph order within a level: the four first steps, then the second steps, the third, the consumer.
  EXPECT_EQ(order_by_level(level), (std::vector<int>{0, 1, 3, 6, 2, 4, 5, 7}));
  // In graph order, barriers before t1b, t2b, t2c and next; by level, one before each level after 0.
  EXPECT_EQ(dispatch_dependencies(m).graph_order_barriers, 4);
}

TEST(DispatchSchedule, DisjointViewsOfOneTensorDoNotWaitButOverlappingOnesDo) {
  Manifest m = towers();
  // A reader of y1 only waits for the writer of y1, not for the writers of y's other views.
  m.dispatches = {dispatch("w0", {"x"}, "y0"), dispatch("w1", {"x"}, "y1"), dispatch("r1", {"y1"}, "a"),
                  dispatch("r", {"y"}, "z")};
  EXPECT_EQ(dispatch_levels(m), (std::vector<int>{0, 0, 1, 1}));
  // A view starting inside another one overlaps it.
  m.tensors.push_back(tensor("y01", 16, TensorRole::Intermediate, "y", 32));
  m.dispatches = {dispatch("w0", {"x"}, "y0"), dispatch("w01", {"x"}, "y01"), dispatch("w1", {"x"}, "y1")};
  EXPECT_EQ(dispatch_levels(m), (std::vector<int>{0, 1, 2}));
}

TEST(DispatchSchedule, WritesWaitForEarlierReadsAndWrites) {
  Manifest m = towers();
  m.dispatches = {dispatch("read_a", {"a"}, "b"), dispatch("write_a", {"x"}, "a"),   // WAR
                  dispatch("write_b", {"x"}, "b"),                                   // WAW after read_a's write
                  dispatch("read_x", {"x"}, "c")};                                   // reads only: level 0
  EXPECT_EQ(dispatch_levels(m), (std::vector<int>{0, 1, 1, 0}));
}

TEST(DispatchSchedule, ArenaRangesCoverWholeLevels) {
  Manifest m = towers();
  const std::vector<int> level = dispatch_levels(m);
  const std::vector<int> order = order_by_level(level);
  // Positions: level 0 = 0-3, level 1 = 4-5, level 2 = 6, level 3 = 7. a: t1a (0) .. t1b (1);
  // b: t2a (0) .. t2b (1); c: t2b (1) .. t2c (2).
  std::map<std::string, std::pair<int, int>> got;
  for (const LiveRange& r : arena_live_ranges(m, order, level)) got[r.tensor] = {r.first, r.last};
  EXPECT_EQ(got, (std::map<std::string, std::pair<int, int>>{{"a", {0, 5}}, {"b", {0, 5}}, {"c", {4, 6}}}));
  // In graph order with a level per dispatch, the plain first-to-last use ranges.
  std::vector<int> graph(m.dispatches.size());
  for (size_t i = 0; i < graph.size(); ++i) graph[i] = int(i);
  got.clear();
  for (const LiveRange& r : arena_live_ranges(m, graph, graph)) got[r.tensor] = {r.first, r.last};
  EXPECT_EQ(got, (std::map<std::string, std::pair<int, int>>{{"a", {1, 2}}, {"b", {3, 4}}, {"c", {4, 5}}}));
}

TEST(DispatchSchedule, ApplyingAnOrderRenamesDispatchesAndTheirSpirv) {
  ModuleImage image;
  image.manifest = towers();
  for (size_t i = 0; i < image.manifest.dispatches.size(); ++i) {
    DispatchDesc& d = image.manifest.dispatches[i];
    d.name = "d" + std::to_string(i) + "_" + d.kernel;
    d.spv = d.name + ".spv";
    image.spirv[d.spv] = {uint32_t(i)};
  }
  apply_dispatch_order(image, order_by_level(dispatch_levels(image.manifest)));
  const std::vector<std::string> kernels = {"t0", "t1a", "t2a", "t3", "t1b", "t2b", "t2c", "next"};
  const std::vector<uint32_t> words = {0, 1, 3, 6, 2, 4, 5, 7};
  ASSERT_EQ(image.manifest.dispatches.size(), kernels.size());
  ASSERT_EQ(image.spirv.size(), kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const DispatchDesc& d = image.manifest.dispatches[k];
    EXPECT_EQ(d.kernel, kernels[k]);
    EXPECT_EQ(d.name, "d" + std::to_string(k) + "_" + kernels[k]);
    EXPECT_EQ(image.spirv.at(d.spv), std::vector<uint32_t>{words[k]});
  }
}

}  // namespace
}  // namespace vkc::codegen
