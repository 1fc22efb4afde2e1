// Named conv regressions: layouts, 3-D, the workgroup-memory budget on every profile, and the
// grouped backward-data conv_transpose.
#include <gtest/gtest.h>

#include "codegen/dispatch_group.h"
#include "codegen/glsl_compiler.h"
#include "codegen/kernel_context.h"
#include "codegen/spirv_tools.h"
#include "codegen/storage_plan.h"
#include "common/resnet_like_graph.h"
#include "kernels/conv_test_support.h"
#include "module/tensor_lookup.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

HostTensor tensor_of(const Shape& shape, const std::vector<double>& values) {
  HostTensor t(DType::f32, shape);
  for (size_t i = 0; i < values.size(); ++i) t.set_f64(int64_t(i), values[i]);
  return t;
}

std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get_f64(i));
  return v;
}

// NWC input [[0,1],[0,0],[0,0]]: only channel 1 at w = 0 is set, so the output at w = 0 is the
// filter's (C=1, W=0) row, [5, 6], and w = 1 sees only zeros.
const std::vector<double> kNwcInput{0, 1, 0, 0, 0, 0};
const std::vector<double> kExpected{5, 6, 0, 0};

TEST(ConvRegression, LayoutNWCFilterCWF) {
  ir::AttrMap attrs{{"input_layout", std::string("NWC")},
                    {"filter_layout", std::string("CWF")},
                    {"output_layout", std::string("NWC")}};
  ir::Graph g = conv_graph(OpKind::Conv, {1, 3, 2}, {2, 2, 2}, false, attrs);
  std::map<std::string, HostTensor> in{{"x", tensor_of({1, 3, 2}, kNwcInput)},
                                       {"w", tensor_of({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}};
  std::vector<std::string> strategies = lavapipe_strategies(g);
  EXPECT_EQ(strategies, (std::vector<std::string>{"direct", "implicit_gemm", "im2col"}));
  for (const std::string& s : strategies) {
    GpuRun run = run_conv(g, in, s);
    EXPECT_TRUE(outputs_match(run)) << s;
    EXPECT_EQ(values_of(run.outputs.at("y")), kExpected) << s;
    EXPECT_EQ(run.module.manifest.dispatches.back().strategy, s);
  }

  // The im2col op on its own: columns in the filter layout's order (C slowest, then W).
  ir::Graph cg;
  ir::Value* x = cg.add_input("x", {DType::f32, {1, 3, 2}});
  cg.add_output(cg.add_op(OpKind::Im2Col, {x},
                          {{"input_layout", std::string("NWC")},
                           {"filter_layout", std::string("CWF")},
                           {"kernel", std::vector<int64_t>{2}}})
                    ->result(),
                "cols");
  GpuRun cols = run_on_gpu(cg, {{"x", in.at("x")}});
  EXPECT_TRUE(outputs_match(cols));
  EXPECT_EQ(cols.outputs.at("cols").shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(values_of(cols.outputs.at("cols")), (std::vector<double>{0, 0, 1, 0, 0, 0, 0, 0}));

  // im2col + matmul: the CWF filter is already the [K, F] matrix in C order.
  ir::Graph mg;
  ir::Value* mx = mg.add_input("x", {DType::f32, {1, 3, 2}});
  ir::Value* mw = mg.add_input("w", {DType::f32, {4, 2}});
  ir::Value* c = mg.add_op(OpKind::Im2Col, {mx},
                           {{"input_layout", std::string("NWC")},
                            {"filter_layout", std::string("CWF")},
                            {"kernel", std::vector<int64_t>{2}}})
                     ->result();
  mg.add_output(mg.add_op(OpKind::MatMul, {c, mw})->result(), "y");
  try {
    GpuRun mm = run_on_gpu(mg, {{"x", in.at("x")}, {"w", tensor_of({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
    EXPECT_TRUE(outputs_match(mm));
    EXPECT_EQ(values_of(mm.outputs.at("y")), kExpected);
  } catch (const Error& e) {
    // The GEMM kernel belongs to the contraction family; until it lands only im2col is checked.
    EXPECT_NE(std::string(e.what()).find("not supported on the GPU yet"), std::string::npos) << e.what();
  }

  // The same numbers as the backward-data conv_transpose this conv came from: the filter is
  // spatially flipped and the pads become kernel - 1 - pad = 1 on each side.
  ir::Graph tg = conv_graph(OpKind::ConvTranspose, {1, 3, 2}, {2, 2, 2}, false,
                            {{"input_layout", std::string("NWC")},
                             {"filter_layout", std::string("CWF")},
                             {"output_layout", std::string("NWC")},
                             {"pads", std::vector<int64_t>{1, 1}}});
  std::map<std::string, HostTensor> tin{{"x", in.at("x")},
                                        {"w", tensor_of({2, 2, 2}, {3, 4, 1, 2, 7, 8, 5, 6})}};
  for (const std::string& s : lavapipe_strategies(tg)) {
    GpuRun run = run_conv(tg, tin, s);
    EXPECT_TRUE(outputs_match(run)) << s;
    EXPECT_EQ(values_of(run.outputs.at("y")), kExpected) << "conv_transpose " << s;
  }
}

// The 3-D benchmark conv: one input channel fanned out to 16 filters of 9x9x1 taps. Cin = 1 with
// groups = 1 is depthwise with multiplier 16, so the planner takes the tiled depthwise kernel.
ir::Graph conv3d_fanout(const Shape& input) {
  return conv_graph(OpKind::Conv, input, {16, 1, 9, 9, 1}, true, {{"pads", std::vector<int64_t>{4, 4, 0, 4, 4, 0}}});
}

// The depthwise benchmark conv (3x3, pad 1, one filter per channel) on `input`.
ir::Graph depthwise3x3(const Shape& input) {
  return conv_graph(OpKind::Conv, input, {input[1], 1, 3, 3}, false,
                    {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"groups", input[1]}});
}

TEST(ConvRegression, ThreeD) {
  ir::Graph g = conv3d_fanout({1, 1, 32, 32, 32});
  EXPECT_EQ(only_conv(g).result()->type.shape, (Shape{1, 16, 32, 32, 32}));
  for (const char* target : {"amd-cdna3", "lavapipe"}) EXPECT_TRUE(compiles_within(g, target));
  GpuRun run = run_on_gpu(g, random_inputs(g, 3));
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.module.manifest.dispatches.back().strategy, "depthwise_tiled");
}

// The two depthwise benchmark shapes at reduced size (same rows, kernels and multiplier; fewer
// images, channels and depth), unforced: the planner must take the tiled kernel, which must match
// the reference; the one-output kernel is checked on the same inputs alongside.
TEST(ConvRegression, DepthwiseTiledBenchShapesReduced) {
  for (const ir::Graph& g : {depthwise3x3({2, 12, 56, 56}), conv3d_fanout({1, 1, 6, 32, 32})}) {
    SCOPED_TRACE(shape_str(only_conv(g).operand(0)->type.shape));
    std::map<std::string, HostTensor> in = random_inputs(g, 21);
    GpuRun run = run_conv(g, in, "");
    EXPECT_TRUE(outputs_match(run));
    EXPECT_EQ(run.module.manifest.dispatches.back().strategy, "depthwise_tiled");
    // The 3x3 conv reads its input directly; the fan-out's 9x9 x 16 taps are staged.
    bool staged = only_conv(g).operand(1)->type.shape[0] == 16;
    EXPECT_EQ(run.module.manifest.dispatches.back().workgroup_memory_bytes > 0, staged);
    GpuRun one = run_conv(g, in, "depthwise");
    EXPECT_TRUE(outputs_match(one));
  }
}

// Both ways the tiled depthwise kernel reads its input, with strides, dilations, a channel
// multiplier (vector taps) and partial strips: direct (3x3 of 4 channels, 36 taps in registers)
// and staged (7x7 of 1 channel).
TEST(ConvRegression, DepthwiseTiledDirectAndStaged) {
  struct Case {
    Shape filter;
    ir::AttrMap attrs;
    bool direct;
  };
  const Case cases[] = {
      {{24, 1, 3, 3},
       {{"groups", int64_t(6)}, {"strides", std::vector<int64_t>{2, 1}}, {"dilations", std::vector<int64_t>{1, 2}},
        {"pads", std::vector<int64_t>{1, 2, 0, 1}}},
       true},
      {{6, 1, 7, 7}, {{"groups", int64_t(6)}, {"strides", std::vector<int64_t>{1, 2}}, {"pads", std::vector<int64_t>{3, 3, 3, 3}}},
       false},
  };
  for (const Case& c : cases) {
    ir::Graph g = conv_graph(OpKind::Conv, {2, 6, 45, 39}, c.filter, true, c.attrs);
    SCOPED_TRACE(shape_str(c.filter));
    GpuRun run = run_conv(g, random_inputs(g, 5), "depthwise_tiled");
    EXPECT_TRUE(outputs_match(run));
    EXPECT_EQ(run.module.manifest.dispatches.back().workgroup_memory_bytes == 0, c.direct);
  }
}

// The channels-last depthwise kernel as the planner takes it (input and output channels
// innermost): 1-D, 2-D and 3-D, strides, dilations, asymmetric pads, a channel multiplier, rows
// of W that leave a partial run, and the fused epilogue of inverted residual blocks (a residual
// add of another channels-last tensor, then hardswish), in fp32 and in the fp16 precision mode.
TEST(ConvRegression, DepthwiseChannelsLastWithEpilogues) {
  struct Case {
    Shape input, filter;  // input physical (N, spatial.., C); filter [F, 1, K..]
    ir::AttrMap attrs;
  };
  const std::vector<Case> cases{
      {{2, 13, 17, 12}, {24, 1, 3, 3},
       {{"groups", int64_t(12)}, {"strides", std::vector<int64_t>{2, 1}}, {"dilations", std::vector<int64_t>{1, 2}},
        {"pads", std::vector<int64_t>{1, 2, 0, 1}}}},
      {{1, 9, 11, 16}, {16, 1, 5, 5}, {{"groups", int64_t(16)}, {"strides", std::vector<int64_t>{2, 2}},
                                       {"pads", std::vector<int64_t>{2, 2, 2, 2}}}},
      {{3, 29, 8}, {8, 1, 3}, {{"groups", int64_t(8)}, {"pads", std::vector<int64_t>{1, 1}}}},
      {{1, 5, 6, 7, 4}, {4, 1, 3, 3, 3}, {{"groups", int64_t(4)}, {"pads", std::vector<int64_t>{1, 1, 1, 1, 1, 1}}}},
  };
  uint32_t seed = 50;
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.input) + " * " + shape_str(c.filter));
    const std::string layout = "N" + ir::spatial_letters(int(c.input.size()) - 2) + "C";
    ir::AttrMap attrs = c.attrs;
    attrs["input_layout"] = layout;
    attrs["output_layout"] = layout;
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, c.input});
    // Constant filter and bias, so that fp16 converts them at compile time (graph inputs would
    // take a cast dispatch each).
    std::mt19937 rng(seed);
    ir::Value* w = resnet_like_constant(g, DType::f32, c.filter, rng, 0.5, "w");
    ir::Value* b = resnet_like_constant(g, DType::f32, {c.filter[0]}, rng, 0.5, "b");
    ir::Value* y = g.add_op(OpKind::Conv, {x, w, b}, attrs, "conv")->result();
    ir::Value* r = g.add_input("r", y->type);
    y = g.add_op(OpKind::Add, {y, r}, {}, "residual")->result();
    g.add_output(g.add_op(OpKind::HardSwish, {y}, {}, "act")->result(), "y");
    const std::map<std::string, HostTensor> in = random_inputs(g, seed++);
    for (Precision precision : {Precision::fp32, Precision::fp16}) {
      GpuRunOptions o;
      o.precision = precision;
      if (precision == Precision::fp16) o.rel_tol = o.abs_tol = 1e-2;
      GpuRun run = run_on_gpu(g, in, o);
      EXPECT_TRUE(outputs_match(run, o));
      // The add and hardswish fuse into the conv (in fp16, the residual input's cast from the
      // graph's f32 takes a dispatch of its own).
      EXPECT_EQ(run.module.manifest.dispatches.size(), precision == Precision::fp32 ? 1u : 2u);
      EXPECT_EQ(run.module.manifest.dispatches.back().strategy, "depthwise_channels_last");
      EXPECT_EQ(run.module.manifest.dispatches.back().ops.size(), precision == Precision::fp32 ? 3u : 5u);
    }
  }
}

// Emits the graph's conv kernels for `target` and measures their SPIR-V, unsplit (a 256 MiB f32
// result exceeds maxStorageBufferRange on 2^27 profiles, where the compiler cuts it in pieces).
void expect_conv_kernels_fit(const ir::Graph& graph, const std::string& target,
                             const std::string& strategy = "implicit_gemm") {
  const TargetLimits& t = find_target(target).limits;
  codegen::StoragePlan storage = codegen::plan_storage(graph);
  for (const codegen::DispatchGroup& group : codegen::form_dispatch_groups(graph)) {
    codegen::KernelContext ctx{t, graph, storage, {}};
    std::vector<codegen::ScratchTensor> scratch;
    for (const codegen::EmittedKernel& k : codegen::find_kernel_emitter(group)(group, ctx, scratch)) {
      std::vector<uint32_t> spv = codegen::optimize_spirv(codegen::compile_glsl(k.glsl, k.kernel, t), t, k.kernel);
      codegen::validate_spirv(spv, t, k.kernel);
      uint32_t measured = codegen::measure_workgroup_memory(spv);
      EXPECT_EQ(measured, k.workgroup_memory_bytes) << target;
      EXPECT_LE(measured, t.max_compute_shared_memory_size) << target << " " << k.strategy;
      EXPECT_LE(k.workgroup_size[0] * k.workgroup_size[1] * k.workgroup_size[2],
                t.max_compute_work_group_invocations) << target;
      EXPECT_EQ(k.strategy, strategy) << target << ": the budget should still allow tiles";
    }
  }
}

TEST(ConvRegression, BudgetAllProfiles) {
  ir::AttrMap attrs{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  ir::Graph big = conv_graph(OpKind::Conv, {1, 64, 512, 512}, {256, 64, 3, 3}, false, attrs);
  for (const std::string& target : known_targets()) {
    expect_conv_kernels_fit(big, target);
    const TargetLimits& t = find_target(target).limits;
    uint64_t result_bytes = uint64_t(only_conv(big).result()->type.size_bytes());
    // Where the 256 MiB result exceeds maxStorageBufferRange, the conv is computed in pieces of
    // output channels that each bind a part of it (codegen/range_split.h, issue #25).
    EXPECT_TRUE(compiles_within(big, target));
    codegen::CompileOptions o;
    o.target = t;
    size_t dispatches = codegen::compile_graph(big, o).manifest.dispatches.size();
    if (result_bytes > t.max_storage_buffer_range) EXPECT_GE(dispatches, 2u) << target;
    else EXPECT_EQ(dispatches, 1u) << target;
  }
  ir::Graph small = conv_graph(OpKind::Conv, {1, 64, 64, 64}, {256, 64, 3, 3}, false, attrs);
  // Budgets only: on a device of 132 compute units this 4096 x 256 GEMM's 64 tiles would split K
  // (the occupancy rule, ConvPlanner.ResNet18Batch1FillsTheNvidiaProfile), on 2 CPU threads not.
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) { t.compute_units = 0; };
  GpuRun run = run_on_gpu(small, random_inputs(small, 5), o);
  EXPECT_TRUE(outputs_match(run, o));
  EXPECT_EQ(run.module.manifest.dispatches.at(0).strategy, "implicit_gemm");
}

// Everything the benchmark shapes do not reach: a multiplier of 24 split into two channel blocks
// of 12 (vec4 taps), stride, dilation and asymmetric pads, partial tiles along H and W, and a
// transposed (NHWC -> NCHW) input and a leaky_relu fused into the kernel's loader and store.
TEST(ConvRegression, DepthwiseTiledChannelBlocksPartialTilesAndFusion) {
  ir::Graph g;
  ir::Value* x_nhwc = g.add_input("x", {DType::f32, {2, 75, 70, 3}});
  ir::Value* w = g.add_input("w", {DType::f32, {72, 1, 3, 5}});
  ir::Value* b = g.add_input("b", {DType::f32, {72}});
  ir::Value* x = g.add_op(OpKind::Transpose, {x_nhwc}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}})->result();
  ir::Value* y = g.add_op(OpKind::Conv, {x, w, b},
                          {{"groups", int64_t(3)},
                           {"strides", std::vector<int64_t>{2, 1}},
                           {"dilations", std::vector<int64_t>{1, 2}},
                           {"pads", std::vector<int64_t>{1, 2, 0, 3}}},
                          "conv")
                   ->result();
  g.add_output(g.add_op(OpKind::LeakyRelu, {y}, {{"alpha", 0.2}})->result(), "y");
  GpuRun run = run_conv(g, random_inputs(g, 31), "");
  EXPECT_TRUE(outputs_match(run));
  ASSERT_EQ(run.module.manifest.dispatches.size(), 1u) << run.module.manifest.dispatches.size();
  const DispatchDesc& d = run.module.manifest.dispatches[0];
  EXPECT_EQ(d.strategy, "depthwise_tiled");
  EXPECT_EQ(d.tiles.at("channel_blocks"), 2);
  EXPECT_EQ(d.tiles.at("channels_per_workgroup"), 12);
  // Output [2, 72, 37, 67]: neither extent is a multiple of its tile.
  EXPECT_NE(37 % d.tiles.at("tile_h"), 0);
  EXPECT_NE(67 % d.tiles.at("tile_w"), 0);
}

// The full-size depthwise benchmark shapes keep the tiled kernel on every profile, vulkan-min's
// 16 KiB and 128 invocations included, and every profile compiles them within its limits.
TEST(ConvRegression, DepthwiseTiledBudgetAllProfiles) {
  for (const ir::Graph& g : {depthwise3x3({8, 144, 56, 56}), conv3d_fanout({1, 1, 32, 32, 32})}) {
    for (const std::string& target : known_targets()) {
      SCOPED_TRACE(cat(target, " ", shape_str(only_conv(g).operand(0)->type.shape)));
      expect_conv_kernels_fit(g, target, "depthwise_tiled");
      EXPECT_TRUE(compiles_within(g, target));
    }
  }
}

TEST(ConvRegression, GroupedBackward) {
  // Forward: x [2,16,9,9], w [32,2,3,3], groups 8, stride 2, pad 1 -> y [2,32,5,5]. Its input
  // gradient is conv_transpose(dy, w) with the same filter read as [C_in=32, F/group=2, 3, 3].
  ir::AttrMap attrs{{"groups", int64_t(8)},
                    {"strides", std::vector<int64_t>{2, 2}},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  ir::Graph fwd = conv_graph(OpKind::Conv, {2, 16, 9, 9}, {32, 2, 3, 3}, false, attrs);
  ir::Graph bwd = conv_graph(OpKind::ConvTranspose, {2, 32, 5, 5}, {32, 2, 3, 3}, false, attrs);
  ASSERT_EQ(only_conv(bwd).result()->type.shape, (Shape{2, 16, 9, 9}));
  std::map<std::string, HostTensor> fin = random_inputs(fwd, 11);
  std::map<std::string, HostTensor> bin = random_inputs(bwd, 12);
  bin["w"] = fin.at("w");
  GpuRun y = run_conv(fwd, fin, "");
  // im2col does not apply: a strided conv_transpose runs phase by phase (codegen/conv_phases.h).
  EXPECT_THROW(run_conv(bwd, bin, "im2col"), Error);
  for (const char* s : {"direct", "implicit_gemm", "split_k"}) {
    GpuRun dx = run_conv(bwd, bin, s);
    EXPECT_TRUE(outputs_match(dx)) << s;
    EXPECT_EQ(dx.module.manifest.dispatches.back().strategy, s);
    // Adjointness: <conv(x), dy> == <x, conv_transpose(dy)>, which pins the backward semantics
    // independently of the reference interpreter.
    double lhs = 0, rhs = 0;
    const HostTensor& yv = y.outputs.at("y");
    for (int64_t i = 0; i < yv.numel(); ++i) lhs += yv.get_f64(i) * bin.at("x").get_f64(i);
    const HostTensor& dxv = dx.outputs.at("y");
    for (int64_t i = 0; i < dxv.numel(); ++i) rhs += dxv.get_f64(i) * fin.at("x").get_f64(i);
    EXPECT_NEAR(lhs, rhs, 1e-3 * (1 + std::abs(lhs))) << s;
  }
}

TEST(ConvRegression, Im2ColOpGroupedAnyLayoutMatchesReference) {
  // The im2col op with groups: result [N, G, P, K/G], columns in filter_layout order (H, C, W).
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {5, 2, 6, 7}});  // layout HNCW: N=2, C=6, H=5, W=7
  g.add_output(g.add_op(OpKind::Im2Col, {x},
                        {{"input_layout", std::string("HNCW")},
                         {"filter_layout", std::string("HCFW")},
                         {"kernel", std::vector<int64_t>{3, 2}},
                         {"groups", int64_t(3)},
                         {"strides", std::vector<int64_t>{2, 1}},
                         {"dilations", std::vector<int64_t>{1, 2}},
                         {"pads", std::vector<int64_t>{1, 0, 2, 1}}})
                   ->result(),
               "cols");
  GpuRun run = run_on_gpu(g, random_inputs(g, 9));
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.outputs.at("cols").shape().size(), 4u);
}

TEST(ConvRegression, ForcedStrategyThatDoesNotApplyThrows) {
  ir::Graph g = conv_graph(OpKind::Conv, {1, 4, 5, 5}, {4, 4, 3, 3}, false, {});
  codegen::CompileOptions o;
  o.target = find_target("lavapipe").limits;
  o.forced_strategy["conv"] = "depthwise";
  try {
    codegen::compile_graph(g, o);
    ADD_FAILURE() << "depthwise must not apply to a dense conv";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("strategy 'depthwise' does not apply"), std::string::npos)
        << e.what();
  }
}

TEST(ConvRegression, TensorsBeyond32BitIndexingAreSplitIntoRows) {
  // 2^32 input elements in one channel of one image (compiled only): cut along output rows, each
  // piece reading its rows of the input (codegen/range_split.h), so no kernel indexes past 2^31.
  ir::Graph g = conv_graph(OpKind::Conv, {1, 1, 65536, 65536}, {1, 1, 3, 3}, false, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  codegen::CompileOptions o;
  o.target = find_target("amd-cdna3").limits;
  ModuleImage m = codegen::compile_graph(g, o);
  EXPECT_GE(m.manifest.dispatches.size(), 2u);
  const TensorLookup tensors(m.manifest);
  for (const DispatchDesc& d : m.manifest.dispatches) {
    EXPECT_NE(d.notes.find("17179869184 bytes, above target 'amd-cdna3' maxStorageBufferRange"), std::string::npos)
        << d.notes;
    for (const BindingDesc& b : d.bindings)
      EXPECT_LE(shape_numel(tensors.tensor(b.tensor).shape), int64_t(INT32_MAX)) << d.name << " " << b.tensor;
  }
}

// A strided conv_transpose runs phase by phase (codegen/conv_phases.h): its GEMM has stride^rank
// groups per conv group, each with ceil(K / s) taps per dim instead of K. The edges: kernels
// smaller than the stride (phases without a tap: bias only), pads beyond the stride, output
// padding, uneven phases (O not a multiple of s), 1-D and 3-D, groups, channels-last layouts.
TEST(ConvRegression, TransposedConvRunsPhaseByPhase) {
  struct Case {
    Shape x, w;
    ir::AttrMap attrs;
  };
  using V = std::vector<int64_t>;
  const Case cases[] = {
      {{1, 8, 6, 6}, {8, 4, 4, 4}, {{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}},
      {{2, 3, 5, 4}, {3, 2, 1, 2}, {{"strides", V{3, 3}}, {"pads", V{0, 0, 0, 0}}}},
      {{1, 4, 5, 3}, {4, 3, 5, 2}, {{"strides", V{2, 3}}, {"pads", V{3, 0, 2, 1}}, {"output_padding", V{1, 2}}}},
      {{2, 6, 7}, {6, 2, 3}, {{"strides", V{2}}, {"pads", V{1, 0}}, {"groups", int64_t(3)}}},
      {{1, 2, 3, 3, 2}, {2, 3, 2, 3, 3}, {{"strides", V{2, 1, 2}}, {"pads", V{0, 1, 1, 1, 0, 1}}}},
      {{1, 4, 4, 5}, {3, 3, 5, 3}, {{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"input_layout", std::string("NHWC")},
                                     {"output_layout", std::string("NHWC")}, {"filter_layout", std::string("HWCF")}}},
  };
  uint32_t seed = 40;
  for (const Case& c : cases) {
    for (bool bias : {false, true}) {
      ir::Graph g = conv_graph(OpKind::ConvTranspose, c.x, c.w, bias, c.attrs);
      const ir::ConvGeometry geo = ir::conv_geometry(only_conv(g));
      SCOPED_TRACE(cat("x ", shape_str(c.x), " w ", shape_str(c.w), " bias ", bias));
      codegen::ConvGemmShape s = codegen::conv_gemm_shape(geo);
      int64_t phases = 1, taps = 1;
      for (size_t i = 0; i < size_t(geo.spatial_rank); ++i) {
        phases *= geo.strides[i];
        taps *= (geo.kernel[i] + geo.strides[i] - 1) / geo.strides[i];
      }
      EXPECT_EQ(s.phases, phases);
      EXPECT_EQ(s.groups, geo.groups * phases);
      EXPECT_EQ(s.k, geo.in_channels_per_group() * taps);
      std::map<std::string, HostTensor> in = random_inputs(g, seed++);
      std::vector<std::string> strategies{"implicit_gemm", "direct"};
      if (s.k >= 32) strategies.push_back("split_k:2");  // at least 2 steps of any tile
      for (const std::string& strategy : strategies) {
        GpuRun run = run_conv(g, in, strategy);
        EXPECT_TRUE(outputs_match(run)) << strategy;
      }
    }
  }
}

}  // namespace
}  // namespace vkc::test
