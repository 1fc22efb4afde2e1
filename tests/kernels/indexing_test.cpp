// gather / gather_elements / gather_nd / scatter_nd / scatter_elements kernels against the
// reference: seeded random data, indices with negative and out-of-range values (defined results:
// zeros for gathers, skipped updates for scatters), duplicates for scatters (applied in index
// order), several shapes, axes, dtypes and index types, outputs poisoned with NaN first (the
// harness), and compile checks on every target profile.
#include <random>

#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

// Indices uniform in [lo, hi] (inclusive), written as `t` (i32 or i64).
HostTensor random_indices(DType t, const Shape& shape, int64_t lo, int64_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  HostTensor out(t, shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set_i64(i, dist(rng));
  return out;
}

// Runs `g` (inputs x0 = data, x1 = indices, x2 = updates) with `indices` and random data.
void expect_matches(const ir::Graph& g, const HostTensor& indices, uint32_t seed, const std::string& op,
                    const std::string& target = "", const std::string& strategy = "") {
  std::map<std::string, HostTensor> in = random_inputs(g, seed);
  in["x1"] = indices;
  expect_gpu_matches(g, in, op, strategy, target);
}

struct GatherCase {
  Shape data;
  int64_t axis;
  Shape indices;
};

TEST(IndexingKernelTest, GatherAnyAxisWithNegativeAndOutOfRangeIndices) {
  const GatherCase cases[] = {
      {{5, 7}, 0, {3, 4}}, {{2, 6, 3}, 1, {4}}, {{3, 4, 5}, -1, {2, 2}}, {{6, 3}, 0, {}},
      {{2, 3, 4, 5}, 2, {3, 1, 2}}, {{9}, 0, {17}},
  };
  uint32_t seed = 100;
  for (const GatherCase& c : cases) {
    int64_t dim = c.data[size_t(c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis)];
    for (DType it : {DType::i64, DType::i32}) {
      for (DType dt : {DType::f32, DType::i64, DType::f16, DType::u8}) {
        SCOPED_TRACE(cat(shape_str(c.data), " axis ", c.axis, " indices ", shape_str(c.indices), " ",
                         dtype_name(it), " data ", dtype_name(dt)));
        ir::Graph g = one_op_graph(K::Gather, {{dt, c.data}, {it, c.indices}}, {{"axis", c.axis}});
        // In range (both signs), then out of range on both sides too.
        expect_matches(g, random_indices(it, c.indices, -dim, dim - 1, seed), seed, "gather");
        expect_matches(g, random_indices(it, c.indices, -dim - 3, dim + 2, seed + 1), seed + 1, "gather");
        ++seed;
      }
    }
  }
}

TEST(IndexingKernelTest, EmbeddingLookupFromAConstantTable) {
  // The transformer case: a constant [V, D] table, [B, S] token ids fed at run time.
  ir::Graph g;
  HostTensor table(DType::f32, {50, 16});
  for (int64_t i = 0; i < table.numel(); ++i) table.set_f64(i, double(i % 97) * 0.25 - 3.0);
  ir::Value* ids = g.add_input("x1", {DType::i64, {2, 7}});
  ir::Op* op = g.add_op(K::Gather, {g.add_constant(std::move(table)), ids}, {{"axis", int64_t(0)}}, "lookup");
  g.add_output(op->result(), "y");
  expect_gpu_matches(g, {{"x1", random_indices(DType::i64, {2, 7}, 0, 49, 7)}}, "gather");
  // Hostile ids (beyond the vocabulary, huge, negative beyond -V) read zeros.
  HostTensor hostile = make_i64({2, 7}, {0, 49, 50, -1, -50, -51, INT64_MAX, INT64_MIN, 1LL << 32,
                                         -(1LL << 32), 3, 4, 5, 6});
  expect_gpu_matches(g, {{"x1", hostile}}, "gather");
  expect_compiles_everywhere(g);
}

TEST(IndexingKernelTest, GatherElementsEveryAxis) {
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const Case cases[] = {{{4, 5}, {3, 5}, 0}, {{4, 5}, {4, 2}, 1}, {{3, 4, 5}, {2, 4, 7}, -1},
                        {{3, 4, 5}, {3, 6, 2}, 1}, {{8}, {12}, 0}};
  uint32_t seed = 200;
  for (const Case& c : cases) {
    int64_t dim = c.data[size_t(c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis)];
    for (DType it : {DType::i64, DType::i32})
      for (DType dt : {DType::f32, DType::i32, DType::f16}) {
        SCOPED_TRACE(cat(shape_str(c.data), " ", shape_str(c.indices), " axis ", c.axis, " ",
                         dtype_name(it), " ", dtype_name(dt)));
        ir::Graph g = one_op_graph(K::GatherElements, {{dt, c.data}, {it, c.indices}}, {{"axis", c.axis}});
        expect_matches(g, random_indices(it, c.indices, -dim - 2, dim + 1, seed), seed, "gather_elements");
        ++seed;
      }
  }
}

TEST(IndexingKernelTest, GatherNdWithBatchDims) {
  struct Case {
    Shape data, indices;
    int64_t batch_dims;
  };
  const Case cases[] = {{{2, 3, 4}, {5, 2}, 0}, {{2, 3, 4}, {5, 3}, 0}, {{2, 3, 4}, {2, 6, 1}, 1},
                        {{2, 3, 4, 5}, {2, 3, 2, 1}, 2}, {{4, 6}, {1}, 0}};
  uint32_t seed = 300;
  for (const Case& c : cases)
    for (DType it : {DType::i64, DType::i32}) {
      SCOPED_TRACE(cat(shape_str(c.data), " ", shape_str(c.indices), " b ", c.batch_dims, " ", dtype_name(it)));
      ir::Graph g = one_op_graph(K::GatherND, {f32(c.data), {it, c.indices}}, {{"batch_dims", c.batch_dims}});
      expect_matches(g, random_indices(it, c.indices, -4, 3, seed), seed, "gather_nd");  // in range
      expect_matches(g, random_indices(it, c.indices, -7, 6, seed + 1), seed + 1, "gather_nd");
      seed += 2;
    }
}

const char* kReductions[] = {"none", "add", "mul", "max", "min"};

TEST(IndexingKernelTest, ScatterNdReductionsWithDuplicatesAndOutOfRange) {
  struct Case {
    Shape data, indices;
  };
  // updates: indices.shape[:-1] + data.shape[k:]
  const Case cases[] = {{{8}, {5, 1}}, {{4, 5, 3}, {6, 1}}, {{4, 5, 3}, {2, 3, 2}}, {{4, 5, 3}, {7, 3}}};
  uint32_t seed = 400;
  for (const Case& c : cases) {
    size_t k = size_t(c.indices.back());
    Shape updates(c.indices.begin(), c.indices.end() - 1);
    updates.insert(updates.end(), c.data.begin() + ptrdiff_t(k), c.data.end());
    for (const char* r : kReductions)
      for (DType dt : {DType::f32, DType::i32, DType::f16}) {
        SCOPED_TRACE(cat(shape_str(c.data), " ", shape_str(c.indices), " ", r, " ", dtype_name(dt)));
        ir::Graph g = one_op_graph(K::ScatterND, {{dt, c.data}, {DType::i64, c.indices}, {dt, updates}},
                                   {{"reduction", std::string(r)}});
        // Small ranges make duplicates likely; -6..5 also goes out of range for dims of 4 and 5.
        // Both strategies (docs/ops.md) must give the reference's result, duplicates included.
        for (const char* strategy : {"owner scan", "update scan"}) {
          expect_matches(g, random_indices(DType::i64, c.indices, -4, 3, seed), seed, "scatter_nd", "", strategy);
          expect_matches(g, random_indices(DType::i64, c.indices, -6, 5, seed + 1), seed + 1, "scatter_nd", "",
                         strategy);
        }
        seed += 2;
      }
  }
}

TEST(IndexingKernelTest, ScatterNdPicksTheScanThatDecodesFewerTuples) {
  // A few rows written into a large table (a cache update): the update scan. Many duplicate
  // tuples each carrying large slices into a small table: the owner scan.
  auto strategies = [](const ir::Graph& g) {
    codegen::CompileOptions co;
    co.target = find_target("lavapipe").limits;
    std::string s;
    for (const DispatchDesc& d : codegen::compile_graph(g, co).manifest.dispatches) s += d.strategy + ";";
    return s;
  };
  ir::Graph cache = one_op_graph(K::ScatterND, {f32({64, 32}), {DType::i64, {8, 1}}, f32({8, 32})});
  EXPECT_EQ(strategies(cache), "update scan: copy data;update scan, reduction none;");
  ir::Graph dense = one_op_graph(K::ScatterND, {f32({4, 5, 3}), {DType::i64, {6, 1}}, f32({6, 5, 3})},
                                 {{"reduction", std::string("add")}});
  EXPECT_EQ(strategies(dense), "owner scan, reduction add;");
  expect_matches(cache, random_indices(DType::i64, {8, 1}, -70, 70, 450), 450, "scatter_nd");
  expect_compiles_everywhere(cache);
  codegen::CompileOptions co;
  co.forced_strategy["scatter_nd"] = "atomics";
  EXPECT_NE(compile_error(cache, co).find("strategy 'atomics' is not one of 'owner scan', 'update scan'"),
            std::string::npos)
      << compile_error(cache, co);
}

TEST(IndexingKernelTest, ScatterElementsReductionsEveryAxis) {
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const Case cases[] = {{{6}, {9}, 0}, {{4, 5}, {3, 5}, 0}, {{4, 5}, {4, 7}, 1}, {{3, 4, 5}, {2, 3, 4}, -1},
                        {{3, 4, 5}, {3, 6, 2}, 1}};
  uint32_t seed = 500;
  for (const Case& c : cases) {
    int64_t dim = c.data[size_t(c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis)];
    for (const char* r : kReductions)
      for (DType it : {DType::i64, DType::i32})
        for (DType dt : {DType::f32, DType::i64}) {
          SCOPED_TRACE(cat(shape_str(c.data), " ", shape_str(c.indices), " axis ", c.axis, " ", r, " ",
                           dtype_name(it), " ", dtype_name(dt)));
          ir::Graph g = one_op_graph(K::ScatterElements, {{dt, c.data}, {it, c.indices}, {dt, c.indices}},
                                     {{"axis", c.axis}, {"reduction", std::string(r)}});
          expect_matches(g, random_indices(it, c.indices, -dim - 1, dim, seed), seed, "scatter_elements");
          ++seed;
        }
  }
}

TEST(IndexingKernelTest, BoolAndNarrowTypesMoveBitExactly) {
  ir::Graph g = one_op_graph(K::ScatterND, {{DType::boolean, {6, 4}}, {DType::i32, {3, 1}}, {DType::boolean, {3, 4}}});
  expect_matches(g, random_indices(DType::i32, {3, 1}, -7, 6, 600), 600, "scatter_nd");
  ir::Graph h = one_op_graph(K::ScatterElements, {{DType::i8, {5, 3}}, {DType::i64, {4, 3}}, {DType::i8, {4, 3}}},
                             {{"reduction", std::string("mul")}});  // wraps at 8 bits
  expect_matches(h, random_indices(DType::i64, {4, 3}, -5, 4, 601), 601, "scatter_elements");
}

TEST(IndexingKernelTest, I64IndicesWithoutShaderInt64) {
  // Indices are read as 32-bit word pairs, so the smallest profile runs every op.
  ir::Graph g = one_op_graph(K::Gather, {f32({7, 3}), {DType::i64, {5}}}, {{"axis", int64_t(0)}});
  expect_matches(g, random_indices(DType::i64, {5}, -9, 8, 700), 700, "gather", "vulkan-min");
  ir::Graph s = one_op_graph(K::ScatterElements, {f32({4, 3}), {DType::i64, {2, 3}}, f32({2, 3})},
                             {{"reduction", std::string("add")}});
  expect_matches(s, random_indices(DType::i64, {2, 3}, -5, 4, 701), 701, "scatter_elements", "vulkan-min");
  expect_compiles_everywhere(g);
  expect_compiles_everywhere(s);
  ir::Graph n = one_op_graph(K::GatherND, {f32({3, 4, 2}), {DType::i64, {6, 2}}});
  expect_compiles_everywhere(n);
}

TEST(IndexingKernelTest, ReductionOnAnUnstorableTypeNamesTheFeature) {
  // i64 arithmetic needs shaderInt64; "none" moves words and does not.
  ir::Graph g = one_op_graph(K::ScatterND, {{DType::i64, {4}}, {DType::i64, {2, 1}}, {DType::i64, {2}}},
                             {{"reduction", std::string("add")}});
  codegen::CompileOptions co;
  co.target = find_target("vulkan-min").limits;
  ASSERT_FALSE(co.target.shader_int64) << "the test needs a profile without shaderInt64";
  EXPECT_NE(compile_error(g, co).find("shaderInt64"), std::string::npos) << compile_error(g, co);
}

}  // namespace
}  // namespace vkc::test
