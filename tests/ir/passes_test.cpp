// Unit tests of the graph passes: IR in, IR out, both in the text format.
#include <gtest/gtest.h>

#include "ir/interpreter.h"
#include "ir/passes.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace vkc::ir {
namespace {

std::string run(const std::string& text, const Pass& pass) {
  Graph g = parse_graph(text);
  PassManager pm;
  pm.add(pass);
  pm.run(g);
  verify_graph(g);
  return print_graph(g);
}

TEST(ConstantFolding, EvaluatesConstantSubgraphs) {
  std::string in = R"(graph @main(%x: tensor<2xf32>) {
  %a = constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %b = constant {value = dense<[3.0, -5.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = add (%a, %b) : tensor<2xf32>
  %d = relu (%c) : tensor<2xf32>
  %y = mul (%x, %d) : tensor<2xf32>
  return %y as "y"
}
)";
  EXPECT_EQ(run(in, constant_folding_pass()), R"(graph @main(%x: tensor<2xf32>) {
  %d = constant {value = dense<[4.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %y = mul (%x, %d) : tensor<2xf32>
  return %y as "y"
}
)");
}

TEST(ConstantFolding, DequantizedWeightsBecomeFloatConstants) {
  std::string in = R"(graph @main(%x: tensor<1x1x2x2xf32>) {
  %wq = constant {value = dense<[2, -4]> : tensor<2x1x1x1xi8>} : tensor<2x1x1x1xi8>
  %s = constant {value = dense<[0.5, 0.25]> : tensor<2xf32>} : tensor<2xf32>
  %w = dequantize (%wq, %s) {axis = 0} : tensor<2x1x1x1xf32>
  %y = conv (%x, %w) : tensor<1x2x2x2xf32>
  return %y as "y"
}
)";
  EXPECT_EQ(run(in, constant_folding_pass()), R"(graph @main(%x: tensor<1x1x2x2xf32>) {
  %w = constant {value = dense<[1.0, -1.0]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %y = conv (%x, %w) : tensor<1x2x2x2xf32>
  return %y as "y"
}
)");
}

TEST(ReshapePropagation, ReshapeOfReshapeToTheSameShapeVanishes) {
  std::string in = R"(graph @main(%x: tensor<2x6xf32>) {
  %e = expand_shape (%x) {reassociation = [[0], [1, 2]], shape = [2, 2, 3]} : tensor<2x2x3xf32>
  %c = collapse_shape (%e) {reassociation = [[0], [1, 2]]} : tensor<2x6xf32>
  %y = exp (%c) : tensor<2x6xf32>
  return %y as "y"
}
)";
  EXPECT_EQ(run(in, reshape_propagation_pass()), R"(graph @main(%x: tensor<2x6xf32>) {
  %y = exp (%x) : tensor<2x6xf32>
  return %y as "y"
}
)");
}

TEST(ReshapePropagation, PadMovesAboveAReshapeThatKeepsItsDims) {
  // Expand groups, pad the spatial dims, collapse groups == pad the original.
  std::string in = R"(graph @main(%x: tensor<1x4x3x3xf32>) {
  %e = expand_shape (%x) {reassociation = [[0], [1, 2], [3], [4]], shape = [1, 2, 2, 3, 3]} : tensor<1x2x2x3x3xf32>
  %p = pad (%e) {pads = [0, 0, 0, 1, 2, 0, 0, 0, 1, 0]} : tensor<1x2x2x5x5xf32>
  %c = collapse_shape (%p) {reassociation = [[0], [1, 2], [3], [4]]} : tensor<1x4x5x5xf32>
  return %c as "y"
}
)";
  EXPECT_EQ(run(in, reshape_propagation_pass()), R"(graph @main(%x: tensor<1x4x3x3xf32>) {
  %p = pad (%x) {pads = [0, 0, 1, 2, 0, 0, 1, 0]} : tensor<1x4x5x5xf32>
  return %p as "y"
}
)");
}

TEST(ReshapePropagation, ReverseOfAMergedDimStaysBehindTheReshape) {
  std::string in = R"(graph @main(%x: tensor<2x3xf32>) {
  %r = reshape (%x) {shape = [6]} : tensor<6xf32>
  %y = reverse (%r) {axes = [0]} : tensor<6xf32>
  return %y as "y"
}
)";
  EXPECT_EQ(run(in, reshape_propagation_pass()), in);
}

// A long chain (reshape, reshape, relu, ...) ends as all its relus on the input's shape and at most
// one reshape after them, with the interpreter's result unchanged: the one-sweep rewrite reaches
// the same fixed point as rescanning did (and in linear time: bench vkc-compile-bench reshapes).
TEST(ReshapePropagation, LongChainCancelsToOneReshapeAtMost) {
  Graph g;
  Value* v = g.add_input("x", {DType::f32, {2, 12}});
  for (int i = 0; i < 3000; ++i) {
    if (i % 3 == 2) {
      v = g.add_op(OpKind::Relu, {v})->result();
    } else {
      Shape shape = v->type.shape == Shape{2, 12} ? Shape{4, 6} : Shape{2, 12};
      v = g.add_op(OpKind::Reshape, {v}, {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}})->result();
    }
  }
  v = g.add_op(OpKind::Reshape, {v}, {{"shape", std::vector<int64_t>{24}}})->result();
  g.add_output(v, "y");
  HostTensor x(DType::f32, {2, 12});
  for (int64_t i = 0; i < 24; ++i) x.set_f64(i, double(i % 7) - 3.0);
  HostTensor before = interpret(g, {{"x", x}}).at("y");
  PassManager pm;
  pm.add(reshape_propagation_pass());
  pm.run(g);
  verify_graph(g);
  int relus = 0, reshapes = 0;
  for (const Op* op : g.ops()) {
    if (op->kind == OpKind::Relu) {
      ++relus;
      EXPECT_EQ(op->result()->type.shape, (Shape{2, 12}));
    }
    if (op->kind == OpKind::Reshape || op->kind == OpKind::ExpandShape || op->kind == OpKind::CollapseShape) ++reshapes;
  }
  EXPECT_EQ(relus, 1000);
  EXPECT_LE(reshapes, 1);
  HostTensor after = interpret(g, {{"x", x}}).at("y");
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(after.get_f64(i), before.get_f64(i)) << i;
}

TEST(FoldPadIntoConv, ZeroSpatialPadBecomesConvPads) {
  std::string in = R"(graph @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  %p = pad (%x) {pads = [0, 0, 1, 2, 0, 0, 1, 0]} : tensor<1x2x6x6xf32>
  %y = conv (%p, %w) {pads = [0, 1, 0, 1]} : tensor<1x3x4x6xf32>
  return %y as "y"
}
)";
  EXPECT_EQ(run(in, fold_pad_into_conv_pass()), R"(graph @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  %y = conv (%x, %w) {pads = [1, 3, 1, 1]} : tensor<1x3x4x6xf32>
  return %y as "y"
}
)");
}

TEST(FoldPadIntoConv, NonZeroOrChannelPadsStay) {
  std::string in = R"(graph @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) {
  %p = pad (%x) {pads = [0, 0, 1, 1, 0, 0, 1, 1], value = 1.0} : tensor<1x2x6x6xf32>
  %y = conv (%p, %w) : tensor<1x3x4x4xf32>
  return %y as "y"
}
)";
  EXPECT_EQ(run(in, fold_pad_into_conv_pass()), in);
}

TEST(FoldBatchNormIntoConv, PerChannelMulAddFoldIntoWeightsAndBias) {
  std::string in = R"(graph @main(%x: tensor<1x1x2x2xf32>) {
  %w = constant {value = dense<[1.0, 2.0]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = constant {value = dense<[0.5, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %y = conv "c" (%x, %w, %b) : tensor<1x2x2x2xf32>
  %s = constant {value = dense<[2.0, 3.0]> : tensor<1x2x1x1xf32>} : tensor<1x2x1x1xf32>
  %m = mul (%y, %s) : tensor<1x2x2x2xf32>
  %t = constant {value = dense<[10.0, 20.0]> : tensor<2x1x1xf32>} : tensor<2x1x1xf32>
  %z = add (%t, %m) : tensor<1x2x2x2xf32>
  return %z as "z"
}
)";
  std::string out = run(in, fold_batchnorm_into_conv_pass());
  EXPECT_NE(out.find("dense<[2.0, 6.0]> : tensor<2x1x1x1xf32>"), std::string::npos) << out;
  EXPECT_NE(out.find("dense<[11.0, 17.0]> : tensor<2xf32>"), std::string::npos) << out;
  EXPECT_EQ(out.find("mul"), std::string::npos) << out;
  EXPECT_EQ(out.find("add"), std::string::npos) << out;
}

TEST(FoldBatchNormIntoConv, ConvWithOtherUsersIsLeftAlone) {
  std::string in = R"(graph @main(%x: tensor<1x1x2x2xf32>) {
  %w = constant {value = dense<[1.0, 2.0]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %y = conv (%x, %w) : tensor<1x2x2x2xf32>
  %s = constant {value = dense<[2.0, 3.0]> : tensor<1x2x1x1xf32>} : tensor<1x2x1x1xf32>
  %m = mul (%y, %s) : tensor<1x2x2x2xf32>
  return %m as "m", %y as "y"
}
)";
  EXPECT_EQ(run(in, fold_batchnorm_into_conv_pass()), in);
}

}  // namespace
}  // namespace vkc::ir
