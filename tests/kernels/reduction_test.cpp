// reduce_* / argmax / argmin / softmax / log_softmax kernels against the reference, with both
// strategies (per-row loop, workgroup tree), float and integer inputs, and compile-only checks on
// every profile.
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;
const char* const kStrategies[] = {"loop", "workgroup"};

struct ReduceCase {
  DType dtype;
  Shape shape;
  Ints axes;  // empty: all
  bool keepdims;
};

class ReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceTest, EveryKindAndStrategyMatchesReference) {
  const ReduceCase& c = GetParam();
  const std::pair<K, const char*> kinds[] = {
      {K::ReduceSum, "reduce_sum"}, {K::ReduceMean, "reduce_mean"}, {K::ReduceMax, "reduce_max"}, {K::ReduceMin, "reduce_min"}};
  for (auto [kind, name] : kinds) {
    ir::AttrMap attrs{{"keepdims", c.keepdims}};
    if (!c.axes.empty()) attrs["axes"] = c.axes;
    ir::Graph g = one_op_graph(kind, {{c.dtype, c.shape}}, attrs);
    SCOPED_TRACE(name);
    for (const char* s : kStrategies) expect_gpu_matches(g, 31, name, s);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ReduceAxes, ReduceTest,
    ::testing::Values(ReduceCase{DType::f32, {4, 37, 9}, {1}, true},
                      ReduceCase{DType::f32, {4, 37, 9}, {0, 2}, false},
                      ReduceCase{DType::f32, {4, 37, 9}, {}, false},
                      ReduceCase{DType::f32, {3, 1000}, {-1}, true},
                      ReduceCase{DType::f32, {6, 1, 5, 4}, {1, 3}, true},
                      ReduceCase{DType::i32, {5, 300}, {1}, false},
                      ReduceCase{DType::i32, {6, 7, 8}, {0, 2}, true},
                      ReduceCase{DType::i64, {5, 70}, {0}, false},
                      ReduceCase{DType::i8, {9, 40}, {1}, false},
                      ReduceCase{DType::u8, {9, 40}, {0}, false},
                      ReduceCase{DType::f16, {4, 300}, {1}, true}));

struct ArgCase {
  DType dtype;
  Shape shape;
  int64_t axis;
};

class ReduceArgTest : public ::testing::TestWithParam<ArgCase> {};

TEST_P(ReduceArgTest, ArgMaxAndArgMinWithTies) {
  const ArgCase& c = GetParam();
  for (auto [kind, name] : {std::pair{K::ArgMax, "argmax"}, std::pair{K::ArgMin, "argmin"}})
    for (bool last : {false, true})
      for (bool keepdims : {false, true}) {
        ir::Graph g = one_op_graph(kind, {{c.dtype, c.shape}},
                                   {{"axis", c.axis}, {"keepdims", keepdims}, {"select_last_index", last}});
        SCOPED_TRACE(std::string(name) + (last ? " last" : " first"));
        for (const char* s : kStrategies) expect_gpu_matches(g, 41, name, s);
      }
}

// Integers in [-8, 8] make ties certain, so first/last index selection is exercised.
INSTANTIATE_TEST_SUITE_P(ReduceArgAxes, ReduceArgTest,
                         ::testing::Values(ArgCase{DType::i32, {6, 50}, 1}, ArgCase{DType::i32, {40, 3, 5}, 0},
                                           ArgCase{DType::f32, {3, 700}, -1}, ArgCase{DType::f32, {4, 9, 6}, 1},
                                           ArgCase{DType::i64, {7, 33}, 1}));

TEST(ReduceKernelTest, ArgMaxWithNaNs) {
  ir::Graph g = one_op_graph(K::ArgMax, {f32({4, 300})}, {{"axis", int64_t(1)}});
  std::map<std::string, HostTensor> in = random_inputs(g, 3);
  HostTensor& x = in.at("x0");
  for (int64_t i : {int64_t(5), int64_t(17), int64_t(300 + 299), int64_t(900), int64_t(1000)})
    x.set_f64(i, std::nan(""));
  for (const char* s : kStrategies) expect_gpu_matches(g, in, "argmax", s);
}

class ReduceSoftmaxTest : public ::testing::TestWithParam<std::pair<Shape, int64_t>> {};

TEST_P(ReduceSoftmaxTest, SoftmaxAndLogSoftmax) {
  auto [shape, axis] = GetParam();
  for (auto [kind, name] : {std::pair{K::Softmax, "softmax"}, std::pair{K::LogSoftmax, "log_softmax"}}) {
    ir::Graph g = one_op_graph(kind, {f32(shape)}, {{"axis", axis}});
    SCOPED_TRACE(name);
    for (const char* s : kStrategies) expect_gpu_matches(g, 51, name, s);
  }
}

INSTANTIATE_TEST_SUITE_P(ReduceSoftmaxAxes, ReduceSoftmaxTest,
                         ::testing::Values(std::pair{Shape{5, 10}, int64_t(-1)}, std::pair{Shape{2, 300, 3}, int64_t(1)},
                                           std::pair{Shape{3, 1200}, int64_t(1)}, std::pair{Shape{7, 4, 6}, int64_t(0)}));

TEST(ReduceKernelTest, SoftmaxOfLargeValuesIsStable) {
  ir::Graph g = one_op_graph(K::Softmax, {f32({2, 500})}, {{"axis", int64_t(1)}});
  std::map<std::string, HostTensor> in = random_inputs(g, 6);
  HostTensor& x = in.at("x0");
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, x.get_f64(i) * 100 + 1000);
  for (const char* s : kStrategies) expect_gpu_matches(g, in, "softmax", s);
}

TEST(ReduceKernelTest, FitsEveryProfileAndRunsOnTheMinimum) {
  ir::Graph sum = one_op_graph(K::ReduceSum, {f32({8, 4096})}, {{"axes", Ints{1}}});
  ir::Graph arg = one_op_graph(K::ArgMin, {f32({8, 4096})}, {{"axis", int64_t(1)}});
  ir::Graph soft = one_op_graph(K::LogSoftmax, {f32({8, 4096})}, {{"axis", int64_t(1)}});
  for (const char* s : kStrategies) {
    expect_compiles_everywhere(sum, "reduce_sum", s);
    expect_compiles_everywhere(arg, "argmin", s);
    expect_compiles_everywhere(soft, "log_softmax", s);
    expect_gpu_matches(sum, 1, "reduce_sum", s, "vulkan-min");
    expect_gpu_matches(arg, 1, "argmin", s, "vulkan-min");
    expect_gpu_matches(soft, 1, "log_softmax", s, "vulkan-min");
  }
}

}  // namespace
}  // namespace vkc::test
