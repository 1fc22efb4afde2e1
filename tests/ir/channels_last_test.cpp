// The channels-last pass (ir/passes/channels_last.cpp): seeded resnet-like graphs (1-D, 2-D, 3-D;
// squeeze-excite, concat, per-channel bias, a block result used outside) rewritten with every conv
// wanted compute what the original computes (reference interpreter), every conv after the stem
// reads its input channels innermost, and transposes appear only where a value leaves the region;
// regions that would add as many transposes as they save packs stay as they are; depthwise convs
// (mobilenet-like graphs) change both their layouts or neither.
#include <gtest/gtest.h>

#include "common/mobilenet_like_graph.h"
#include "common/resnet_like_graph.h"
#include "ir/conv_geometry.h"
#include "common/test_util.h"
#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

int count_ops(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Op* op : g.ops()) n += op->kind == kind;
  return n;
}

// Convs reading their input channels innermost, and all convs.
std::pair<int, int> channels_last_convs(const Graph& g) {
  int last = 0, all = 0;
  for (const Op* op : g.ops()) {
    if (op->kind != OpKind::Conv) continue;
    ++all;
    const std::string layout = op->attr_string_or("input_layout", "");
    last += !layout.empty() && layout.back() == 'C';
  }
  return {last, all};
}

bool run_pass(Graph& g, const ChannelsLastConvs& convs = {}) {
  PassManager pm;
  pm.add(channels_last_pass(convs));
  pm.add(dead_code_elimination_pass());
  const int before = g.num_ops();
  const std::string printed = print_graph(g);
  pm.run(g);
  verify_graph(g);
  return g.num_ops() != before || print_graph(g) != printed;
}

void expect_same_outputs(const Graph& before, const Graph& after, uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, HostTensor> in;
  for (const Value* x : before.inputs()) in[x->name] = test::random_tensor(x->type.dtype, x->type.shape, rng);
  std::map<std::string, HostTensor> want = interpret(before, in), got = interpret(after, in);
  ASSERT_EQ(want.size(), got.size());
  for (const auto& [name, w] : want) {
    const test::Comparison c = test::compare(got.at(name), w, 1e-6, 1e-6);
    EXPECT_TRUE(c.ok) << name << ": " << c.message;
  }
}

struct Case {
  test::ResnetLikeShape shape;
  int transposes;  // the rewritten graph's (only a block result used outside needs one)
};

TEST(ChannelsLast, ResnetLikeGraphsComputeTheSame) {
  std::vector<Case> cases;
  for (int rank : {1, 2, 3}) {
    test::ResnetLikeShape s;
    s.spatial_rank = rank;
    s.size = rank == 3 ? 4 : 8;
    cases.push_back({s, 0});
    s.squeeze_excite = s.concat = true;
    cases.push_back({s, 0});
    s.block_output = true;
    s.batch = 2;
    cases.push_back({s, 1});
  }
  test::ResnetLikeShape f16;
  f16.dtype = DType::f16;
  f16.channels = 8;
  f16.squeeze_excite = true;
  cases.push_back({f16, 0});
  uint32_t seed = 21;
  for (const Case& c : cases) {
    SCOPED_TRACE(cat("rank ", c.shape.spatial_rank, " batch ", c.shape.batch, c.shape.squeeze_excite ? " se" : "",
                     c.shape.concat ? " concat" : "", c.shape.block_output ? " block output" : "",
                     c.shape.dtype == DType::f16 ? " f16" : ""));
    std::mt19937 rng(seed++);
    Graph g = test::resnet_like_graph(c.shape, rng);
    Graph before = g.clone();
    ASSERT_TRUE(run_pass(g));
    const auto [last, all] = channels_last_convs(g);
    EXPECT_EQ(last, all - 1) << print_graph(g);  // every conv but the stem, which reads the graph input
    EXPECT_EQ(count_ops(g, OpKind::Transpose), c.transposes) << print_graph(g);
    expect_same_outputs(before, g, seed);
  }
}

// conv -> relu -> conv ... with `convs` convs from the graph input to the graph output; with
// `middle_output`, the first relu's result is an output too.
Graph conv_chain(int convs, std::mt19937& rng, bool middle_output = false) {
  Graph g;
  Value* x = g.add_input("x", {DType::f32, {1, 8, 6, 6}});
  for (int i = 0; i < convs; ++i) {
    Value* w = test::resnet_like_constant(g, DType::f32, {8, 8, 3, 3}, rng, 0.2, cat("w", i));
    x = g.add_op(OpKind::Conv, {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, cat("conv", i))->result();
    x = g.add_op(OpKind::Relu, {x}, {}, cat("relu", i))->result();
    if (i == 0 && middle_output) g.add_output(x, "middle");
  }
  g.add_output(x, "y");
  return g;
}

TEST(ChannelsLast, RewritesOnlyWhereItSavesMorePacksThanItAddsTransposes) {
  std::mt19937 rng(5);
  {
    // Each region between two convs stands alone: conv0 writes channels-last for conv1, which
    // reads it in place and writes the graph's output in the original layout.
    Graph g = conv_chain(3, rng), before = g.clone();
    ASSERT_TRUE(run_pass(g));
    EXPECT_EQ(count_ops(g, OpKind::Transpose), 0);
    EXPECT_EQ(channels_last_convs(g), std::make_pair(2, 3));
    expect_same_outputs(before, g, 6);
  }
  {
    // The first region saves conv1's pack but its value is also an output: one transpose added.
    Graph g = conv_chain(2, rng, true);
    EXPECT_FALSE(run_pass(g));
  }
  {
    Graph g = conv_chain(3, rng);  // no conv wanted: nothing saved
    EXPECT_FALSE(run_pass(g, {[](const Op&) { return false; }, {}, {}}));
  }
  {
    Graph g = conv_chain(3, rng), before = g.clone();  // only the last conv wanted
    ASSERT_TRUE(run_pass(g, {[](const Op& conv) { return conv.name == "conv2"; }, {}, {}}));
    EXPECT_EQ(channels_last_convs(g), std::make_pair(1, 3));
    expect_same_outputs(before, g, 7);
  }
  {
    // conv1 may not change its layouts, so it is an unknown op to the pass: conv0's region ends
    // at it (no wanted conv reads that region) and conv2's starts at it (a transpose in, which
    // conv2 would fuse as a prologue and pack anyway): neither region saves a pack.
    Graph g = conv_chain(3, rng);
    EXPECT_FALSE(run_pass(g, {{}, [](const Op& conv) { return conv.name != "conv1"; }, {}}));
  }
}

bool is_depthwise(const Op& conv) {
  const ConvGeometry g = conv_geometry(conv);
  return g.groups == g.in_channels && g.in_channels_per_group() == 1;
}

// Depthwise convs in both layouts or neither, the others' counts of each.
struct DepthwiseLayouts {
  int both = 0, one = 0;
};
DepthwiseLayouts depthwise_layouts(const Graph& g) {
  DepthwiseLayouts d;
  for (const Op* op : g.ops()) {
    if (op->kind != OpKind::Conv || !is_depthwise(*op)) continue;
    const bool in = op->attr_string_or("input_layout", "") == "NHWC", out = op->attr_string_or("output_layout", "") == "NHWC";
    d.both += in && out;
    d.one += in != out;
  }
  return d;
}

// Inverted residual blocks with only the dense convs wanted (as the tensor-core planner wants
// them): a depthwise conv's input region (expand conv -> relu6) saves no pack by itself, so
// without `same_layout` the depthwise convs write channels-last but read the original layout;
// with it, each joins its input and output in one region and both change, squeeze-excite
// included, with no transpose anywhere.
TEST(ChannelsLast, DepthwiseConvsChangeBothLayoutsOrNeither) {
  for (bool efficientnet : {false, true}) {
    SCOPED_TRACE(efficientnet ? "efficientnet-like" : "mobilenet-like");
    test::MobilenetLikeShape shape;
    shape.size = 16;
    shape.efficientnet = efficientnet;
    std::mt19937 rng(31);
    const Graph original = test::mobilenet_like_graph(shape, rng);
    auto dense = [](const Op& conv) { return !is_depthwise(conv); };
    Graph apart = original.clone();
    ASSERT_TRUE(run_pass(apart, {dense, {}, {}}));
    EXPECT_GT(depthwise_layouts(apart).one, 0);
    Graph joined = original.clone();
    ASSERT_TRUE(run_pass(joined, {dense, {}, is_depthwise}));
    EXPECT_EQ(depthwise_layouts(joined).both, int(shape.blocks.size())) << print_graph(joined);
    EXPECT_EQ(depthwise_layouts(joined).one, 0);
    EXPECT_EQ(count_ops(joined, OpKind::Transpose), 0);
    expect_same_outputs(original, joined, 32);
  }
}

}  // namespace
}  // namespace vkc::ir
