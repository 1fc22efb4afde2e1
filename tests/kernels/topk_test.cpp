// TopK on the device (lavapipe): exact match of values and indices with the reference, for every
// plan (workgroup bitonic, radix select, chunk candidates + merges, global bitonic), any axis, k
// from 1 to n, largest/smallest, i32/i64 indices; every config compiles for every target profile
// (vulkan-min has no int64, so its i64 indices are written as word pairs). The select passes'
// own cases are in topk_select_test.cpp.
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

struct TopKConfig {
  Shape shape;
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
  bool sorted = true;
  std::string index_type = "i64";
  bool use_values = true, use_indices = true;
};

ir::Graph topk_graph(const TopKConfig& c, DType dtype = DType::f32) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {dtype, c.shape});
  ir::Op* op = g.add_op(ir::OpKind::TopK, {x},
                        {{"k", c.k}, {"axis", c.axis}, {"largest", c.largest}, {"sorted", c.sorted},
                         {"index_type", c.index_type}},
                        "top");
  if (c.use_values) g.add_output(op->result(0), "values");
  if (c.use_indices) g.add_output(op->result(1), "indices");
  return g;
}

HostTensor tied_input(const Shape& shape, uint32_t seed, int distinct) {
  std::mt19937 rng(seed);
  HostTensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(int(rng() % distinct) - distinct / 2) * 0.5);
  return t;
}

// Compiles for every profile, runs on the device, checks bytes and that a result nothing uses has
// no tensor and no binding.
GpuRun check_topk(const TopKConfig& c, const HostTensor& x, const std::string& forced = "") {
  ir::Graph g = topk_graph(c, x.dtype());
  for (const std::string& target : known_targets()) {
    codegen::CompileOptions co;
    co.target = find_target(target).limits;
    EXPECT_NO_THROW(codegen::compile_graph(g, co)) << "target " << target;
  }
  GpuRunOptions options;
  if (!forced.empty()) options.forced_strategy = {{"topk", forced}};
  GpuRun run = run_on_gpu(g, {{"x", x}}, options);
  for (const auto& [name, ref] : run.reference) {
    EXPECT_TRUE(run.outputs.count(name)) << name;
    if (run.outputs.count(name)) {
      EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << "output " << name;
    }
  }
  // A range split under VKC_TEST_MAX_BINDING adds its pieces and candidates, written through
  // views: the comparison above holds, the tensor and writer expectations below do not.
  if (split_testing()) return run;
  // Only the input, the used outputs and the sort's own scratch tensors may exist.
  const Manifest& m = run.module.manifest;
  for (const TensorDesc& t : m.tensors) {
    bool known = t.name == "x" || (c.use_values && t.name == "values") ||
                 (c.use_indices && t.name == "indices") || t.name.rfind("sort", 0) == 0;
    EXPECT_TRUE(known) << "unexpected tensor " << t.name;
  }
  // Each used result is written by exactly one dispatch (a gather, or a last pass that writes it
  // itself), the unused one by none.
  for (const auto& [name, used] : {std::pair{"values", c.use_values}, std::pair{"indices", c.use_indices}}) {
    int writers = 0;
    for (const DispatchDesc& d : m.dispatches)
      for (const BindingDesc& b : d.bindings) writers += b.writes && b.tensor == name;
    EXPECT_EQ(writers, int(used)) << name;
  }
  return run;
}

HostTensor random_input(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  return random_tensor(DType::f32, shape, rng);
}

TEST(TopKKernel, TiesNaNAndSignedZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, nan, 1.0f, -inf, inf, nan, -0.0f, 0.0f, 1.0f, -1.0f, 1.0f};
  HostTensor x(DType::f32, {int64_t(v.size())});
  std::memcpy(x.data(), v.data(), v.size() * 4);
  for (bool largest : {true, false})
    for (int64_t k : {1, 3, 6, 12}) {
      SCOPED_TRACE(cat("k ", k, largest ? " largest" : " smallest"));
      check_topk({.shape = {12}, .k = k, .axis = 0, .largest = largest}, x);
    }
}

TEST(TopKKernel, KFromOneToN) {
  for (int64_t k : {1, 2, 5, 37})
    check_topk({.shape = {4, 37}, .k = k}, tied_input({4, 37}, 2, 9));
  check_topk({.shape = {1}, .k = 1}, random_input({1}, 3));
}

TEST(TopKKernel, AnyAxis) {
  Shape shape{5, 11, 4};
  for (int64_t axis : {0, 1, 2}) {
    SCOPED_TRACE(cat("axis ", axis));
    check_topk({.shape = shape, .k = 3, .axis = axis}, tied_input(shape, 4, 6));
    check_topk({.shape = shape, .k = 2, .axis = axis, .largest = false}, tied_input(shape, 5, 6));
  }
}

TEST(TopKKernel, UnsortedAndI32Indices) {
  check_topk({.shape = {8, 100}, .k = 10, .sorted = false}, tied_input({8, 100}, 6, 20));
  check_topk({.shape = {8, 100}, .k = 10, .index_type = "i32"}, tied_input({8, 100}, 7, 20));
}

TEST(TopKKernel, IndicesOnlyAndValuesOnly) {
  check_topk({.shape = {6, 300}, .k = 4, .use_values = false}, tied_input({6, 300}, 8, 30));
  check_topk({.shape = {6, 300}, .k = 4, .use_indices = false}, tied_input({6, 300}, 9, 30));
  check_topk({.shape = {2, 20000}, .k = 8, .use_values = false}, tied_input({2, 20000}, 10, 500));
  check_topk({.shape = {2, 20000}, .k = 8, .index_type = "i32", .use_indices = false},
             tied_input({2, 20000}, 11, 500));
}

TEST(TopKKernel, LongRowsThroughCandidates) {
  // Rows of several chunks; candidates merge over more than one level for the longest.
  check_topk({.shape = {3, 10000}, .k = 16}, tied_input({3, 10000}, 12, 2000), "candidates");
  check_topk({.shape = {3, 10000}, .k = 5, .largest = false}, tied_input({3, 10000}, 13, 40), "candidates");
  check_topk({.shape = {3, 7000, 2}, .k = 7, .axis = 1}, tied_input({3, 7000, 2}, 14, 300), "candidates");
  GpuRun run = check_topk({.shape = {int64_t(1) << 18}, .k = 10}, random_input({int64_t(1) << 18}, 15),
                          "candidates");
  EXPECT_EQ(run.module.manifest.dispatches.front().strategy, "topk: candidates per chunk");
}

TEST(TopKKernel, LargeKOfLongRowsSortsGlobally) {
  check_topk({.shape = {2, 9000}, .k = 3000}, tied_input({2, 9000}, 16, 100));
  check_topk({.shape = {9000, 2}, .k = 9000, .axis = 0, .largest = false}, tied_input({9000, 2}, 17, 100));
}

TEST(TopKKernel, EveryStrategy) {
  for (const char* strategy : {"workgroup", "select", "candidates", "global"}) {
    SCOPED_TRACE(strategy);
    check_topk({.shape = {5, 400}, .k = 6}, tied_input({5, 400}, 18, 50), strategy);
  }
}

TEST(TopKKernel, MinimalProfileOnDevice) {
  // vulkan-min has no int64: i64 indices are written as (low, high) words. Its plans run on
  // lavapipe too, so the word pairs are checked against the reference here.
  for (TopKConfig c : {TopKConfig{.shape = {3, 50}, .k = 7},
                       TopKConfig{.shape = {2, 30000}, .k = 9, .largest = false},
                       TopKConfig{.shape = {2, 5000}, .k = 1000, .use_values = false}}) {
    ir::Graph g = topk_graph(c);
    GpuRunOptions options;
    options.target = "vulkan-min";
    GpuRun run = run_on_gpu(g, {{"x", tied_input(c.shape, 20, 300)}}, options);
    for (const auto& [name, ref] : run.reference) EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << name;
  }
}

TEST(TopKKernel, IntegerInput) {
  std::mt19937 rng(19);
  HostTensor x = random_tensor(DType::i32, {4, 3000}, rng, -1000, 1000);
  check_topk({.shape = {4, 3000}, .k = 9}, x);
  check_topk({.shape = {4, 3000}, .k = 9, .largest = false}, x);
}

}  // namespace
}  // namespace vkc::test
