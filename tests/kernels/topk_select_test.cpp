// TopK by radix selection on the device (lavapipe): the select passes (candidates per segment,
// selection among candidates, final select + sort) are forced on small rows with tiny segments, so
// every level runs, and checked byte for byte against the reference interpreter: ties (lower index
// first), NaN, +-inf, -0.0 == 0.0, k = 1 and k = n, several rows, axes other than the last, largest
// and smallest, every key dtype, indices-only and values-only uses (the final level writes the
// results itself, values read back from the input). Long rows take select by default, many rows
// take small workgroups and two levels, and the benchmark shapes compile to it for every target
// profile.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

struct Case {
  Shape shape;
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
  std::string index_type = "i64";
  bool use_values = true, use_indices = true;
};

ir::Graph graph_of(const Case& c, DType dtype) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {dtype, c.shape});
  ir::Op* op = g.add_op(ir::OpKind::TopK, {x},
                        {{"k", c.k}, {"axis", c.axis}, {"largest", c.largest}, {"index_type", c.index_type}},
                        "top");
  if (c.use_values) g.add_output(op->result(0), "values");
  if (c.use_indices) g.add_output(op->result(1), "indices");
  return g;
}

// Few distinct values (many ties) and, for floats, NaN of both signs, +-inf, -0.0 and 0.0.
HostTensor special_input(DType dtype, const Shape& shape, uint32_t seed, int distinct = 7) {
  std::mt19937 rng(seed);
  HostTensor t(dtype, shape);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < t.numel(); ++i) {
    int r = int(rng() % uint32_t(distinct + 6));
    double v = double(r - distinct / 2) * (is_float(dtype) ? 0.5 : 1.0);
    if (dtype == DType::u8) v = double(r);
    if (is_float(dtype) && r >= distinct) {
      const double special[] = {nan, -nan, inf, -inf, -0.0, 0.0};
      v = special[r - distinct];
    }
    t.set_f64(i, v);
  }
  return t;
}

std::vector<std::string> strategies(const GpuRun& run) {
  std::vector<std::string> s;
  for (const DispatchDesc& d : run.module.manifest.dispatches) s.push_back(d.strategy);
  return s;
}

int count_select_passes(const GpuRun& run) {
  int n = 0;
  for (const DispatchDesc& d : run.module.manifest.dispatches) n += d.kernel == "topk_select";
  return n;
}

// Runs with `forced` ("" = the planner's own choice), checks every output byte for byte against the
// reference, and that select passes did the work.
GpuRun check(const Case& c, const HostTensor& x, const std::string& forced = "select") {
  GpuRunOptions options;
  if (!forced.empty()) options.forced_strategy = {{"topk", forced}};
  GpuRun run = run_on_gpu(graph_of(c, x.dtype()), {{"x", x}}, options);
  EXPECT_EQ(run.reference.size(), size_t(c.use_values) + size_t(c.use_indices));
  for (const auto& [name, ref] : run.reference) {
    EXPECT_TRUE(run.outputs.count(name)) << name;
    if (run.outputs.count(name)) {
      EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << "output " << name;
    }
  }
  if (!split_testing()) {  // a range split may sort by blocks instead
    EXPECT_GE(count_select_passes(run), 1);
  }
  // The final select level writes the results itself: no gather pass reads sorted positions.
  // (Under VKC_TEST_MAX_BINDING a range split adds slices, concats and gathers around the pieces.)
  if (!split_testing()) {
    for (const DispatchDesc& d : run.module.manifest.dispatches) EXPECT_EQ(d.kernel, "topk_select") << d.name;
  }
  return run;
}

TEST(TopKSelect, TiesNaNAndSignedZeroThroughEveryLevel) {
  HostTensor x = special_input(DType::f32, {3, 500}, 1);
  for (bool largest : {true, false})
    for (int64_t k : {1, 7, 64, 500}) {
      SCOPED_TRACE(cat("k ", k, largest ? " largest" : " smallest"));
      GpuRun run = check({.shape = {3, 500}, .k = k, .largest = largest}, x);
      // Tiny forced segments: all but k = n go through candidate levels before the final pass.
      if (k < 500) {
        EXPECT_GE(count_select_passes(run), 2);
        EXPECT_EQ(strategies(run).front(), "topk: select per segment");
      }
    }
}

TEST(TopKSelect, AllEqualKeysKeepLowestIndices) {
  // Every key tied: the select must walk the index digits to pick the lowest positions.
  HostTensor x(DType::f32, {2, 3000});
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, i % 2 == 0 ? 1.0 : -0.0);
  check({.shape = {2, 3000}, .k = 37}, x);
  check({.shape = {2, 3000}, .k = 200, .largest = false}, x);
  check({.shape = {2, 3000}, .k = 1600}, x);
}

TEST(TopKSelect, AxesRowsAndUses) {
  check({.shape = {4, 300, 3}, .k = 5, .axis = 1}, special_input(DType::f32, {4, 300, 3}, 2));
  check({.shape = {300, 2}, .k = 300, .axis = 0, .largest = false}, special_input(DType::f32, {300, 2}, 3));
  check({.shape = {37, 5, 2}, .k = 3, .axis = 0, .index_type = "i32"}, special_input(DType::f32, {37, 5, 2}, 4));
  check({.shape = {6, 300}, .k = 4, .use_values = false}, special_input(DType::f32, {6, 300}, 5, 40));
  check({.shape = {6, 300}, .k = 4, .use_indices = false}, special_input(DType::f32, {6, 300}, 6, 40));
  check({.shape = {1}, .k = 1}, special_input(DType::f32, {1}, 7));
}

TEST(TopKSelect, EveryKeyDType) {
  for (DType t : {DType::f32, DType::f16, DType::i32, DType::i8, DType::u8}) {
    SCOPED_TRACE(dtype_name(t));
    HostTensor x = special_input(t, {2, 700}, 8, 60);
    check({.shape = {2, 700}, .k = 9}, x);
    check({.shape = {2, 700}, .k = 9, .largest = false}, x);
  }
}

TEST(TopKSelect, LongRowsTakeSelectByDefault) {
  GpuRun run = check({.shape = {2, 70000}, .k = 100}, special_input(DType::f32, {2, 70000}, 9, 3000), "");
  EXPECT_EQ(strategies(run).front(), "topk: select per segment");
  check({.shape = {3, 9000, 2}, .k = 20, .axis = 1, .largest = false},
        special_input(DType::f32, {3, 9000, 2}, 10, 500), "");
  std::mt19937 rng(11);
  check({.shape = {int64_t(1) << 20}, .k = 10}, random_tensor(DType::f32, {int64_t(1) << 20}, rng), "");
  // Rows long enough for one segment each but few rows: still split, so the GPU fills.
  run = check({.shape = {2, 40000}, .k = 1000}, special_input(DType::f32, {2, 40000}, 12, 2000), "");
  EXPECT_GE(count_select_passes(run), 2);
}

TEST(TopKSelect, ManyRowsTakeSmallWorkgroupsAndTwoLevels) {
  // Enough segments of 4096 (256 invocations x 16 keys) to fill a GPU with 256-invocation
  // workgroups: rows are split though one 1024-invocation workgroup could hold them, and a second
  // level selects from each row's candidates (the first level of the 4096 x 32768, k = 1024
  // benchmark, on 512 rows of 8193 keys).
  std::mt19937 rng(14);
  HostTensor x = random_tensor(DType::f32, {512, 8193}, rng);
  GpuRun run = check({.shape = {512, 8193}, .k = 1000}, x, "");
  const std::vector<DispatchDesc>& d = run.module.manifest.dispatches;
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].strategy, "topk: select per segment");
  EXPECT_EQ(d[0].workgroup_size[0], 256u);
  EXPECT_EQ(uint64_t(d[0].workgroup_count[0]) * d[0].workgroup_count[1], 512u * 3u);  // 3 segments a row
  EXPECT_EQ(d[1].strategy, "topk: final select + sort");
  EXPECT_EQ(d[1].workgroup_size[0], 256u);
  check({.shape = {512, 8193}, .k = 3, .largest = false, .index_type = "i32"}, x, "");
}

TEST(TopKSelect, MinimalProfileOnDevice) {
  // vulkan-min: 128 invocations, 16 KiB of workgroup memory, four storage buffers per stage (the
  // final level binds candidates, source, values and indices), no subgroup operations (picks take
  // slots one atomic per invocation) and no 64-bit integers (i64 indices written as two words).
  for (Case c : {Case{.shape = {2, 30000}, .k = 9, .largest = false}, Case{.shape = {2, 5000}, .k = 1000}}) {
    GpuRunOptions options;
    options.target = "vulkan-min";
    GpuRun run = run_on_gpu(graph_of(c, DType::f32), {{"x", special_input(DType::f32, c.shape, 13, 300)}}, options);
    for (const auto& [name, ref] : run.reference) EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << name;
    EXPECT_GE(count_select_passes(run), 2);
  }
}

TEST(TopKSelect, BenchmarkShapesFitEveryTarget) {
  // The benchmark's topk shapes (bench/bench_cases.cpp) compile to select passes on every profile
  // that can bind their input; the compiler measures each pass's workgroup memory from its SPIR-V
  // against the plan and the target.
  const std::vector<Case> cases = {{.shape = {131072}, .k = 4},
                                   {.shape = {int64_t(1) << 20}, .k = 64},
                                   {.shape = {int64_t(1) << 24}, .k = 8},
                                   {.shape = {4096, 32768}, .k = 1024}};
  for (const std::string& target : known_targets())
    for (const Case& c : cases) {
      SCOPED_TRACE(cat(target, " ", shape_str(c.shape), " k ", c.k));
      codegen::CompileOptions co;
      co.target = find_target(target).limits;
      if (uint64_t(shape_numel(c.shape)) * 4 > co.target.max_storage_buffer_range && c.shape.size() == 1) {
        // The input alone cannot be bound on this profile (lavapipe, vulkan-min: 128 MiB), and one
        // row cannot be split. Several rows run in pieces of rows (codegen/range_split.h).
        EXPECT_THROW(codegen::compile_graph(graph_of(c, DType::f32), co), Error);
        continue;
      }
      ModuleImage m;
      ASSERT_NO_THROW(m = codegen::compile_graph(graph_of(c, DType::f32), co));
      // Subgroup scans rank the histogram bins where the subgroup size is fixed (nvidia, amd-cdna3,
      // lavapipe; every level's workgroup is a multiple of it there), else the barrier-only search.
      const bool fixed = co.target.subgroup_arithmetic && co.target.min_subgroup_size >= 8 &&
                         co.target.min_subgroup_size == co.target.max_subgroup_size;
      for (const DispatchDesc& d : m.manifest.dispatches) {
        EXPECT_EQ(d.kernel, "topk_select") << d.name;
        EXPECT_LE(d.workgroup_memory_bytes, co.target.max_compute_shared_memory_size) << d.name;
        EXPECT_EQ(d.tiles.at("subgroup_bin_scan"), fixed && d.workgroup_size[0] % co.target.min_subgroup_size == 0 ? 1 : 0)
            << d.name;
        EXPECT_LE(d.tiles.at("histogram_copies"), d.tiles.at("subgroup_bin_scan") == 1 ? 2 : 8) << d.name;
        // Candidate levels settle small chosen bins by ranking, one invocation per pair; levels
        // that read the tensor do not (registers).
        const bool from_tensor = d.strategy == "topk: select per segment" || d.strategy == "topk: select + sort rows";
        EXPECT_EQ(d.tiles.at("resolve_bin_pairs"), from_tensor ? 0 : std::min<int64_t>(64, d.workgroup_size[0]))
            << d.name;
      }
    }
}

TEST(TopKSelect, KBeyondWorkgroupMemoryFallsBackOrFails) {
  // k = 5000 needs 8192 sorted picks (64 KiB): too much for lavapipe's 32 KiB.
  Case c{.shape = {8000}, .k = 5000};
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  ModuleImage m = codegen::compile_graph(graph_of(c, DType::f32), co);
  for (const DispatchDesc& d : m.manifest.dispatches) EXPECT_NE(d.kernel, "topk_select");
  co.forced_strategy = {{"topk", "select"}};
  try {
    codegen::compile_graph(graph_of(c, DType::f32), co);
    ADD_FAILURE() << "forced select with k = 5000 compiled";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("strategy 'select'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("k = 5000"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace vkc::test
