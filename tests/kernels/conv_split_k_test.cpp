// Split-K convs on lavapipe against the reference: forced S on 1-D, 2-D and 3-D convs, groups,
// strides, layouts, conv_transpose, slices of unequal length, a fused bias + relu + residual add +
// quantize epilogue (which must run once per output, in the reduce dispatch), and the planner's
// own unforced choice on a small-output, deep-K conv.
#include <algorithm>

#include <gtest/gtest.h>

#include "kernels/conv_test_support.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

// Tensors that a dispatch writes.
std::vector<std::string> written(const DispatchDesc& d) {
  std::vector<std::string> w;
  for (const BindingDesc& b : d.bindings)
    if (b.writes) w.push_back(b.tensor);
  return w;
}

// Checks the two dispatches of a split_k run: a GEMM that writes only the partial sums and a
// reduce that reads them and writes everything else (the output and nothing more).
void expect_split_k_dispatches(const ModuleImage& m, uint32_t splits) {
  ASSERT_EQ(m.manifest.dispatches.size(), 2u);
  const DispatchDesc& gemm = m.manifest.dispatches[0];
  const DispatchDesc& reduce = m.manifest.dispatches[1];
  EXPECT_EQ(gemm.kernel, "conv_split_k_gemm");
  EXPECT_EQ(reduce.kernel, "conv_split_k_reduce");
  EXPECT_EQ(gemm.strategy, "split_k");
  EXPECT_EQ(reduce.strategy, "split_k");
  if (splits != 0) {
    EXPECT_EQ(gemm.tiles.at("split_k"), int64_t(splits));
  }
  std::vector<std::string> gw = written(gemm), rw = written(reduce);
  ASSERT_EQ(gw.size(), 1u);
  EXPECT_NE(gw[0].find(".split_k"), std::string::npos) << gw[0];
  ASSERT_EQ(rw.size(), 1u);
  EXPECT_EQ(std::count(m.manifest.outputs.begin(), m.manifest.outputs.end(), rw[0]), 1) << rw[0];
  EXPECT_EQ(reduce.bindings.at(0).tensor, gw[0]);  // the reduce reads the GEMM's partial sums
}

struct SplitCase {
  std::string name;
  OpKind kind = OpKind::Conv;
  Shape input, filter;
  bool bias = false;
  ir::AttrMap attrs;
  uint32_t splits = 0;  // 0: the planner's S for a forced "split_k"
};

// K = Cin/groups x taps; TK is 16 for every tile these shapes get on lavapipe, so the K steps are
// ceil(K / 16) and most cases pick S so that the steps do not divide evenly.
std::vector<SplitCase> cases() {
  return {
      // 1-D, K = 24 x 5 = 120 (8 steps) over 3 slices: 3, 3, 2 steps.
      {"1-D stride 2 bias", OpKind::Conv, {2, 24, 40}, {20, 24, 5}, true,
       {{"strides", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{2, 1}}}, 3},
      // 2-D, K = 32 x 9 = 288 (18 steps) over 4 slices; partial M and N tiles.
      {"2-D pad 1 bias", OpKind::Conv, {1, 32, 9, 11}, {40, 32, 3, 3}, true,
       {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 4},
      // Groups: K = 12 x 9 = 108 per group (7 steps) over 2 slices, 3 groups of 10 channels.
      {"2-D groups 3 stride 2 dilation 2", OpKind::Conv, {2, 36, 13, 12}, {30, 12, 3, 3}, false,
       {{"groups", int64_t(3)}, {"strides", std::vector<int64_t>{2, 2}},
        {"dilations", std::vector<int64_t>{2, 1}}, {"pads", std::vector<int64_t>{2, 1, 0, 1}}}, 2},
      // 3-D, K = 8 x 27 = 216 (14 steps) over 5 slices.
      {"3-D bias", OpKind::Conv, {1, 8, 6, 7, 5}, {12, 8, 3, 3, 3}, true,
       {{"pads", std::vector<int64_t>{1, 1, 1, 1, 1, 1}}}, 5},
      // Channels-last input and output, the filter as HWCF: partial sums follow the NHWC output.
      {"2-D NHWC", OpKind::Conv, {1, 10, 10, 48}, {3, 3, 48, 24}, true,
       {{"input_layout", std::string("NHWC")}, {"filter_layout", std::string("HWCF")},
        {"output_layout", std::string("NHWC")}, {"pads", std::vector<int64_t>{0, 1, 1, 0}}}, 6},
      // conv_transpose: K = 16 x 4 x 4 = 256 per group (16 steps) over the planner's S.
      {"conv_transpose stride 2 groups 2", OpKind::ConvTranspose, {1, 32, 5, 6}, {32, 6, 4, 4}, true,
       {{"groups", int64_t(2)}, {"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
       0},
      // K = 144: as many slices as 16-deep steps.
      {"one step per slice", OpKind::Conv, {1, 16, 8, 8}, {24, 16, 3, 3}, false, {}, 9},
  };
}

TEST(ConvSplitK, ForcedSplitsMatchReference) {
  uint32_t seed = 100;
  for (const SplitCase& c : cases()) {
    SCOPED_TRACE(c.name);
    ir::Graph g = conv_graph(c.kind, c.input, c.filter, c.bias, c.attrs);
    std::string forced = c.splits ? cat("split_k:", c.splits) : "split_k";
    std::vector<std::string> applicable = lavapipe_strategies(g);
    EXPECT_EQ(std::count(applicable.begin(), applicable.end(), "split_k"), 1);
    GpuRun run = run_conv(g, random_inputs(g, seed++), forced);
    EXPECT_TRUE(outputs_match(run));
    expect_split_k_dispatches(run.module, c.splits);
    if (c.splits) {
      int64_t steps = run.module.manifest.dispatches[0].tiles.at("k_steps_per_split");
      int64_t k = run.module.manifest.dispatches[0].tiles.at("gemm_k");
      int64_t tk = run.module.manifest.dispatches[0].tiles.at("tile_k");
      EXPECT_EQ(steps, ((k + tk - 1) / tk + c.splits - 1) / c.splits);
    }
  }
}

// conv -> + bias (a constant) -> relu -> + residual -> quantize to u8. With `per_channel` bias
// and scale are per-channel constants (bound buffers); without, scalars (GLSL literals), which
// keeps the group within vulkan-min's 4 bindings.
ir::Graph conv_relu_residual_quantize(bool per_channel) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {1, 24, 7, 7}});
  ir::Value* w = g.add_input("w", {DType::f32, {20, 24, 3, 3}});
  ir::Value* res = g.add_input("res", {DType::f32, {1, 20, 7, 7}});
  int64_t c = per_channel ? 20 : 1;
  HostTensor bias(DType::f32, per_channel ? Shape{1, 20, 1, 1} : Shape{}), scale(DType::f32, per_channel ? Shape{20} : Shape{});
  for (int64_t i = 0; i < c; ++i) {
    bias.set_f64(i, 0.05 * double(i) - 0.4);
    scale.set_f64(i, 0.3 + 0.01 * double(i));  // coarse steps: f32 vs f64 rounding stays far from .5
  }
  ir::Value* y = g.add_op(OpKind::Conv, {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv")->result();
  y = g.add_op(OpKind::Add, {y, g.add_constant(bias, "bias")}, {}, "bias_add")->result();
  y = g.add_op(OpKind::Relu, {y})->result();
  y = g.add_op(OpKind::Add, {y, res}, {}, "residual")->result();
  g.add_output(g.add_op(OpKind::Quantize, {y, g.add_constant(scale, "scale")}, {{"to", std::string("u8")}})->result(),
               "q");
  return g;
}

// The whole epilogue runs in the reduce dispatch, on the summed partials, once per output: the
// GEMM dispatch binds none of its operands and writes only the partial sums. On vulkan-min (no
// 8-bit storage) the u8 store is a packed read-modify-write of the output words.
TEST(ConvSplitK, FusedEpilogueRunsOnceInTheReduce) {
  for (const char* target : {"", "vulkan-min"}) {
    SCOPED_TRACE(cat("target '", target, "'"));
    ir::Graph g = conv_relu_residual_quantize(std::string(target).empty());
    GpuRunOptions o;
    o.target = target;
    o.forced_strategy["conv"] = "split_k:7";  // K = 216: 14 steps of 16, or 27 of 8 on vulkan-min
    GpuRun run = run_on_gpu(g, random_inputs(g, 41), o);
    EXPECT_TRUE(outputs_match(run, o));
    expect_split_k_dispatches(run.module, 7);
    const DispatchDesc& gemm = run.module.manifest.dispatches[0];
    for (const BindingDesc& b : gemm.bindings) EXPECT_NE(b.tensor, "res");
    EXPECT_NE(run.module.manifest.dispatches[1].notes.find("epilogue"), std::string::npos);
  }
}

// Unforced, planned for this device as if it had 8 compute units (lavapipe's profile; a module
// planned for the lavapipe profile itself would not run on a GPU whose subgroups are 32 wide): a
// 7x7 output with 64 channels and K = 128 x 9 = 1152 is a 49 x 64 GEMM, one or two tiles, so the
// planner splits K.
TEST(ConvSplitK, PlannerSplitsASmallDeepConv) {
  ir::Graph g = conv_graph(OpKind::Conv, {1, 128, 7, 7}, {64, 128, 3, 3}, true,
                           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) { t.compute_units = find_target("lavapipe").limits.compute_units; };
  GpuRun run = run_on_gpu(g, random_inputs(g, 43), o);
  EXPECT_TRUE(outputs_match(run, o));
  expect_split_k_dispatches(run.module, 0);
  const DispatchDesc& gemm = run.module.manifest.dispatches[0];
  EXPECT_GE(gemm.tiles.at("workgroups"), 2 * int64_t(find_target("lavapipe").limits.compute_units));
}

}  // namespace
}  // namespace vkc::test
