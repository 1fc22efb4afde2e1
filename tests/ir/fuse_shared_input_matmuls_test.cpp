// ir::fuse_shared_input_matmuls_pass: x @ W_i (+ b_i) with constant W_i become one product and
// slices; the rewritten graph computes the same values (reference interpreter, both graphs).
#include "ir/pass_test_support.h"

namespace vkc::ir {
namespace {

Graph fused_and_checked(const std::string& text) {
  return pass_keeping_values(text, fuse_shared_input_matmuls_pass(), 1e-5);
}

// q, k and v of one activation, the bias on either side of the add, widths 2, 3 and 2, each read by
// a product: directly, through a scaling by a constant, through a transpose.
const char* kProjections = R"(graph @main(%x: tensor<2x3x4xf32>, %rq: tensor<2x4xf32>, %rk: tensor<3x4xf32>, %rv: tensor<3x4xf32>) {
  %wq = constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<4x2xf32>} : tensor<4x2xf32>
  %wk = constant {value = dense<[-1.0, 0.5, 2.0, 1.5, -2.5, 3.0, 0.25, 1.0, -1.0, 2.0, 0.0, 4.0]> : tensor<4x3xf32>} : tensor<4x3xf32>
  %wv = constant {value = dense<[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]> : tensor<4x2xf32>} : tensor<4x2xf32>
  %bq = constant {value = dense<[10.0, 20.0]> : tensor<2xf32>} : tensor<2xf32>
  %bk = constant {value = dense<[30.0, 40.0, 50.0]> : tensor<1x3xf32>} : tensor<1x3xf32>
  %bv = constant {value = dense<[60.0, 70.0]> : tensor<2xf32>} : tensor<2xf32>
  %half = constant {value = dense<[0.5]> : tensor<1xf32>} : tensor<1xf32>
  %q0 = matmul "q" (%x, %wq) : tensor<2x3x2xf32>
  %q = add (%q0, %bq) : tensor<2x3x2xf32>
  %k0 = matmul "k" (%x, %wk) : tensor<2x3x3xf32>
  %k = add (%bk, %k0) : tensor<2x3x3xf32>
  %v0 = matmul "v" (%x, %wv) : tensor<2x3x2xf32>
  %v = add (%v0, %bv) : tensor<2x3x2xf32>
  %oq = matmul (%q, %rq) : tensor<2x3x4xf32>
  %ks = mul (%half, %k) : tensor<2x3x3xf32>
  %ok = matmul (%ks, %rk) : tensor<2x3x4xf32>
  %vt = transpose (%v) {perm = [0, 2, 1]} : tensor<2x2x3xf32>
  %ov = matmul (%vt, %rv) : tensor<2x2x4xf32>
  return %oq as "oq", %ok as "ok", %ov as "ov"
}
)";

TEST(FuseSharedInputMatmuls, ProjectionsAndBiasesBecomeOneProductAndSlices) {
  Graph g = fused_and_checked(kProjections);
  EXPECT_EQ(count_ops(g, OpKind::MatMul), 4);  // the joined product and the three readers
  EXPECT_EQ(count_ops(g, OpKind::Add), 1);
  EXPECT_EQ(count_ops(g, OpKind::Slice), 3);
  const std::string text = print_graph(g);
  // The weights side by side row by row, the biases end to end.
  EXPECT_NE(text.find("dense<[1.0, 2.0, -1.0, 0.5, 2.0, 0.5, 1.0, 3.0, 4.0, 1.5, -2.5, 3.0, 1.5, 2.0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("dense<[10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]> : tensor<7xf32>"), std::string::npos) << text;
  EXPECT_NE(text.find("matmul \"q+k+v\""), std::string::npos) << text;
}

// Joined, a product's value would reach these readers through a copy of its slice: they stay.
TEST(FuseSharedInputMatmuls, ResultsReadByOtherOpsStaySeparate) {
  auto products_after = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return count_ops(fused_and_checked(text), OpKind::MatMul);
  };
  // v's product is also a graph output (and so keeps its add out of the join).
  EXPECT_EQ(products_after(kProjections, "return %oq as \"oq\"", "return %v0 as \"v0\", %oq as \"oq\""), 6);
  // k's result is read by a product of itself (not linear in it).
  EXPECT_EQ(products_after(kProjections, "%ks = mul (%half, %k)", "%ks = mul (%k, %k)"), 6);
  // ... by an elementwise op with another activation (SwiGLU's silu(gate) * up).
  EXPECT_EQ(products_after(kProjections, "%ks = mul (%half, %k)",
                           "%rk3 = slice (%rk) {axes = [1], ends = [3], starts = [0]} : tensor<3x3xf32>\n"
                           "  %ks = mul (%k, %rk3)"),
            6);
  // ... by a non-linear function of it.
  EXPECT_EQ(products_after(kProjections, "%ks = mul (%half, %k)", "%ks = sigmoid (%k)"), 6);
  // q's result is itself a graph output.
  EXPECT_EQ(products_after(kProjections, "return %oq as \"oq\"", "return %q as \"q\", %oq as \"oq\""), 6);
}

TEST(FuseSharedInputMatmuls, JoinedResultsBeyondTheLimitStaySeparate) {
  // q, k and v hold 48, 72 and 48 bytes: 168 joined.
  for (uint64_t limit : {uint64_t(167), uint64_t(168)}) {
    Graph g = parse_graph(kProjections);
    PassManager pm;
    pm.add(fuse_shared_input_matmuls_pass(limit));
    pm.run(g);
    EXPECT_EQ(count_ops(g, OpKind::MatMul), limit < 168 ? 6 : 4) << limit;
  }
}

// Rotary embeddings as the rotate-half pass leaves them: q (and k) of two heads read twice, as
// q * cos and as reverse(q) * sign * sin, added, then the scores' product; v through its head split.
const char* kRotary = R"(graph @main(%x: tensor<1x4x8xf32>) {
  %wq = constant {value = dense<[0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 1.0, -1.1, 1.2, 1.3, -1.4, 1.5, 1.6, -0.1, 0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -1.0, 1.1, 1.2, -1.3, 1.4, 1.5, -1.6, 0.15, 0.25, -0.35, 0.45, 0.55, -0.65, 0.75, 0.85, -0.95, 1.05, 1.15, -1.25, 1.35, 1.45, -1.55, 1.65, 0.12, -0.22, 0.32, 0.42, -0.52, 0.62, 0.72, -0.82, 0.92, 1.02, -1.12, 1.22, 1.32, -1.42, 1.52, 1.62]> : tensor<8x8xf32>} : tensor<8x8xf32>
  %wk = constant {value = dense<[0.5, 0.4, -0.3, 0.2, 0.1, -0.6, 0.7, 0.8, -0.9, 0.3, 0.2, -0.1, 0.6, 0.5, -0.4, 0.3, 0.2, -0.7, 0.8, 0.9, -0.5, 0.4, 0.3, -0.2, 0.1, 0.6, -0.7, 0.8, 0.9, -0.1, 0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -0.15, 0.25, 0.35, -0.45, 0.55, 0.65, -0.75, 0.85, 0.95, -0.05, 0.45, 0.35, -0.25, 0.15, 0.05, -0.55, 0.65, 0.75, -0.85, 0.95, 0.35, -0.45, 0.25, 0.15, -0.35, 0.45]> : tensor<8x8xf32>} : tensor<8x8xf32>
  %wv = constant {value = dense<[0.3, -0.1, 0.4, 0.1, -0.5, 0.9, 0.2, -0.6, 0.5, 0.3, -0.5, 0.8, 0.9, -0.7, 0.9, 0.3, -0.2, 0.3, 0.8, -0.4, 0.6, 0.2, -0.6, 0.4, 0.3, -0.3, 0.8, 0.3, -0.2, 0.7, 0.9, -0.5, 0.1, 0.2, -0.8, 0.4, 0.1, -0.9, 0.7, 0.1, -0.6, 0.9, 0.3, -0.9, 0.9, 0.3, -0.7, 0.5]> : tensor<8x6xf32>} : tensor<8x6xf32>
  %cos = constant {value = dense<[1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0, -0.1, -0.2, -0.3, -0.4, -0.5]> : tensor<4x4xf32>} : tensor<4x4xf32>
  %sin = constant {value = dense<[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.95, 0.85, 0.75, 0.65, 0.55]> : tensor<4x4xf32>} : tensor<4x4xf32>
  %sign = constant {value = dense<[-1.0, -1.0, 1.0, 1.0]> : tensor<4xf32>} : tensor<4xf32>
  %q = matmul "q" (%x, %wq) : tensor<1x4x8xf32>
  %k = matmul "k" (%x, %wk) : tensor<1x4x8xf32>
  %v = matmul "v" (%x, %wv) : tensor<1x4x6xf32>
  %q4 = reshape (%q) {shape = [1, 4, 2, 4]} : tensor<1x4x2x4xf32>
  %qh = transpose (%q4) {perm = [0, 2, 1, 3]} : tensor<1x2x4x4xf32>
  %qc = mul (%qh, %cos) : tensor<1x2x4x4xf32>
  %q5 = reshape (%qh) {shape = [1, 2, 4, 2, 2]} : tensor<1x2x4x2x2xf32>
  %qs = reverse (%q5) {axes = [3]} : tensor<1x2x4x2x2xf32>
  %qr = reshape (%qs) {shape = [1, 2, 4, 4]} : tensor<1x2x4x4xf32>
  %qn = mul (%qr, %sign) : tensor<1x2x4x4xf32>
  %qt = mul (%qn, %sin) : tensor<1x2x4x4xf32>
  %qrot = add (%qc, %qt) : tensor<1x2x4x4xf32>
  %k4 = reshape (%k) {shape = [1, 4, 2, 4]} : tensor<1x4x2x4xf32>
  %kh = transpose (%k4) {perm = [0, 2, 3, 1]} : tensor<1x2x4x4xf32>
  %ks = mul (%kh, %cos) : tensor<1x2x4x4xf32>
  %s = matmul (%qrot, %ks) : tensor<1x2x4x4xf32>
  %p = softmax (%s) {axis = 3} : tensor<1x2x4x4xf32>
  %v3 = reshape (%v) {shape = [1, 4, 2, 3]} : tensor<1x4x2x3xf32>
  %vh = transpose (%v3) {perm = [0, 2, 1, 3]} : tensor<1x2x4x3xf32>
  %o = matmul (%p, %vh) : tensor<1x2x4x3xf32>
  return %o as "o"
}
)";

TEST(FuseSharedInputMatmuls, RotaryReadersJoin) {
  Graph g = fused_and_checked(kRotary);
  EXPECT_EQ(count_ops(g, OpKind::MatMul), 3);  // the joined product and the two of attention
  EXPECT_EQ(count_ops(g, OpKind::Slice), 3);
  // With q also read by a product of itself (q * q is not linear in q), nothing joins.
  std::string quadratic = kRotary;
  const std::string from = "%qc = mul (%qh, %cos)";
  quadratic.replace(quadratic.find(from), from.size(), "%qc = mul (%qh, %qh)");
  EXPECT_EQ(count_ops(fused_and_checked(quadratic), OpKind::MatMul), 5);
}

TEST(FuseSharedInputMatmuls, OtherProductsStay) {
  // One product per activation; a weight that is a graph input; a weight whose rows are not K.
  const char* text = R"(graph @main(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>, %w: tensor<4x2xf32>) {
  %c = constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<4x2xf32>} : tensor<4x2xf32>
  %a = matmul (%x, %c) : tensor<3x2xf32>
  %b = matmul (%y, %c) : tensor<3x2xf32>
  %d = matmul (%y, %w) : tensor<3x2xf32>
  return %a as "a", %b as "b", %d as "d"
}
)";
  Graph g = fused_and_checked(text);
  EXPECT_EQ(count_ops(g, OpKind::MatMul), 3);
  EXPECT_EQ(count_ops(g, OpKind::Slice), 0);
}

}  // namespace
}  // namespace vkc::ir
