// The radix sort plan (codegen/kernels/sort_radix.cpp) on the device (lavapipe): exact match of
// sorted keys and payloads with the reference interpreter for rows spanning several tiles, several
// rows, any axis, both directions, ties, NaN / inf / signed zero and every key type it plans digit
// passes for, with both tile rankings (subgroup ballots where the device has them, the portable
// one forced) and with results written by the last scatter or gathered; plus the plan it compiles
// to for long rows on every target profile.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "codegen/glsl_types.h"
#include "codegen/kernels/sort_common.h"
#include "common/gpu_harness.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

int count_kernels(const ModuleImage& image, const std::string& kernel) {
  int n = 0;
  for (const DispatchDesc& d : image.manifest.dispatches) n += d.kernel == kernel;
  return n;
}

// Compiles for every profile (when `all_targets`; profiles without storage for an input's type
// must refuse it), then runs on the device with `forced` (empty: the planner's own choice, which
// must be radix too) and compares every output byte for byte with the reference.
void check_radix(const ir::Graph& graph, const std::map<std::string, HostTensor>& inputs,
                 const std::string& forced = "radix", int digit_passes = 4, bool all_targets = true) {
  for (const std::string& target : all_targets ? known_targets() : std::vector<std::string>{}) {
    codegen::CompileOptions co;
    co.target = find_target(target).limits;
    if (!forced.empty()) co.forced_strategy = {{"sort", forced}};
    bool storable = true;
    for (const ir::Value* v : graph.inputs()) storable &= codegen::gpu_storable(v->type.dtype, co.target);
    if (storable)
      EXPECT_NO_THROW(codegen::compile_graph(graph, co)) << "target " << target;
    else
      EXPECT_THROW(codegen::compile_graph(graph, co), Error) << "target " << target;
  }
  GpuRunOptions options;
  if (!forced.empty()) options.forced_strategy = {{"sort", forced}};
  GpuRun run = run_on_gpu(graph, inputs, options);
  if (!split_testing()) {  // a range split sorts the rows by blocks: more passes
    EXPECT_EQ(count_kernels(run.module, "sort_radix_scatter"), digit_passes);
    EXPECT_EQ(count_kernels(run.module, "sort_block"), 0);
  }
  for (const auto& [name, ref] : run.reference) {
    ASSERT_TRUE(run.outputs.count(name)) << name;
    EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << "output " << name;
  }
}

// Sort of x (its dtype) along `axis`, with an i32 payload of input positions along the axis,
// which reveals the order chosen among equal keys.
ir::Graph sort_with_positions(DType dtype, const Shape& shape, int64_t axis, bool descending) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {dtype, shape});
  ir::Value* pos = g.add_input("pos", {DType::i32, shape});
  ir::Op* op = g.add_op(ir::OpKind::Sort, {x, pos}, {{"axis", axis}, {"descending", descending}}, "s");
  g.add_output(op->result(0), "sorted");
  g.add_output(op->result(1), "order");
  return g;
}

HostTensor positions(const Shape& shape, int64_t axis) {
  HostTensor p(DType::i32, shape);
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  for (int64_t i = 0; i < p.numel(); ++i) p.set_i64(i, (i / inner) % shape[size_t(axis)]);
  return p;
}

// Few distinct values, so most keys have equals (stability matters in every pass).
HostTensor tied(DType dtype, const Shape& shape, uint32_t seed, int distinct) {
  std::mt19937 rng(seed);
  HostTensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(int(rng() % distinct) - distinct / 2));
  return t;
}

// Random f32 keys drawn from specials (NaN of both signs and a payload, +-inf, +-0) and a few
// numbers of both signs, including denormals.
HostTensor specials(const Shape& shape, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t payload_nan_bits = 0xFFC01234u;
  float payload_nan;
  std::memcpy(&payload_nan, &payload_nan_bits, 4);
  const float pool[] = {std::nanf(""), -std::nanf(""), payload_nan, inf, -inf, 0.0f, -0.0f, 1.0f, -1.0f,
                        1e-40f, -1e-40f, 3.5f, -2.25f, std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::lowest()};
  std::mt19937 rng(seed);
  HostTensor t(DType::f32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<float>()[i] = pool[rng() % std::size(pool)];
  return t;
}

TEST(SortRadix, RowsSpanningSeveralTiles) {
  // Forced on rows that fit a chunk: 128-key tiles, so rows of 1, 2, 3+ tiles with a partial last.
  for (Shape shape : {Shape{1}, Shape{7, 5}, Shape{3, 128}, Shape{2, 129}, Shape{5, 1000}}) {
    SCOPED_TRACE(shape_str(shape));
    ir::Graph g = sort_with_positions(DType::f32, shape, -1, false);
    auto inputs = random_inputs(g, 41);
    inputs["pos"] = positions(shape, int64_t(shape.size()) - 1);
    check_radix(g, inputs, "radix", 4, shape == Shape{5, 1000});
  }
}

TEST(SortRadix, LongRowsChooseRadix) {
  // Longer than a chunk on every profile: the planner's choice, with its full-size tiles.
  Shape shape{3, 9000};
  ir::Graph g = sort_with_positions(DType::f32, shape, 1, false);
  auto inputs = random_inputs(g, 42);
  inputs["pos"] = positions(shape, 1);
  check_radix(g, inputs, "");
}

TEST(SortRadix, TiesAreStableBothDirections) {
  for (bool descending : {false, true}) {
    SCOPED_TRACE(descending ? "descending" : "ascending");
    Shape shape{4, 777};
    ir::Graph g = sort_with_positions(DType::f32, shape, 1, descending);
    check_radix(g, {{"x", tied(DType::f32, shape, 43, 5)}, {"pos", positions(shape, 1)}});
  }
}

TEST(SortRadix, NaNInfAndSignedZeroBothDirections) {
  for (bool descending : {false, true}) {
    SCOPED_TRACE(descending ? "descending" : "ascending");
    Shape shape{2, 3000};
    ir::Graph g = sort_with_positions(DType::f32, shape, 1, descending);
    check_radix(g, {{"x", specials(shape, 44)}, {"pos", positions(shape, 1)}});
  }
}

TEST(SortRadix, AnyAxis) {
  Shape shape{3, 400, 5};
  for (int64_t axis : {0, 1, 2}) {
    SCOPED_TRACE(cat("axis ", axis));
    ir::Graph g = sort_with_positions(DType::f32, shape, axis, axis == 1);
    check_radix(g, {{"x", tied(DType::f32, shape, 45, 60)}, {"pos", positions(shape, axis)}}, "radix", 4,
                axis == 1);
  }
  // A long middle axis with the planner's own tiles.
  Shape longer{2, 5000, 3};
  ir::Graph g = sort_with_positions(DType::f32, longer, 1, true);
  check_radix(g, {{"x", tied(DType::f32, longer, 46, 2000)}, {"pos", positions(longer, 1)}}, "");
}

TEST(SortRadix, PayloadsOfDifferentTypes) {
  Shape shape{3, 700, 2};
  ir::Graph g;
  ir::Value* keys = g.add_input("keys", {DType::f32, shape});
  ir::Value* a = g.add_input("a", {DType::i32, shape});
  ir::Value* b = g.add_input("b", {DType::f16, shape});
  ir::Op* op = g.add_op(ir::OpKind::Sort, {keys, a, b}, {{"axis", int64_t(1)}, {"descending", true}});
  g.add_output(op->result(1), "a_sorted");
  g.add_output(op->result(2), "b_sorted");
  auto inputs = random_inputs(g, 47);
  inputs["keys"] = tied(DType::f32, shape, 48, 30);
  check_radix(g, inputs);
}

TEST(SortRadix, KeyTypesAndTheirDigitPasses) {
  Shape shape{3, 1500};
  {
    SCOPED_TRACE("i32");
    ir::Graph g = sort_with_positions(DType::i32, shape, 1, true);
    HostTensor x(DType::i32, shape);
    std::mt19937 rng(49);
    for (int64_t i = 0; i < x.numel(); ++i) x.as<int32_t>()[i] = int32_t(rng()) >> (rng() % 32);
    x.as<int32_t>()[0] = std::numeric_limits<int32_t>::min();
    x.as<int32_t>()[1] = std::numeric_limits<int32_t>::max();
    x.as<int32_t>()[2] = std::numeric_limits<int32_t>::min();
    check_radix(g, {{"x", x}, {"pos", positions(shape, 1)}});
  }
  // f16 keys skip the lowest digit, 8-bit keys all but one or two.
  for (auto [dtype, passes] : {std::pair{DType::f16, 3}, std::pair{DType::i8, 2}, std::pair{DType::u8, 1}}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(cat(dtype_name(dtype), descending ? " descending" : ""));
      ir::Graph g = sort_with_positions(dtype, shape, 1, descending);
      HostTensor x = dtype == DType::f16 ? tied(DType::f16, shape, 50, 1000) : HostTensor(dtype, shape);
      std::mt19937 rng(51);
      if (dtype != DType::f16)
        for (int64_t i = 0; i < x.numel(); ++i) std::memset(x.as<uint8_t>() + i, int(rng() & 0xFF), 1);
      if (dtype == DType::f16) {  // specials as f16: NaN, -inf, -0.0, a denormal
        for (uint16_t bits : {uint16_t(0x7E00), uint16_t(0xFC00), uint16_t(0x8000), uint16_t(0x0001),
                              uint16_t(0xFE01), uint16_t(0x7C00)})
          std::memcpy(x.as<uint16_t>() + (bits % 997) * 3, &bits, 2);
      }
      check_radix(g, {{"x", x}, {"pos", positions(shape, 1)}}, "radix", passes);
    }
  }
}

int count_strategy(const ModuleImage& image, const std::string& prefix) {
  int n = 0;
  for (const DispatchDesc& d : image.manifest.dispatches) n += d.strategy.rfind(prefix, 0) == 0;
  return n;
}

// Both tile rankings on the device: ballots (lavapipe offers them; its subgroups of 8 make many
// per workgroup) and the portable one, forced, on the same specials, ties and payloads.
TEST(SortRadix, BallotAndPortableRankingAgree) {
  for (const char* strategy : {"radix", "radix_portable"}) {
    for (bool descending : {false, true}) {
      SCOPED_TRACE(cat(strategy, descending ? " descending" : ""));
      Shape shape{3, 1100};
      ir::Graph g = sort_with_positions(DType::f32, shape, 1, descending);
      HostTensor x = specials(shape, 54);
      HostTensor ties = tied(DType::f32, shape, 55, 4);
      for (int64_t i = 0; i < x.numel(); i += 2) x.as<float>()[i] = ties.as<float>()[i];
      GpuRunOptions options;
      options.forced_strategy = {{"sort", strategy}};
      GpuRun run = run_on_gpu(g, {{"x", x}, {"pos", positions(shape, 1)}}, options);
      bool ballot = std::string(strategy) == "radix" &&
                    codegen::kernels::radix_subgroup_ranking_possible(run.module.manifest.target);
      EXPECT_EQ(count_strategy(run.module, "radix ballot scatter"), ballot ? 4 : 0);
      EXPECT_EQ(count_strategy(run.module, "radix scatter bits"), ballot ? 0 : 4);
      for (const auto& [name, ref] : run.reference) EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << name;
    }
  }
}

// Which results the last scatter writes and which are gathered from `order`: values of 4-byte
// keys, and one 4-byte payload carried in the pairs; anything else is gathered, and still exact.
TEST(SortRadix, ResultsWrittenByTheLastPassOrGathered) {
  Shape shape{2, 900};
  struct Case {
    DType key, payload;
    bool two_payloads;
    int gathers;
  };
  for (Case c : {Case{DType::f32, DType::i32, false, 0}, Case{DType::i32, DType::f32, false, 0},
                 Case{DType::i32, DType::f16, false, 1}, Case{DType::f32, DType::i32, true, 2},
                 Case{DType::f16, DType::i32, false, 2}}) {
    SCOPED_TRACE(cat(dtype_name(c.key), " keys, ", dtype_name(c.payload), c.two_payloads ? " x2" : ""));
    ir::Graph g;
    ir::Value* x = g.add_input("x", {c.key, shape});
    std::vector<ir::Value*> operands{x, g.add_input("a", {c.payload, shape})};
    if (c.two_payloads) operands.push_back(g.add_input("b", {DType::i32, shape}));
    ir::Op* op = g.add_op(ir::OpKind::Sort, operands, {{"axis", int64_t(1)}, {"descending", true}});
    for (int i = 0; i < int(op->results.size()); ++i) g.add_output(op->result(i), cat("r", i));
    auto inputs = random_inputs(g, 56);
    inputs["x"] = c.key == DType::f32 ? specials(shape, 57) : tied(c.key, shape, 57, 40);
    GpuRunOptions options;
    options.forced_strategy = {{"sort", "radix"}};
    GpuRun run = run_on_gpu(g, inputs, options);
    EXPECT_EQ(count_kernels(run.module, "sort_gather"), c.gathers);
    for (const auto& [name, ref] : run.reference) EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << name;
  }
}

TEST(SortRadix, MinimalProfileOnDevice) {
  // vulkan-min's plan (smaller tiles and workgroups) also runs on lavapipe.
  Shape shape{2, 6000};
  ir::Graph g = sort_with_positions(DType::f32, shape, 1, false);
  GpuRunOptions options;
  options.target = "vulkan-min";
  GpuRun run = run_on_gpu(g, {{"x", specials(shape, 52)}, {"pos", positions(shape, 1)}}, options);
  if (!split_testing()) {  // a range split sorts the rows by blocks: more passes
    EXPECT_EQ(count_kernels(run.module, "sort_radix_scatter"), 4);
    EXPECT_EQ(count_strategy(run.module, "radix scatter bits"), 4);  // no subgroups on vulkan-min
  }
  for (const auto& [name, ref] : run.reference) EXPECT_TRUE(same_bytes(run.outputs.at(name), ref)) << name;
}

// 2^24 and 2^26 keys in one row: every profile whose buffers hold the row compiles the radix plan
// (three dispatches per digit, whose workgroup memory the compiler checks against the profile);
// on the others the range split sorts the row by blocks (codegen/range_split_sort.cpp).
TEST(SortRadix, LongRowsCompileForEveryProfile) {
  for (int log_n : {24, 26}) {
    int64_t n = int64_t(1) << log_n;
    ir::Graph g = sort_with_positions(DType::f32, {n}, 0, false);
    for (const std::string& target : known_targets()) {
      SCOPED_TRACE(cat("2^", log_n, " keys on ", target));
      codegen::CompileOptions co;
      co.target = find_target(target).limits;
      // The largest buffers: the key pairs (2n uints) and the sorted payload (n floats).
      if (uint64_t(n) * 8 > co.target.max_storage_buffer_range) {
        ModuleImage image = codegen::compile_graph(g, co);
        EXPECT_TRUE(std::any_of(image.manifest.dispatches.begin(), image.manifest.dispatches.end(), [](const DispatchDesc& d) {
          return d.notes.find("odd-even transposition sort over") != std::string::npos;
        }));
        continue;
      }
      ModuleImage image = codegen::compile_graph(g, co);
      EXPECT_EQ(count_kernels(image, "sort_radix_count"), 4);
      EXPECT_EQ(count_kernels(image, "sort_radix_scan"), 4);
      EXPECT_EQ(count_kernels(image, "sort_radix_scatter"), 4);
      // 4-byte keys and payload: the last scatter writes both results, so nothing is gathered.
      EXPECT_EQ(count_kernels(image, "sort_gather"), 0);
      EXPECT_EQ(image.manifest.dispatches.size(), 12u);
    }
  }
}

}  // namespace
}  // namespace vkc::test
