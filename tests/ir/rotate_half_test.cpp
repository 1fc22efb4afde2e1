// ir::rotate_half_pass: concat(-x[..., h:], x[..., :h]) becomes the halves swapped by index maps
// times a sign; the rewritten graph computes the same values (reference interpreter, both graphs),
// and other concats stay.
#include "ir/pass_test_support.h"

namespace vkc::ir {
namespace {

Graph rewritten_and_checked(const std::string& text) { return pass_keeping_values(text, rotate_half_pass(), 0.0); }

// The rotary step as exporters write it: x * cos + rotate_half(x) * sin, the halves as slices
// with a negative start and an end past the dim.
const char* kRotary = R"(graph @main(%x: tensor<2x3x8xf32>, %cos: tensor<3x8xf32>, %sin: tensor<3x8xf32>) {
  %x1 = slice (%x) {starts = [0], ends = [4], axes = [-1]} : tensor<2x3x4xf32>
  %x2 = slice (%x) {starts = [-4], ends = [1000], axes = [2]} : tensor<2x3x4xf32>
  %n = neg (%x2) : tensor<2x3x4xf32>
  %r = concat (%n, %x1) {axis = -1} : tensor<2x3x8xf32>
  %a = mul (%x, %cos) : tensor<2x3x8xf32>
  %b = mul (%r, %sin) : tensor<2x3x8xf32>
  %y = add (%a, %b) : tensor<2x3x8xf32>
  return %y as "y"
}
)";

TEST(RotateHalf, ConcatOfNegatedHalvesBecomesAnIndexMapAndASign) {
  Graph g = rewritten_and_checked(kRotary);
  EXPECT_EQ(count_ops(g, OpKind::Concat), 0);
  EXPECT_EQ(count_ops(g, OpKind::Slice), 0);
  EXPECT_EQ(count_ops(g, OpKind::Neg), 0);
  EXPECT_EQ(count_ops(g, OpKind::Reverse), 1);
  EXPECT_NE(print_graph(g).find("dense<[-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0]>"), std::string::npos);
}

TEST(RotateHalf, OtherConcatsStay) {
  auto concats_after = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return count_ops(rewritten_and_checked(text), OpKind::Concat);
  };
  // The halves in the other order (no negation first).
  EXPECT_EQ(concats_after(kRotary, "concat (%n, %x1)", "concat (%x1, %n)"), 1);
  // Unequal parts, x[..., 3:] and x[..., :3], do not swap halves.
  const char* uneven = R"(graph @main(%x: tensor<2x3x8xf32>) {
  %x1 = slice (%x) {starts = [0], ends = [3], axes = [-1]} : tensor<2x3x3xf32>
  %x2 = slice (%x) {starts = [3], ends = [8], axes = [-1]} : tensor<2x3x5xf32>
  %n = neg (%x2) : tensor<2x3x5xf32>
  %r = concat (%n, %x1) {axis = -1} : tensor<2x3x8xf32>
  return %r as "r"
}
)";
  EXPECT_EQ(count_ops(rewritten_and_checked(uneven), OpKind::Concat), 1);
  // Along another axis.
  const char* other_axis = R"(graph @main(%x: tensor<4x3xf32>) {
  %x1 = slice (%x) {starts = [0], ends = [2], axes = [0]} : tensor<2x3xf32>
  %x2 = slice (%x) {starts = [2], ends = [4], axes = [0]} : tensor<2x3xf32>
  %n = neg (%x2) : tensor<2x3xf32>
  %r = concat (%n, %x1) {axis = 0} : tensor<4x3xf32>
  return %r as "r"
}
)";
  EXPECT_EQ(count_ops(rewritten_and_checked(other_axis), OpKind::Concat), 1);
}

}  // namespace
}  // namespace vkc::ir
