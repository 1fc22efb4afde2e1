// ir::transpose_rows_into_product_pass: a transpose of a product's rows (last axis kept last)
// moves onto the product's lhs where that comes from attention through index maps; the rewritten
// graph computes the same values (reference interpreter, both graphs), and other transposes stay.
#include "ir/pass_test_support.h"

namespace vkc::ir {
namespace {

Graph rewritten_and_checked(const std::string& text) {
  return pass_keeping_values(text, transpose_rows_into_product_pass(), 1e-12);
}

// torchvision ViT's attention output path, sequence first (3 tokens, batch 2, 2 heads of 4):
// heads and tokens transposed to [S, B, H, D], the projection over S * B rows, then back to
// batch first for the residual add.
const char* kVitOut = R"(graph @main(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x3x4xf32>, %v: tensor<2x2x3x4xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %x: tensor<2x3x8xf32>) {
  %o = attention (%q, %k, %v) {scale = 0.5} : tensor<2x2x3x4xf32>
  %t6 = transpose (%o) {perm = [2, 0, 1, 3]} : tensor<3x2x2x4xf32>
  %a = reshape (%t6) {shape = [6, 8]} : tensor<6x8xf32>
  %p = gemm (%a, %w, %b) {transpose_b = true} : tensor<6x8xf32>
  %r = reshape (%p) {shape = [3, 2, 8]} : tensor<3x2x8xf32>
  %t7 = transpose (%r) {perm = [1, 0, 2]} : tensor<2x3x8xf32>
  %y = add (%x, %t7) : tensor<2x3x8xf32>
  return %y as "y"
}
)";

int transposes_of(const Graph& g, const std::string& source_kind) {
  int n = 0;
  for (const Op* op : g.ops())
    if (op->kind == OpKind::Transpose && op->operand(0)->producer != nullptr &&
        std::string(op_name(op->operand(0)->producer->kind)) == source_kind)
      ++n;
  return n;
}

TEST(TransposeRowsIntoProduct, ViTsOutputProjectionReadsItsRowsTransposed) {
  Graph g = rewritten_and_checked(kVitOut);
  // The transpose after the product is gone; a second one follows the heads' transpose instead.
  EXPECT_EQ(count_ops(g, OpKind::Transpose), 2);
  EXPECT_EQ(transposes_of(g, "transpose"), 1);
  EXPECT_EQ(transposes_of(g, "reshape"), 0);
  for (const Op* op : g.ops()) {
    if (op->kind == OpKind::Transpose && op->operand(0)->producer->kind == OpKind::Transpose) {
      EXPECT_EQ(op->attr_ints("perm"), (std::vector<int64_t>{1, 0, 2, 3}));
    }
  }
}

TEST(TransposeRowsIntoProduct, OtherTransposesStay) {
  // Transposes after a product's reshape (1 where the pass left the graph alone, 0 where it moved
  // the transpose onto the lhs).
  auto after_product = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return transposes_of(rewritten_and_checked(text), "reshape");
  };
  EXPECT_EQ(after_product(kVitOut, "  return", "  return"), 0);  // as a reference: moved
  // The lhs does not come from attention.
  EXPECT_EQ(after_product(kVitOut, "%t6 = transpose (%o)", "%t6 = transpose (%q)"), 1);
  // The bias varies along the rows.
  EXPECT_EQ(after_product(kVitOut, "%b: tensor<8xf32>", "%b: tensor<6x8xf32>"), 1);
  // The transpose moves the last axis.
  EXPECT_EQ(after_product(kVitOut, "%t7 = transpose (%r) {perm = [1, 0, 2]} : tensor<2x3x8xf32>\n  %y = add (%x, %t7) : tensor<2x3x8xf32>",
                          "%t7 = transpose (%r) {perm = [2, 0, 1]} : tensor<8x3x2xf32>\n  %y = reshape (%t7) {shape = [2, 3, 8]} : tensor<2x3x8xf32>"),
            1);
  // The product's result read elsewhere too.
  EXPECT_EQ(after_product(kVitOut, "return %y as \"y\"", "return %y as \"y\", %p as \"p\""), 1);
}

}  // namespace
}  // namespace vkc::ir
