// ir::rotate_half_pass: concat(-x[..., h:], x[..., :h]) becomes the halves swapped by index maps
// times a sign; the rewritten graph computes the same values (reference interpreter, both graphs),
// and other concats stay.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace vkc::ir {
namespace {

int count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Op* op : g.ops()) n += op->kind == kind;
  return n;
}

Graph rewritten_and_checked(const std::string& text) {
  Graph before = parse_graph(text), after = parse_graph(text);
  PassManager pm;
  pm.add(rotate_half_pass());
  pm.run(after);
  verify_graph(after);
  std::map<std::string, HostTensor> inputs;
  for (const Value* v : before.inputs()) {
    HostTensor t(v->type.dtype, v->type.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, std::sin(1.3 * double(i) + 0.2));
    inputs.emplace(v->name, std::move(t));
  }
  std::map<std::string, HostTensor> want = interpret(before, inputs), got = interpret(after, inputs);
  for (const auto& [name, w] : want) {
    const HostTensor& o = got.at(name);
    EXPECT_EQ(o.shape(), w.shape()) << name;
    for (int64_t i = 0; i < w.numel() && o.shape() == w.shape(); ++i) EXPECT_EQ(o.get_f64(i), w.get_f64(i)) << name << i;
  }
  return after;
}

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
  EXPECT_EQ(count(g, OpKind::Concat), 0);
  EXPECT_EQ(count(g, OpKind::Slice), 0);
  EXPECT_EQ(count(g, OpKind::Neg), 0);
  EXPECT_EQ(count(g, OpKind::Reverse), 1);
  EXPECT_NE(print_graph(g).find("dense<[-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0]>"), std::string::npos);
}

TEST(RotateHalf, OtherConcatsStay) {
  auto concats_after = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return count(rewritten_and_checked(text), OpKind::Concat);
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
  EXPECT_EQ(count(rewritten_and_checked(uneven), OpKind::Concat), 1);
  // Along another axis.
  const char* other_axis = R"(graph @main(%x: tensor<4x3xf32>) {
  %x1 = slice (%x) {starts = [0], ends = [2], axes = [0]} : tensor<2x3xf32>
  %x2 = slice (%x) {starts = [2], ends = [4], axes = [0]} : tensor<2x3xf32>
  %n = neg (%x2) : tensor<2x3xf32>
  %r = concat (%n, %x1) {axis = 0} : tensor<4x3xf32>
  return %r as "r"
}
)";
  EXPECT_EQ(count(rewritten_and_checked(other_axis), OpKind::Concat), 1);
}

}  // namespace
}  // namespace vkc::ir
