// ir::fuse_rms_norm_pass: RMSNorm spelled out becomes layer_norm with `rms`, computing the same
// values (reference interpreter on both graphs); near misses stay as they are.
#include "ir/pass_test_support.h"

namespace vkc::ir {
namespace {

Graph fused_and_checked(const std::string& text) { return pass_keeping_values(text, fuse_rms_norm_pass(), 1e-5); }

// HF LLaMA's export: pow, reduce_mean, add eps, sqrt, reciprocal (as 1 / s), mul, then the weight.
const char* kLlama = R"(graph @main(%x: tensor<2x3x8xf32>) {
  %two = constant {value = dense<[2.0]> : tensor<1xf32>} : tensor<1xf32>
  %eps = constant {value = dense<[0.000001]> : tensor<1xf32>} : tensor<1xf32>
  %one = constant {value = dense<[1.0]> : tensor<1xf32>} : tensor<1xf32>
  %w = constant {value = dense<[1.0, 0.5, 2.0, -1.0, 1.5, 0.25, 1.0, 3.0]> : tensor<8xf32>} : tensor<8xf32>
  %p = pow (%x, %two) : tensor<2x3x8xf32>
  %m = reduce_mean (%p) {axes = [-1], keepdims = true} : tensor<2x3x1xf32>
  %a = add (%eps, %m) : tensor<2x3x1xf32>
  %s = sqrt (%a) : tensor<2x3x1xf32>
  %r = div (%one, %s) : tensor<2x3x1xf32>
  %n = mul (%x, %r) : tensor<2x3x8xf32>
  %y = mul (%w, %n) : tensor<2x3x8xf32>
  return %y as "y"
}
)";

TEST(FuseRmsNorm, SpelledOutRmsNormBecomesOneLayerNorm) {
  Graph g = fused_and_checked(kLlama);
  EXPECT_EQ(count_ops(g, OpKind::LayerNorm), 1);
  EXPECT_EQ(count_ops(g, OpKind::ReduceMean), 0);
  EXPECT_EQ(count_ops(g, OpKind::Mul), 0);
  EXPECT_NE(print_graph(g).find("rms = true"), std::string::npos) << print_graph(g);
  // x * x, x / sqrt(..), no weight.
  const char* plain = R"(graph @main(%x: tensor<4x6xf32>) {
  %eps = constant {value = dense<[0.00001]> : tensor<1xf32>} : tensor<1xf32>
  %p = mul (%x, %x) : tensor<4x6xf32>
  %m = reduce_mean (%p) {axes = [1], keepdims = true} : tensor<4x1xf32>
  %a = add (%m, %eps) : tensor<4x1xf32>
  %s = sqrt (%a) : tensor<4x1xf32>
  %y = div (%x, %s) : tensor<4x6xf32>
  return %y as "y"
}
)";
  g = fused_and_checked(plain);
  EXPECT_EQ(count_ops(g, OpKind::LayerNorm), 1);
  EXPECT_EQ(count_ops(g, OpKind::Div), 0);
}

TEST(FuseRmsNorm, NearMissesStay) {
  auto norms_after = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return count_ops(fused_and_checked(text), OpKind::LayerNorm);
  };
  // A cube instead of a square; the mean also read elsewhere; x divided by another root.
  EXPECT_EQ(norms_after(kLlama, "dense<[2.0]>", "dense<[3.0]>"), 0);
  EXPECT_EQ(norms_after(kLlama, "return %y as \"y\"", "return %y as \"y\", %m as \"m\""), 0);
  EXPECT_EQ(norms_after(kLlama, "%r = div (%one, %s)", "%r = div (%two, %s)"), 0);
}

}  // namespace
}  // namespace vkc::ir
