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
  // k's result is read by an elementwise op with a tensor operand (SwiGLU's silu(gate) * up).
  EXPECT_EQ(products_after(kProjections, "%ks = mul (%half, %k)", "%ks = mul (%k, %k)"), 6);
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
