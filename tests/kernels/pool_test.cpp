// max_pool / avg_pool kernels against the reference: layouts, strides, pads, dilations,
// ceil_mode, count_include_pad and global pooling; compile-only checks on every profile.
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
      expect_gpu_matches(g, 21, kind == K::MaxPool ? "max_pool" : "avg_pool");
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
        PoolCase{{2, 6, 7, 5}, {{"global", true}, {"layout", std::string("NHWC")}}}));

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
}

}  // namespace
}  // namespace vkc::test
