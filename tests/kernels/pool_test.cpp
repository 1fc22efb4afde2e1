// max_pool / avg_pool kernels against the reference: layouts, strides, pads, dilations,
// ceil_mode, count_include_pad and global pooling, each with the planner's choice and with both
// strategies forced; compile-only checks on every profile.
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

struct PoolCase {
  Shape input;
  ir::AttrMap attrs;
};

class PoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolTest, MaxAndAvgMatchReference) {
  const PoolCase& c = GetParam();
  for (K kind : {K::MaxPool, K::AvgPool}) {
    for (bool include_pad : {false, true}) {
      if (kind == K::MaxPool && include_pad) continue;
      ir::AttrMap attrs = c.attrs;
      if (kind == K::AvgPool) attrs["count_include_pad"] = include_pad;
      ir::Graph g = one_op_graph(kind, {f32(c.input)}, attrs);
      SCOPED_TRACE(kind == K::MaxPool ? "max_pool" : include_pad ? "avg_pool incl. pad" : "avg_pool");
      const char* name = kind == K::MaxPool ? "max_pool" : "avg_pool";
      for (const char* strategy : {"", "direct", "workgroup"}) expect_gpu_matches(g, 21, name, strategy);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    PoolWindows, PoolTest,
    ::testing::Values(
        PoolCase{{2, 3, 9, 10}, {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
        PoolCase{{2, 3, 9, 10},
                 {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 3}}, {"pads", Ints{1, 0, 2, 1}}, {"ceil_mode", true}}},
        PoolCase{{2, 9, 10, 5},
                 {{"kernel", Ints{2, 3}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 0, 1}}, {"layout", std::string("NHWC")}}},
        PoolCase{{3, 17, 4}, {{"kernel", Ints{4}}, {"strides", Ints{3}}, {"dilations", Ints{2}},
                              {"pads", Ints{2, 3}}, {"ceil_mode", true}, {"layout", std::string("NWC")}}},
        PoolCase{{1, 2, 7, 8, 9}, {{"kernel", Ints{2, 3, 2}}, {"strides", Ints{2, 2, 3}},
                                   {"dilations", Ints{2, 1, 2}}, {"pads", Ints{1, 0, 1, 1, 2, 1}}}},
        PoolCase{{2, 5, 6, 7}, {{"global", true}}},
        PoolCase{{2, 6, 7, 5}, {{"global", true}, {"layout", std::string("NHWC")}}},
        // Windows of 64 positions and more: the planner picks "workgroup" where the window is
        // the input's fastest dim (partial trees of 64..256 invocations, a partial last stride).
        PoolCase{{2, 3, 19, 23}, {{"global", true}}},
        PoolCase{{1, 2, 5, 6, 7}, {{"global", true}}},
        PoolCase{{2, 3, 20, 21}, {{"kernel", Ints{9, 10}}, {"strides", Ints{4, 3}}, {"pads", Ints{2, 1, 3, 0}},
                                  {"ceil_mode", true}}}));

TEST(PoolKernelTest, PlannerPicksWorkgroupForLargeInnermostWindows) {
  auto strategy_of = [](const Shape& input, const std::string& layout) {
    ir::Graph g = one_op_graph(K::AvgPool, {f32(input)}, {{"global", true}, {"layout", layout}});
    codegen::CompileOptions co;
    co.target = find_target("lavapipe").limits;
    return codegen::compile_graph(g, co).manifest.dispatches.at(0).strategy;
  };
  EXPECT_EQ(strategy_of({2, 16, 28, 28}, "NCHW"), "workgroup");
  EXPECT_EQ(strategy_of({2, 28, 28, 16}, "NHWC"), "direct");  // adjacent channels: coalesced
  EXPECT_EQ(strategy_of({2, 16, 7, 7}, "NCHW"), "direct");  // 49 positions: the loop is cheaper
}

// A NaN anywhere in a window makes its max NaN, whichever invocation of the workgroup read it.
TEST(PoolKernelTest, MaxPropagatesNaNInBothStrategies) {
  ir::Graph g = one_op_graph(K::MaxPool, {f32({1, 2, 10, 10})}, {{"global", true}});
  std::map<std::string, HostTensor> in = random_inputs(g, 5);
  HostTensor& x = in.begin()->second;
  x.set_f64(137, NAN);  // channel 1, position 37
  for (const char* strategy : {"direct", "workgroup"}) {
    expect_gpu_matches(g, in, "max_pool", strategy);
  }
}

TEST(PoolKernelTest, HalfPrecision) {
  ir::Graph g = one_op_graph(K::AvgPool, {{DType::f16, {1, 4, 8, 8}}},
                             {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  expect_gpu_matches(g, 2, "avg_pool", "", "", 2e-3);
}

TEST(PoolKernelTest, FitsEveryProfileAndRunsOnTheMinimum) {
  ir::Graph g = one_op_graph(K::MaxPool, {f32({2, 8, 32, 32})},
                             {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  expect_compiles_everywhere(g);
  expect_gpu_matches(g, 7, "max_pool", "direct", "vulkan-min");
  ir::Graph global = one_op_graph(K::AvgPool, {f32({2, 8, 32, 32})}, {{"global", true}});
  expect_compiles_everywhere(global, "avg_pool", "workgroup");
  expect_gpu_matches(global, 7, "avg_pool", "workgroup", "vulkan-min");
}

}  // namespace
}  // namespace vkc::test
