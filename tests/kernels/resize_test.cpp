// resize kernel against the reference on random inputs: 1-D, 2-D and 3-D spatial resizes, every
// interpolation and coordinate mode, up- and downsampling, integer dtypes (nearest copies words),
// f16, the nearest-index table fallback, and a compile check on every profile.
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;
using Floats = std::vector<double>;

struct ResizeCase {
  Shape input;
  Ints sizes;
  Floats scales;  // empty: out / in
  std::string coords;
};

std::string case_name(const ResizeCase& c) {
  return shape_str(c.input) + " -> " + shape_str(c.sizes) + " " + c.coords +
         (c.scales.empty() ? "" : " (scales given)");
}

void PrintTo(const ResizeCase& c, std::ostream* os) { *os << case_name(c); }

class ResizeTest : public ::testing::TestWithParam<ResizeCase> {};

// Linear and cubic compute coordinates and sums in f32 on the device: a relative tolerance of
// 1e-5 covers that for these extents.
TEST_P(ResizeTest, EveryModeMatchesReference) {
  const ResizeCase& c = GetParam();
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    std::vector<std::string> roundings{"round_prefer_floor"};
    if (std::string(mode) == "nearest") roundings = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    for (const std::string& rounding : roundings) {
      for (bool exclude : {false, true}) {
        if (exclude && std::string(mode) != "cubic") continue;
        ir::AttrMap a{{"sizes", c.sizes}, {"mode", std::string(mode)}, {"coordinate_mode", c.coords},
                      {"nearest_mode", rounding}, {"exclude_outside", exclude}};
        if (!c.scales.empty()) a["scales"] = c.scales;
        if (c.coords == "tf_crop_and_resize") {
          Floats roi;
          for (size_t d = 0; d < c.input.size(); ++d) roi.push_back(d < 2 ? 0.0 : -0.2);
          for (size_t d = 0; d < c.input.size(); ++d) roi.push_back(d < 2 ? 1.0 : 0.9);
          a["roi"] = roi;
          a["extrapolation_value"] = 7.5;
        }
        SCOPED_TRACE(case_name(c) + " " + mode + " " + rounding + (exclude ? " exclude_outside" : ""));
        ir::Graph g = one_op_graph(K::Resize, {f32(c.input)}, a);
        expect_gpu_matches(g, 31, "resize", std::string(mode) == "nearest" ? "gather" : "interpolate",
                           "", 1e-5);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ResizeTest,
    ::testing::Values(
        ResizeCase{{2, 3, 9}, {2, 3, 20}, {}, "half_pixel"},                      // 1-D up
        ResizeCase{{2, 3, 17}, {2, 3, 6}, {}, "align_corners"},                   // 1-D down
        ResizeCase{{1, 2, 5, 7}, {1, 2, 11, 16}, {}, "half_pixel"},               // 2-D up
        ResizeCase{{1, 2, 9, 8}, {1, 2, 5, 3}, {1, 1, 0.6, 0.45}, "half_pixel"},  // 2-D down, scales
        ResizeCase{{1, 1, 6, 5}, {1, 1, 13, 9}, {}, "pytorch_half_pixel"},
        ResizeCase{{1, 2, 4, 6}, {1, 2, 10, 4}, {}, "asymmetric"},
        ResizeCase{{1, 2, 4, 6}, {1, 2, 7, 9}, {}, "tf_half_pixel_for_nn"},
        ResizeCase{{1, 2, 5, 6}, {1, 2, 7, 3}, {1, 1, 1.5, 0.6}, "half_pixel_symmetric"},
        ResizeCase{{1, 2, 5, 6}, {1, 2, 8, 7}, {}, "tf_crop_and_resize"},
        ResizeCase{{1, 2, 3, 4, 5}, {1, 2, 6, 3, 9}, {}, "half_pixel"},           // 3-D
        ResizeCase{{2, 1, 4, 3, 3}, {2, 1, 2, 7, 5}, {}, "align_corners"}),
    [](const ::testing::TestParamInfo<ResizeCase>& info) { return "case" + std::to_string(info.index); });

TEST(ResizeKernelTest, NearestCopiesIntegerWordsExactly) {
  for (DType t : {DType::i64, DType::i32, DType::u8}) {
    ir::Graph g = one_op_graph(K::Resize, {{t, {2, 3, 5}}},
                               {{"sizes", Ints{2, 7, 8}}, {"coordinate_mode", std::string("asymmetric")}});
    GpuRun run = run_on_gpu(g, random_inputs(g, 5));
    EXPECT_TRUE(same_bytes(run.outputs.at("y"), run.reference.at("y"))) << dtype_name(t);
  }
}

TEST(ResizeKernelTest, NearestTieUsesTheReferenceIndexTable) {
  // 2 -> 7 half_pixel has the exact tie 0.5 at output 3 (see the interpreter test); the f32 form
  // x * (1/3.5) + (0.5/3.5 - 0.5) lands just above it, so the kernel must read an index table.
  ir::Graph g = one_op_graph(K::Resize, {f32({3, 2})}, {{"sizes", Ints{3, 7}}});
  GpuRun run = run_on_gpu(g, random_inputs(g, 9));
  EXPECT_TRUE(same_bytes(run.outputs.at("y"), run.reference.at("y")));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u);
  EXPECT_NE(run.module.manifest.dispatches[0].notes.find("table"), std::string::npos)
      << run.module.manifest.dispatches[0].notes;
}

TEST(ResizeKernelTest, HalfPrecisionAndExtrapolationFill) {
  ir::Graph g = one_op_graph(K::Resize, {{DType::f16, {1, 3, 6, 6}}},
                             {{"sizes", Ints{1, 3, 9, 4}}, {"mode", std::string("linear")},
                              {"coordinate_mode", std::string("tf_crop_and_resize")},
                              {"roi", Floats{0, 0, -0.3, 0.2, 1, 1, 1.1, 0.8}},
                              {"extrapolation_value", -3.0}});
  expect_gpu_matches(g, 4, "resize", "interpolate", "", 2e-3);
}

TEST(ResizeKernelTest, FitsEveryProfileAndRunsOnTheMinimum) {
  ir::Graph g = one_op_graph(K::Resize, {f32({1, 4, 32, 32})},
                             {{"sizes", Ints{1, 4, 64, 48}}, {"mode", std::string("cubic")}});
  expect_compiles_everywhere(g);
  expect_gpu_matches(g, 8, "resize", "interpolate", "vulkan-min", 1e-5);
}

}  // namespace
}  // namespace vkc::test
