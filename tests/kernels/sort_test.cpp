// Sort on the device (lavapipe): exact match of sorted keys and payloads with the reference
// interpreter (stable order, NaN last ascending / first descending, -0.0 == 0.0), for every plan
// (workgroup bitonic, global bitonic, radix), any axis, and compiled for every target profile.
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

// Every profile must accept the graph (the compiler checks each kernel's budget), then the device
// run must match the reference exactly.
GpuRun check_sort(const ir::Graph& graph, const std::map<std::string, HostTensor>& inputs,
                  const std::string& forced = "") {
  for (const std::string& target : known_targets()) {
    codegen::CompileOptions co;
    co.target = find_target(target).limits;
    EXPECT_NO_THROW(codegen::compile_graph(graph, co)) << "target " << target;
  }
  GpuRunOptions options;
  if (!forced.empty()) options.forced_strategy = {{"sort", forced}};
  GpuRun run = run_on_gpu(graph, inputs, options);
  for (const auto& [name, ref] : run.reference) {
    EXPECT_TRUE(run.outputs.count(name)) << name;
    if (run.outputs.count(name)) {
      EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << "output " << name;
    }
  }
  return run;
}

ir::Graph sort_graph(DType dtype, const Shape& shape, int64_t axis, bool descending) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {dtype, shape});
  ir::Op* op = g.add_op(ir::OpKind::Sort, {x}, {{"axis", axis}, {"descending", descending}}, "s");
  g.add_output(op->result(0), "sorted");
  return g;
}

// Keys with many ties (few distinct values), so stability is exercised.
HostTensor tied_keys(DType dtype, const Shape& shape, uint32_t seed, int distinct = 7) {
  std::mt19937 rng(seed);
  HostTensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(int(rng() % distinct) - distinct / 2));
  return t;
}

TEST(SortKernel, TiesAreStableAscendingAndDescending) {
  for (bool descending : {false, true}) {
    ir::Graph g = sort_graph(DType::f32, {3, 37}, -1, descending);
    ir::Value* x = g.inputs()[0];
    // Payload: positions, which reveal the order of tied keys.
    ir::Value* pos = g.add_input("pos", {DType::i32, {3, 37}});
    ir::Op* op = g.add_op(ir::OpKind::Sort, {x, pos}, {{"axis", int64_t(-1)}, {"descending", descending}});
    g.add_output(op->result(1), "order");
    HostTensor p(DType::i32, {3, 37});
    for (int64_t i = 0; i < p.numel(); ++i) p.set_i64(i, i % 37);
    check_sort(g, {{"x", tied_keys(DType::f32, {3, 37}, 1)}, {"pos", p}});
  }
}

TEST(SortKernel, NaNInfAndSignedZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, nan, 1.0f, -inf, inf, -nan, -0.0f, 0.0f, -1.0f, nan, 3.0f, -0.0f};
  int64_t n = int64_t(v.size());
  for (bool descending : {false, true}) {
    ir::Graph g = sort_graph(DType::f32, {n}, 0, descending);
    ir::Value* pos = g.add_input("pos", {DType::i32, {n}});
    ir::Op* op = g.add_op(ir::OpKind::Sort, {g.inputs()[0], pos}, {{"axis", int64_t(0)}, {"descending", descending}});
    g.add_output(op->result(1), "order");
    HostTensor x(DType::f32, {n}), p(DType::i32, {n});
    std::memcpy(x.data(), v.data(), v.size() * 4);
    for (int64_t i = 0; i < n; ++i) p.set_i64(i, i);
    check_sort(g, {{"x", x}, {"pos", p}});
  }
}

TEST(SortKernel, IntegerKeys) {
  ir::Graph g = sort_graph(DType::i32, {5, 100}, 1, false);
  HostTensor x(DType::i32, {5, 100});
  std::mt19937 rng(3);
  for (int64_t i = 0; i < x.numel(); ++i) x.as<int32_t>()[i] = int32_t(rng());
  x.as<int32_t>()[0] = std::numeric_limits<int32_t>::min();
  x.as<int32_t>()[1] = std::numeric_limits<int32_t>::max();
  check_sort(g, {{"x", x}});
  ir::Graph d = sort_graph(DType::i32, {5, 100}, 1, true);
  check_sort(d, {{"x", x}});
}

TEST(SortKernel, RowLengthsAndBatches) {
  // n = 1, non powers of two, several rows per workgroup, a full chunk and just above it.
  for (Shape shape : {Shape{1}, Shape{7}, Shape{1000, 3}, Shape{2, 33}, Shape{4, 2048}, Shape{3, 2049},
                      Shape{2, 5000}}) {
    SCOPED_TRACE(shape_str(shape));
    ir::Graph g = sort_graph(DType::f32, shape, -1, false);
    check_sort(g, random_inputs(g, 11));
  }
}

TEST(SortKernel, AnyAxis) {
  Shape shape{4, 9, 6};
  for (int64_t axis : {0, 1, 2}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(cat("axis ", axis, descending ? " descending" : ""));
      ir::Graph g = sort_graph(DType::f32, shape, axis, descending);
      check_sort(g, {{"x", tied_keys(DType::f32, shape, 5)}});
    }
  }
  // Long rows on a middle axis go through the radix plan with strided keys.
  ir::Graph g = sort_graph(DType::f32, {2, 6000, 3}, 1, true);
  check_sort(g, {{"x", tied_keys(DType::f32, {2, 6000, 3}, 6, 1000)}});
}

TEST(SortKernel, EveryStrategyOnShortRows) {
  for (const char* strategy : {"workgroup", "global"}) {
    SCOPED_TRACE(strategy);
    ir::Graph g = sort_graph(DType::f32, {6, 300}, 0, false);
    check_sort(g, {{"x", tied_keys(DType::f32, {6, 300}, 8)}}, strategy);
  }
}

TEST(SortKernel, PayloadsOfDifferentTypes) {
  Shape shape{3, 1500, 2};
  ir::Graph g;
  ir::Value* keys = g.add_input("keys", {DType::f32, shape});
  ir::Value* a = g.add_input("a", {DType::i32, shape});
  ir::Value* b = g.add_input("b", {DType::f32, shape});
  ir::Op* op = g.add_op(ir::OpKind::Sort, {keys, a, b}, {{"axis", int64_t(1)}, {"descending", true}});
  g.add_output(op->result(0), "keys_sorted");
  g.add_output(op->result(1), "a_sorted");
  g.add_output(op->result(2), "b_sorted");
  auto inputs = random_inputs(g, 21);
  inputs["keys"] = tied_keys(DType::f32, shape, 22, 50);
  check_sort(g, inputs);
}

TEST(SortKernel, UnusedResultsGetNoBuffer) {
  Shape shape{4, 50};
  ir::Graph g;
  ir::Value* keys = g.add_input("keys", {DType::f32, shape});
  ir::Value* a = g.add_input("a", {DType::i32, shape});
  ir::Op* op = g.add_op(ir::OpKind::Sort, {keys, a}, {{"axis", int64_t(1)}, {"descending", false}});
  g.add_output(op->result(1), "a_sorted");  // sorted keys unused
  GpuRun run = check_sort(g, random_inputs(g, 4));
  // The workgroup pass writes the one used payload itself: a single dispatch.
  EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
  // The unused sorted keys have no tensor: only the inputs, the used output and sort scratch.
  for (const TensorDesc& t : run.module.manifest.tensors)
    EXPECT_TRUE(t.name == "keys" || t.name == "a" || t.name == "a_sorted" || t.name.rfind("sort", 0) == 0)
        << "unexpected tensor " << t.name;
}

// The workgroup pass writes the sorted values and one payload itself (f32 / i32 values from their
// key images, zeros and NaNs and other types read back at the index; the payload read at the
// index): one dispatch and no `order`, byte-exact for NaN payloads and -0.0, on a middle axis.
TEST(SortKernel, WorkgroupPassWritesValuesAndPayloadItself) {
  Shape shape{2, 300, 3};
  uint32_t nan_bits[] = {0x7FC00000u, 0xFFC01234u, 0x7F800001u, 0x80000000u, 0x00000000u, 0x80000001u};
  for (DType key : {DType::f32, DType::i32, DType::f16, DType::i8}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(cat(dtype_name(key), descending ? " descending" : ""));
      ir::Graph g;
      ir::Value* x = g.add_input("x", {key, shape});
      ir::Value* pos = g.add_input("pos", {DType::f32, shape});
      ir::Op* op = g.add_op(ir::OpKind::Sort, {x, pos}, {{"axis", int64_t(1)}, {"descending", descending}});
      g.add_output(op->result(0), "sorted");
      g.add_output(op->result(1), "payload");
      auto inputs = random_inputs(g, 40);
      inputs["x"] = tied_keys(key, shape, 41, 9);
      if (key == DType::f32)  // NaNs of both signs and a payload, both zeros, a denormal
        for (int64_t i = 0; i < inputs["x"].numel(); i += 3)
          std::memcpy(inputs["x"].as<float>() + i, &nan_bits[(i / 3) % 6], 4);
      if (key == DType::i32) {
        inputs["x"].as<int32_t>()[0] = std::numeric_limits<int32_t>::min();
        inputs["x"].as<int32_t>()[1] = std::numeric_limits<int32_t>::max();
      }
      // Every profile compiles the f32 plan; the other key types run on the device only (not every
      // profile stores them).
      GpuRun run = key == DType::f32 && !descending ? check_sort(g, inputs) : run_on_gpu(g, inputs);
      for (const auto& [name, ref] : run.reference) EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << name;
      if (split_testing()) continue;  // a range split adds pieces and their joins
      EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
      for (const TensorDesc& t : run.module.manifest.tensors) EXPECT_EQ(t.name.find("_order"), std::string::npos);
    }
  }
}

TEST(SortKernel, MillionKeysInOneRow) {
  int64_t n = int64_t(1) << 20;
  ir::Graph g = sort_graph(DType::f32, {n}, 0, false);
  check_sort(g, {{"x", tied_keys(DType::f32, {n}, 9, 100000)}});
}

TEST(SortKernel, MinimalProfileOnDevice) {
  // vulkan-min's plan (2048-pair chunks, 128 invocations) also runs on lavapipe.
  ir::Graph g = sort_graph(DType::f32, {3, 5000}, 1, true);
  GpuRunOptions options;
  options.target = "vulkan-min";
  GpuRun run = run_on_gpu(g, {{"x", tied_keys(DType::f32, {3, 5000}, 30, 300)}}, options);
  EXPECT_TRUE(same_bytes(run.outputs.at("sorted"), run.reference.at("sorted")));
}

TEST(SortKernel, HalfKeysOnDevice) {
  ir::Graph g = sort_graph(DType::f16, {4, 700}, 1, false);
  GpuRun run = run_on_gpu(g, {{"x", tied_keys(DType::f16, {4, 700}, 31, 40)}});
  EXPECT_TRUE(same_bytes(run.outputs.at("sorted"), run.reference.at("sorted")));
}

TEST(SortKernel, TwoToThe26KeysCompileWhereBuffersAllowThem) {
  // The global bitonic plan, kept as a forced strategy (the planner picks radix for such rows,
  // see sort_radix_test.cpp).
  ir::Graph g = sort_graph(DType::f32, {int64_t(1) << 26}, 0, false);
  codegen::CompileOptions co;
  co.target = find_target("nvidia").limits;
  co.forced_strategy = {{"sort", "global"}};
  ModuleImage image = codegen::compile_graph(g, co);
  EXPECT_EQ(image.manifest.dispatches.front().strategy, "global bitonic: presort chunks");
  // 2^28 bytes of keys exceed vulkan-min's maxStorageBufferRange: the range split sorts the row
  // by blocks, each block pair with the forced plan.
  co.target = find_target("vulkan-min").limits;
  image = codegen::compile_graph(g, co);
  EXPECT_NE(image.manifest.dispatches.front().notes.find("odd-even transposition sort over"), std::string::npos);
  EXPECT_EQ(image.manifest.dispatches.front().strategy, "global bitonic: presort chunks");
}

TEST(SortKernel, UnknownStrategyIsAnError) {
  ir::Graph g = sort_graph(DType::f32, {8}, 0, false);
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.forced_strategy = {{"sort", "bogus"}};
  EXPECT_THROW(codegen::compile_graph(g, co), Error);
}

}  // namespace
}  // namespace vkc::test
