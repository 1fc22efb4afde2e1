// fp16 plans for a target with tensor cores (the nvidia profile; no GPU needed): with activations
// stored channels innermost between the tensor-core convs (ir/passes/channels_last.cpp) and their
// filters packed at compile time, a resnet-like graph compiles to no more dispatches in fp16 than
// in fp32 and no conv packs its input or filter in a dispatch of its own.
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "common/mobilenet_like_graph.h"
#include "common/resnet_like_graph.h"
#include "module/target_profiles.h"
#include "ir/text_format.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

std::map<std::string, int> kernels_of(const ir::Graph& g, Precision precision) {
  CompileOptions o;
  o.target = find_target("nvidia").limits;
  o.precision = precision;
  std::map<std::string, int> n;
  for (const DispatchDesc& d : compile_graph(g, o).manifest.dispatches) {
    ++n[d.kernel];
    if (getenv("DUMP")) {
      std::printf("%s:", d.name.c_str());
      for (auto& op : d.ops) std::printf(" [%s]", op.c_str());
      std::printf("\n");
    }
  }
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

TEST(ChannelsLastPlan, MobilenetLikeFp16NeedsNoMoreDispatchesThanFp32) {
  for (bool efficientnet : {false, true}) {
    test::MobilenetLikeShape s;
    s.batch = 8;
    s.size = 64;
    s.efficientnet = efficientnet;
    std::mt19937 rng(24);
    const ir::Graph g = test::mobilenet_like_graph(s, rng);
    const std::map<std::string, int> fp32 = kernels_of(g, Precision::fp32), fp16 = kernels_of(g, Precision::fp16);
    for (auto& [k, n] : fp32) std::printf("fp32 %s %d\n", k.c_str(), n);
    for (auto& [k, n] : fp16) std::printf("fp16 %s %d\n", k.c_str(), n);
    EXPECT_LE(total(fp16), total(fp32));
    if (getenv("DUMP")) {
      ir::Graph c = g.clone();
      auto pm = default_pass_pipeline({}, &find_target("nvidia").limits, Precision::fp16);
      pm.run(c);
      std::printf("%s\n", ir::print_graph_digest(c).c_str());
    }
  }
}

}  // namespace
}  // namespace vkc::codegen
