// The GEMM planner is shared: conv gets the tiles matmul has, among them NVIDIA's 256x128 tiles
// with 16x8 register blocks and two workgroup-memory stages. Planned for this device as if NVIDIA
// made it (lavapipe's 32 KiB take the 24 KiB 256x128x8 tile), the implicit GEMM, im2col and
// split-K convs match the reference: edge tiles in M, N and K, groups, a filter whose B stages
// K-fast (OIHW) and one that stages N-fast (HWIO), conv_transpose.
#include <gtest/gtest.h>

#include "kernels/conv_test_support.h"

namespace vkc::test {
namespace {

using ir::OpKind;

struct TileCase {
  std::string name;
  OpKind kind;
  Shape input, filter;
  ir::AttrMap attrs;
};

TEST(ConvGemmTiles, TwoStageNvidiaTilesMatchTheReference) {
  const ir::AttrMap same{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  // M = 2 x 15 x 16 = 480 (two 256-row tiles, the second partial), N = 120 of 128, K = 63 of 64.
  const std::vector<TileCase> cases{
      {"OIHW", OpKind::Conv, {2, 7, 15, 16}, {120, 7, 3, 3}, same},
      {"groups 2", OpKind::Conv, {2, 14, 15, 16}, {240, 7, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", int64_t(2)}}},
      {"NHWC x HWIO", OpKind::Conv, {2, 15, 16, 7}, {3, 3, 7, 120},
       {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"input_layout", std::string("NHWC")},
        {"filter_layout", std::string("HWIO")}, {"output_layout", std::string("NHWC")}}},
      {"conv_transpose", OpKind::ConvTranspose, {2, 7, 15, 16}, {7, 120, 3, 3}, same},
  };
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) {
    t.vendor = Vendor::nvidia;
    t.compute_units = 0;  // the first efficient tile, whatever the grid
  };
  int seed = 70;
  for (const TileCase& c : cases)
    for (const char* strategy : {"implicit_gemm", "im2col", "split_k:3"}) {
      SCOPED_TRACE(c.name + " " + strategy);
      ir::Graph g = conv_graph(c.kind, c.input, c.filter, true, c.attrs);
      o.forced_strategy = {{"conv", strategy}, {"conv_transpose", strategy}};
      GpuRun run = run_on_gpu(g, random_inputs(g, ++seed), o);
      EXPECT_TRUE(outputs_match(run, o));
      // The GEMM dispatch (im2col's second, split-K's first).
      const std::vector<DispatchDesc>& d = run.module.manifest.dispatches;
      const DispatchDesc& gemm = std::string(strategy) == "im2col" ? d.back() : d.front();
      EXPECT_EQ(gemm.tiles.at("tile_m"), 256) << gemm.strategy;
      EXPECT_EQ(gemm.tiles.at("thread_m"), 16) << gemm.strategy;
      EXPECT_EQ(gemm.tiles.at("stages"), 2) << gemm.strategy;
    }
}

}  // namespace
}  // namespace vkc::test
