// Graphs rewritten by the channels-last pass (ir/passes/channels_last.cpp) with every conv wanted,
// run on the device (lavapipe: SIMT convs, pooling, reductions and elementwise kernels reading and
// writing the channels-last layouts), in fp32 and in the fp16 precision mode, against the float64
// reference of the original graph. The pass runs by itself in the compiler only for tensor-core
// convs, which lavapipe has not; this is where the rest of the kernels meet its layouts.
#include <gtest/gtest.h>

#include <cmath>

#include "common/gpu_harness.h"
#include "common/mobilenet_like_graph.h"
#include "common/resnet_like_graph.h"
#include "ir/conv_geometry.h"
#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/verifier.h"

namespace vkc::test {
namespace {

// Max abs error over max abs output, every output.
double relative_max_error(const std::map<std::string, HostTensor>& got, const std::map<std::string, HostTensor>& want) {
  double err = 0, ref = 0;
  for (const auto& [name, r] : want) {
    const HostTensor& a = got.at(name);
    for (int64_t i = 0; i < r.numel(); ++i) {
      const double x = a.get_f64(i), y = r.get_f64(i);
      if (std::isnan(x) || std::isnan(y)) return INFINITY;
      err = std::max(err, std::abs(x - y));
      ref = std::max(ref, std::abs(y));
    }
  }
  return ref > 0 ? err / ref : err;
}

// The graph after the channels-last pass and dead-code elimination, verified.
ir::Graph rewritten(const ir::Graph& original, const ir::ChannelsLastConvs& convs = {}) {
  ir::Graph g = original.clone();
  ir::PassManager pm;
  pm.add(ir::channels_last_pass(convs));
  pm.add(ir::dead_code_elimination_pass());
  pm.run(g);
  ir::verify_graph(g);
  return g;
}

// Runs the rewritten graph in fp32 and checks it against the original's float64 reference.
GpuRun run_against_original(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs,
                            const std::map<std::string, HostTensor>& want) {
  GpuRunOptions fp32;
  GpuRun run = run_on_gpu(g, inputs, fp32);
  EXPECT_TRUE(outputs_match(run, fp32));
  EXPECT_LE(relative_max_error(run.outputs, want), 1e-5);
  return run;
}

TEST(ChannelsLastE2e, RewrittenResnetLikeGraphsMatchTheOriginal) {
  ResnetLikeShape s;
  s.batch = 2;
  s.channels = 16;
  s.size = 12;
  const std::vector<ResnetLikeShape> shapes = resnet_like_variants(s, 20, 6, true);
  std::mt19937 rng(23);
  uint32_t seed = 40;
  for (const ResnetLikeShape& shape : shapes) {
    SCOPED_TRACE(cat("rank ", shape.spatial_rank, shape.squeeze_excite ? " se" : "", shape.concat ? " concat" : "",
                     shape.block_output ? " block output" : ""));
    ir::Graph original = resnet_like_graph(shape, rng);
    ir::Graph g = rewritten(original);
    const std::map<std::string, HostTensor> inputs = random_inputs(g, seed++);
    const std::map<std::string, HostTensor> want = ir::interpret(original, inputs);
    run_against_original(g, inputs, want);
    GpuRunOptions fp16;
    fp16.precision = Precision::fp16;
    EXPECT_LE(relative_max_error(run_on_gpu(g, inputs, fp16).outputs, want), 5e-3);
  }
}

// Inverted residual blocks (depthwise 3x3 and 5x5 at strides 1 and 2, squeeze-excite, hardswish,
// relu6, hardsigmoid; silu and sigmoid in the efficientnet-like form) rewritten with every conv
// wanted and the depthwise convs changing both layouts or neither, as the compiler's predicates
// do for the nvidia profile: the depthwise convs then run on the channels-last depthwise kernel,
// squeeze-excite's pooling, 1x1 convs and scale on the permuted layouts.
TEST(ChannelsLastE2e, RewrittenMobilenetLikeGraphsMatchTheOriginal) {
  uint32_t seed = 60;
  for (bool efficientnet : {false, true}) {
    SCOPED_TRACE(efficientnet ? "efficientnet-like" : "mobilenet-like");
    MobilenetLikeShape shape;
    shape.batch = 2;
    shape.size = 24;
    shape.in_channels = efficientnet ? 8 : 3;
    shape.efficientnet = efficientnet;
    std::mt19937 rng(seed);
    ir::Graph original = mobilenet_like_graph(shape, rng);
    ir::ChannelsLastConvs convs;
    convs.same_layout = [](const ir::Op& conv) {
      const ir::ConvGeometry geo = ir::conv_geometry(conv);
      return geo.groups == geo.in_channels && geo.in_channels_per_group() == 1;
    };
    ir::Graph g = rewritten(original, convs);
    const std::map<std::string, HostTensor> inputs = random_inputs(g, seed++);
    const std::map<std::string, HostTensor> want = ir::interpret(original, inputs);
    GpuRun run = run_against_original(g, inputs, want);
    int channels_last_depthwise = 0, transposes = 0;
    for (const DispatchDesc& d : run.module.manifest.dispatches) {
      channels_last_depthwise += d.strategy == "depthwise_channels_last";
      transposes += d.kernel == "transpose";
    }
    EXPECT_EQ(channels_last_depthwise, int(shape.blocks.size()));
    EXPECT_EQ(transposes, 0);
    GpuRunOptions fp16;
    fp16.precision = Precision::fp16;
    EXPECT_LE(relative_max_error(run_on_gpu(g, inputs, fp16).outputs, want), 5e-3);
  }
}

}  // namespace
}  // namespace vkc::test
