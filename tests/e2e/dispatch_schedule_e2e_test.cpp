// The recording order by level (codegen/dispatch_schedule.h) on a device: two Inception-style
// blocks, whose towers write one concat in place, match the reference interpreter, and the module
// records one barrier per level instead of one per dependent step of each tower.
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/dispatch_schedule.h"
#include "common/gpu_harness.h"
#include "ir/text_format.h"
#include "runtime/barrier_plan.h"

namespace vkc::test {
namespace {

// Each block: a 1x1 tower, 1x1 -> 3x3, 1x1 -> 3x3 -> 3x3, and 3x3 max pool -> 1x1, concatenated
// along channels (batch 1: written in place), then a 1x1 conv that reads all of it.
ir::Graph inception_blocks() {
  std::string text = "graph @towers(%x: tensor<1x8x12x12xf32>";
  for (int b = 0; b < 2; ++b) {
    std::string p = "%b" + std::to_string(b);
    text += ", " + p + "w1: tensor<4x8x1x1xf32>, " + p + "w2a: tensor<4x8x1x1xf32>, " + p +
            "w2b: tensor<6x4x3x3xf32>, " + p + "w3a: tensor<2x8x1x1xf32>, " + p + "w3b: tensor<3x2x3x3xf32>, " +
            p + "w3c: tensor<4x3x3x3xf32>, " + p + "w4: tensor<2x8x1x1xf32>, " + p + "wn: tensor<8x16x1x1xf32>";
  }
  text += ") {\n";
  std::string in = "%x";
  for (int b = 0; b < 2; ++b) {
    std::string p = "%b" + std::to_string(b), t = "tensor<1x";
    text += "  " + p + "t1 = conv (" + in + ", " + p + "w1) : tensor<1x4x12x12xf32>\n" +
            "  " + p + "r1 = relu (" + p + "t1) : tensor<1x4x12x12xf32>\n" +
            "  " + p + "t2a = conv (" + in + ", " + p + "w2a) : tensor<1x4x12x12xf32>\n" +
            "  " + p + "r2a = relu (" + p + "t2a) : tensor<1x4x12x12xf32>\n" +
            "  " + p + "t2 = conv (" + p + "r2a, " + p + "w2b) {pads = [1, 1, 1, 1]} : tensor<1x6x12x12xf32>\n" +
            "  " + p + "t3a = conv (" + in + ", " + p + "w3a) : tensor<1x2x12x12xf32>\n" +
            "  " + p + "t3b = conv (" + p + "t3a, " + p + "w3b) {pads = [1, 1, 1, 1]} : tensor<1x3x12x12xf32>\n" +
            "  " + p + "t3 = conv (" + p + "t3b, " + p + "w3c) {pads = [1, 1, 1, 1]} : tensor<1x4x12x12xf32>\n" +
            "  " + p + "p4 = max_pool (" + in + ") {kernel = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1]} : "
            "tensor<1x8x12x12xf32>\n" +
            "  " + p + "t4 = conv (" + p + "p4, " + p + "w4) : tensor<1x2x12x12xf32>\n" +
            "  " + p + "cat = concat (" + p + "r1, " + p + "t2, " + p + "t3, " + p + "t4) {axis = 1} : "
            "tensor<1x16x12x12xf32>\n" +
            "  " + p + "next = conv (" + p + "cat, " + p + "wn) : tensor<1x8x12x12xf32>\n";
    in = p + "next";
  }
  text += "  return " + in + " as \"y\", %b0cat as \"first_concat\"\n}\n";
  return ir::parse_graph(text, "towers");
}

TEST(DispatchScheduleE2E, InceptionBlocksRecordOneBarrierPerLevelAndMatch) {
  ir::Graph g = inception_blocks();
  GpuRun run = run_on_gpu(g, random_inputs(g, 17));
  EXPECT_TRUE(outputs_match(run, GpuRunOptions{{}, 1e-4, 1e-5, "", {}}));
  if (split_testing()) return;  // pieces add copies and concats: the counts below do not hold
  const Manifest& m = run.module.manifest;
  // Per block: level 0 = the four towers' first steps, 1 = second steps, 2 = the third, 3 = the
  // 1x1 over the concat. In graph order each second and third step waited for the one before it.
  const std::vector<int> level = codegen::dispatch_levels(m);
  EXPECT_TRUE(std::is_sorted(level.begin(), level.end())) << "dispatches are recorded by level";
  EXPECT_EQ(level.back(), 7);
  const std::vector<bool> barriers = rt::plan_barriers(m);
  EXPECT_EQ(std::count(barriers.begin(), barriers.end(), true), 7) << "one barrier per level after the first";
  for (size_t k = 0; k < m.dispatches.size(); ++k)
    EXPECT_EQ(m.dispatches[k].name.rfind("d" + std::to_string(k) + "_", 0), 0u) << m.dispatches[k].name;
}

}  // namespace
}  // namespace vkc::test
