// fp16 plans for a target with tensor cores (the nvidia profile; no GPU needed): with activations
// stored channels innermost between the tensor-core convs (ir/passes/channels_last.cpp) and their
// filters packed at compile time, resnet-like and mobilenet-like graphs compile to no more
// dispatches in fp16 than in fp32 and no conv packs its input or filter in a dispatch of its own.
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "common/mobilenet_like_graph.h"
#include "common/resnet_like_graph.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

std::map<std::string, int> kernels_of(const ir::Graph& g, Precision precision) {
  CompileOptions o;
  o.target = find_target("nvidia").limits;
  o.precision = precision;
  std::map<std::string, int> n;
  for (const DispatchDesc& d : compile_graph(g, o).manifest.dispatches) ++n[d.kernel];
  return n;
}

int total(const std::map<std::string, int>& kernels) {
  int n = 0;
  for (const auto& [k, c] : kernels) n += c;
  return n;
}

TEST(ChannelsLastPlan, Fp16NeedsNoMoreDispatchesThanFp32) {
  test::ResnetLikeShape s;
  s.batch = 4;
  s.channels = 64;
  s.size = 32;
  const std::vector<test::ResnetLikeShape> shapes = test::resnet_like_variants(s, 256, 12, false);
  std::mt19937 rng(22);
  for (const test::ResnetLikeShape& shape : shapes) {
    SCOPED_TRACE(cat("rank ", shape.spatial_rank, shape.squeeze_excite ? " se" : "", shape.concat ? " concat" : ""));
    const ir::Graph g = test::resnet_like_graph(shape, rng);
    const std::map<std::string, int> fp32 = kernels_of(g, Precision::fp32), fp16 = kernels_of(g, Precision::fp16);
    EXPECT_GE(fp16.count("conv_implicit_gemm_coopmat") ? fp16.at("conv_implicit_gemm_coopmat") : 0, 2)
        << "the test needs tensor-core convs";
    EXPECT_EQ(fp16.count("conv_pack_input"), 0u);
    EXPECT_EQ(fp16.count("conv_pack_filter"), 0u);
    EXPECT_EQ(fp16.count("transpose"), 0u);
    EXPECT_LE(total(fp16), total(fp32));
  }
}

// Inverted residual blocks (mobilenet-like: relu6, hardswish, hardsigmoid; efficientnet-like:
// silu, sigmoid) with depthwise 3x3 and 5x5 convs at strides 1 and 2 and squeeze-excite: the
// depthwise convs join the channels-last regions on their channels-last kernel, squeeze-excite's
// scale is read by the next tensor-core conv through its fused prologue, and a graph input of 16
// channels is read through its fused cast: no pack or transpose dispatch, and no more dispatches
// than in fp32 (before: 40 against 33 with 7 input packs, and the depthwise convs in NCHW).
TEST(ChannelsLastPlan, MobilenetLikeFp16NeedsNoMoreDispatchesThanFp32) {
  for (int64_t in_channels : {3, 16})
    for (bool efficientnet : {false, true}) {
      SCOPED_TRACE(cat(efficientnet ? "efficientnet-like" : "mobilenet-like", ", ", in_channels, " input channels"));
      test::MobilenetLikeShape s;
      s.batch = 8;
      s.size = 64;
      s.in_channels = in_channels;
      s.efficientnet = efficientnet;
      std::mt19937 rng(24);
      const ir::Graph g = test::mobilenet_like_graph(s, rng);
      const std::map<std::string, int> fp32 = kernels_of(g, Precision::fp32), fp16 = kernels_of(g, Precision::fp16);
      EXPECT_GE(fp16.count("conv_implicit_gemm_coopmat") ? fp16.at("conv_implicit_gemm_coopmat") : 0, 12)
          << "the test needs tensor-core convs";
      EXPECT_EQ(fp16.count("conv_depthwise_channels_last") ? fp16.at("conv_depthwise_channels_last") : 0,
                int(s.blocks.size()));
      EXPECT_EQ(fp16.count("conv_pack_input"), 0u);
      EXPECT_EQ(fp16.count("conv_pack_filter"), 0u);
      EXPECT_EQ(fp16.count("transpose"), 0u);
      EXPECT_LE(total(fp16), total(fp32));
      std::printf("  %s, %d input channels: fp32 %d, fp16 %d dispatches\n",
                  efficientnet ? "efficientnet-like" : "mobilenet-like", int(in_channels), total(fp32), total(fp16));
    }
}

}  // namespace
}  // namespace vkc::codegen
