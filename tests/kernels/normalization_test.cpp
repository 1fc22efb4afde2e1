// The normalizations and reductions group (issue 23) against the float64 reference on seeded
// random inputs, outputs poisoned with NaN by the harness: layer_norm and group_norm with every
// strategy (loop, cached, streamed), rows longer than workgroup memory (the streamed fallback
// chosen by itself), rows that are not a multiple of the workgroup, a residual add fused into the
// load; reduce_prod/l1/l2/log_sum_exp with both reduction strategies; cumsum in every form.
#include <cmath>

#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;
const char* const kNormStrategies[] = {"loop", "cached", "streamed"};
const char* const kReduceStrategies[] = {"loop", "workgroup"};

// The strategies of every dispatch of a run (one kernel per graph here).
std::vector<std::string> strategies(const GpuRun& run) {
  std::vector<std::string> s;
  for (const DispatchDesc& d : run.module.manifest.dispatches) s.push_back(d.strategy);
  return s;
}

struct LayerNormCase {
  Shape shape;
  int64_t axis;
  int operands;  // 1: input only, 2: + scale, 3: + scale and bias
};

class LayerNormKernelTest : public ::testing::TestWithParam<LayerNormCase> {};

TEST_P(LayerNormKernelTest, EveryStrategyMatchesReference) {
  const LayerNormCase& c = GetParam();
  int64_t axis = c.axis < 0 ? c.axis + int64_t(c.shape.size()) : c.axis;
  Shape normalized(c.shape.begin() + axis, c.shape.end());
  std::vector<ir::TensorType> in{f32(c.shape)};
  for (int i = 1; i < c.operands; ++i) in.push_back(f32(normalized));
  ir::Graph g = one_op_graph(K::LayerNorm, in, {{"axis", c.axis}, {"epsilon", 1e-5}});
  for (const char* s : kNormStrategies) expect_gpu_matches(g, 61, "layer_norm", s);
  // RMSNorm (`rms`: no mean taken out), on data with an offset, where leaving the mean in changes
  // every output.
  ir::Graph rms = one_op_graph(K::LayerNorm, in, {{"axis", c.axis}, {"epsilon", 1e-5}, {"rms", true}});
  std::map<std::string, HostTensor> inputs = random_inputs(rms, 63);
  HostTensor& x = inputs.at("x0");
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, 0.5 + x.get_f64(i));
  for (const char* s : kNormStrategies) expect_gpu_matches(rms, inputs, "layer_norm", s);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LayerNormKernelTest,
    ::testing::Values(LayerNormCase{{4, 37}, -1, 3}, LayerNormCase{{3, 300}, 1, 3}, LayerNormCase{{2, 3, 5, 7}, 1, 3},
                      LayerNormCase{{2, 6, 50}, -2, 2}, LayerNormCase{{3, 100}, 0, 1},
                      LayerNormCase{{5, 768}, -1, 3}, LayerNormCase{{7, 1}, -1, 3}));

TEST(NormalizationKernelTest, LayerNormOfOffsetDataKeepsItsVariance) {
  // Values 1000 +- 1: a one-pass E[x^2] - E[x]^2 in f32 would lose the variance entirely, and a
  // plain f32 sum for the mean loses about 1e-4 of it (the kernels sum relative to the first element).
  ir::Graph g = one_op_graph(K::LayerNorm, {f32({4, 500})});
  std::map<std::string, HostTensor> in = random_inputs(g, 7);
  HostTensor& x = in.at("x0");
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, 1000 + x.get_f64(i));
  for (const char* s : kNormStrategies) expect_gpu_matches(g, in, "layer_norm", s);
}

TEST(NormalizationKernelTest, LongRowsFallBackToStreamed) {
  // 9001 floats do not fit lavapipe's 32 KiB of workgroup memory beside the partial sums; 5000
  // do not fit vulkan-min's 16 KiB.
  ir::Graph g = one_op_graph(K::LayerNorm, {f32({3, 9001}), f32({9001}), f32({9001})});
  GpuRunOptions o;
  GpuRun run = run_on_gpu(g, random_inputs(g, 5), o);
  EXPECT_TRUE(outputs_match(run, o));
  EXPECT_EQ(strategies(run), std::vector<std::string>{"streamed"});
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.forced_strategy["layer_norm"] = "cached";
  EXPECT_NE(compile_error(g, co).find("strategy 'cached' needs"), std::string::npos) << compile_error(g, co);

  ir::Graph mid = one_op_graph(K::LayerNorm, {f32({2, 5000})});
  GpuRunOptions min;
  min.target = "vulkan-min";
  GpuRun r2 = run_on_gpu(mid, random_inputs(mid, 6), min);
  EXPECT_TRUE(outputs_match(r2, min));
  EXPECT_EQ(strategies(r2), std::vector<std::string>{"streamed"});
  GpuRun r3 = run_on_gpu(mid, random_inputs(mid, 6), {});
  EXPECT_TRUE(outputs_match(r3, {}));
  EXPECT_EQ(strategies(r3), std::vector<std::string>{"cached"});
}

TEST(NormalizationKernelTest, ResidualAddFusesIntoTheLoad) {
  ir::Graph g;
  ir::Value* a = g.add_input("x0", f32({6, 384}));
  ir::Value* b = g.add_input("x1", f32({6, 384}));
  ir::Value* scale = g.add_input("x2", f32({384}));
  ir::Value* bias = g.add_input("x3", f32({384}));
  ir::Op* sum = g.add_op(K::Add, {a, b}, {}, "residual");
  ir::Op* ln = g.add_op(K::LayerNorm, {sum->result(), scale, bias}, {}, "ln");
  ir::Op* act = g.add_op(K::Relu, {ln->result()}, {}, "act");
  g.add_output(act->result(), "y");
  for (const char* s : kNormStrategies) {
    SCOPED_TRACE(s);
    GpuRunOptions o;
    o.forced_strategy["layer_norm"] = s;
    GpuRun run = run_on_gpu(g, random_inputs(g, 9), o);
    EXPECT_TRUE(outputs_match(run, o));
    if (split_testing()) continue;  // cut into pieces: several dispatches (the numbers still checked)
    EXPECT_EQ(strategies(run), std::vector<std::string>{s}) << "the add and the relu fuse: one dispatch";
  }
}

TEST(NormalizationKernelTest, RowSumsThroughSubgroupsAndThroughTheTree) {
  // The workgroup strategies sum a row within each subgroup where the target has subgroup
  // arithmetic (lavapipe: subgroups of 8), else through a tree in workgroup memory (vulkan-min,
  // run on the same device): both against the reference, on rows that leave some invocations
  // idle (300 over 256) and that give each several elements (768), layer and group norms.
  ir::Graph ln = one_op_graph(K::LayerNorm, {f32({3, 300}), f32({300}), f32({300})});
  ir::Graph wide = one_op_graph(K::LayerNorm, {f32({5, 768}), f32({768}), f32({768})});
  ir::Graph gn = one_op_graph(K::GroupNorm, {f32({2, 32, 9, 9}), f32({32}), f32({32})},
                              {{"num_groups", int64_t(8)}, {"epsilon", 1e-3}});
  for (const char* target : {"lavapipe", "vulkan-min"}) {
    const bool subgroups = find_target(target).limits.subgroup_arithmetic;
    for (const char* s : {"cached", "streamed"}) {
      SCOPED_TRACE(std::string(target) + " " + s);
      for (const ir::Graph* g : {&ln, &wide, &gn}) {
        const std::string op = g == &gn ? "group_norm" : "layer_norm";
        expect_gpu_matches(*g, 64, op, s, target);
        const std::string glsl = emitted_glsl(*g, find_target(target).limits, {{op, s}});
        EXPECT_EQ(glsl.find("subgroupAdd") != std::string::npos, subgroups) << glsl;
      }
    }
  }
}

TEST(NormalizationKernelTest, HalfPrecisionLayerNorm) {
  ir::Graph g = one_op_graph(K::LayerNorm, {{DType::f16, {4, 300}}, {DType::f16, {300}}, {DType::f16, {300}}});
  for (const char* s : kNormStrategies) expect_gpu_matches(g, 62, "layer_norm", s, "", 2e-3);
}

struct GroupNormCase {
  Shape shape;
  int64_t groups;
};

class GroupNormKernelTest : public ::testing::TestWithParam<GroupNormCase> {};

TEST_P(GroupNormKernelTest, EveryStrategyMatchesReference) {
  const GroupNormCase& c = GetParam();
  ir::Graph g = one_op_graph(K::GroupNorm, {f32(c.shape), f32({c.shape[1]}), f32({c.shape[1]})},
                             {{"num_groups", c.groups}, {"epsilon", 1e-3}});
  for (const char* s : kNormStrategies) expect_gpu_matches(g, 63, "group_norm", s);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GroupNormKernelTest,
                         ::testing::Values(GroupNormCase{{2, 6, 7, 5}, 3}, GroupNormCase{{2, 6, 7, 5}, 6},
                                           GroupNormCase{{1, 8, 33}, 1}, GroupNormCase{{3, 4}, 2},
                                           GroupNormCase{{2, 32, 9, 9}, 8}));

class ReduceMoreKernelTest : public ::testing::TestWithParam<std::tuple<DType, Shape, Ints, bool>> {};

TEST_P(ReduceMoreKernelTest, EveryKindAndStrategyMatchesReference) {
  auto [dtype, shape, axes, keepdims] = GetParam();
  std::vector<std::pair<K, const char*>> kinds{{K::ReduceProd, "reduce_prod"}, {K::ReduceL1, "reduce_l1"}};
  if (is_float(dtype)) {
    kinds.push_back({K::ReduceL2, "reduce_l2"});
    kinds.push_back({K::ReduceLogSumExp, "reduce_log_sum_exp"});
  }
  for (auto [kind, name] : kinds) {
    ir::AttrMap attrs{{"keepdims", keepdims}};
    if (!axes.empty()) attrs["axes"] = axes;
    ir::Graph g = one_op_graph(kind, {{dtype, shape}}, attrs);
    SCOPED_TRACE(name);
    std::map<std::string, HostTensor> in = random_inputs(g, 71);
    if (kind == K::ReduceProd && is_float(dtype)) {  // values near +-1 keep long products in range
      HostTensor& x = in.at("x0");
      for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, (x.get_f64(i) < 0 ? -1 : 1) * (0.9 + 0.2 * std::fabs(x.get_f64(i))));
    }
    for (const char* s : kReduceStrategies) expect_gpu_matches(g, in, name, s, "", dtype == DType::f16 ? 2e-3 : 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Axes, ReduceMoreKernelTest,
    ::testing::Values(std::tuple{DType::f32, Shape{4, 37, 9}, Ints{1}, true},
                      std::tuple{DType::f32, Shape{4, 37, 9}, Ints{0, 2}, false},
                      std::tuple{DType::f32, Shape{3, 5, 4}, Ints{}, false},
                      std::tuple{DType::f32, Shape{3, 1000}, Ints{-1}, true},
                      std::tuple{DType::i32, Shape{5, 300}, Ints{1}, false},
                      std::tuple{DType::i64, Shape{6, 7}, Ints{0}, true},
                      std::tuple{DType::f16, Shape{4, 300}, Ints{1}, true}));

TEST(NormalizationKernelTest, LogSumExpOfLargeAndInfiniteValues) {
  ir::Graph g = one_op_graph(K::ReduceLogSumExp, {f32({4, 500})}, {{"axes", Ints{1}}});
  std::map<std::string, HostTensor> in = random_inputs(g, 8);
  HostTensor& x = in.at("x0");
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, x.get_f64(i) * 100 + 1000);
  for (int64_t i = 500; i < 1000; ++i) x.set_f64(i, -INFINITY);  // row 1: all -inf
  x.set_f64(1200, INFINITY);                                      // row 2: +inf
  x.set_f64(1700, std::nan(""));                                  // row 3: NaN
  for (const char* s : kReduceStrategies) expect_gpu_matches(g, in, "reduce_log_sum_exp", s);
}

struct CumSumCase {
  DType dtype;
  Shape shape;
  int64_t axis;
};

class CumSumKernelTest : public ::testing::TestWithParam<CumSumCase> {};

TEST_P(CumSumKernelTest, EveryFormMatchesReference) {
  const CumSumCase& c = GetParam();
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      ir::Graph g = one_op_graph(K::CumSum, {{c.dtype, c.shape}},
                                 {{"axis", c.axis}, {"exclusive", exclusive}, {"reverse", reverse}});
      SCOPED_TRACE(cat("exclusive ", exclusive, " reverse ", reverse));
      for (const char* s : {"line", "scan"})
        expect_gpu_matches(g, 81, "cumsum", s, "", c.dtype == DType::f16 ? 2e-3 : 1e-5);
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, CumSumKernelTest,
                         ::testing::Values(CumSumCase{DType::f32, {5}, 0}, CumSumCase{DType::f32, {3, 7, 4}, 1},
                                           CumSumCase{DType::f32, {3, 7, 4}, -1}, CumSumCase{DType::f32, {2, 3000}, 1}, CumSumCase{DType::f32, {1, 1000, 3}, 1},
                                           CumSumCase{DType::i32, {6, 9}, 0}, CumSumCase{DType::i64, {4, 5}, 1},
                                           CumSumCase{DType::f16, {3, 40}, 1}));

TEST(NormalizationKernelTest, FitsEveryProfile) {
  ir::Graph ln = one_op_graph(K::LayerNorm, {f32({8, 4096}), f32({4096}), f32({4096})});
  ir::Graph gn = one_op_graph(K::GroupNorm, {f32({2, 32, 16, 16}), f32({32}), f32({32})}, {{"num_groups", int64_t(8)}});
  ir::Graph lse = one_op_graph(K::ReduceLogSumExp, {f32({8, 4096})}, {{"axes", Ints{1}}});
  ir::Graph cs = one_op_graph(K::CumSum, {f32({8, 4096})}, {{"axis", int64_t(1)}});
  for (const char* s : {"loop", "streamed"}) {
    expect_compiles_everywhere(ln, "layer_norm", s);
    expect_compiles_everywhere(gn, "group_norm", s);
  }
  expect_compiles_everywhere(ln);
  expect_compiles_everywhere(gn);
  expect_compiles_everywhere(lse);
  expect_compiles_everywhere(cs);
}

}  // namespace
}  // namespace vkc::test
