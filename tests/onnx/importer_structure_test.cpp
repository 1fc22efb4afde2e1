// ONNX import: the IR it produces (op kinds, attributes, shapes, names) and its error messages.
#include <gtest/gtest.h>

#include "onnx/importer.h"
#include "onnx_model_builder.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using ir::OpKind;

std::vector<OpKind> compute_kinds(const ir::Graph& g) {
  std::vector<OpKind> kinds;
  for (const ir::Op* op : g.ops())
    if (op->kind != OpKind::Constant) kinds.push_back(op->kind);
  return kinds;
}

TEST(OnnxImport, ConvKeepsNamesResolvesAutoPadAndTreatsListedInitializersAsConstants) {
  OnnxModel m(13);
  m.input("image", {1, 2, 5, 5});
  m.input("w", {3, 2, 3, 3});  // an old exporter listing an initializer as an input
  m.initializer("w", {3, 2, 3, 3}, std::vector<float>(54, 0.5f));
  auto* conv = m.node("Conv", {"image", "w"}, {"c"}, "conv1");
  OnnxModel::attr_string(conv, "auto_pad", "SAME_UPPER");
  OnnxModel::attr_ints(conv, "strides", {2, 2});
  m.node("Relu", {"c"}, {"features"}, "relu1");
  m.output("features");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("conv_names")));
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.inputs()[0]->name, "image");
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0].name, "features");
  EXPECT_EQ(compute_kinds(g), (std::vector<OpKind>{OpKind::Conv, OpKind::Relu}));
  const ir::Op* c = g.outputs()[0].value->producer->operand(0)->producer;
  EXPECT_EQ(c->name, "conv1");
  // in 5, stride 2, kernel 3: out 3, total pad 2 -> 1 at each end.
  EXPECT_EQ(c->attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(g.outputs()[0].value->type.shape, (Shape{1, 3, 3, 3}));
}

TEST(OnnxImport, UnsupportedNodesAreListedInOneError) {
  OnnxModel m(17);
  m.input("x", {1, 2, 4, 4});
  auto* r = m.node("Resize", {"x", "", "scales"}, {"r"}, "up");
  OnnxModel::attr_string(r, "mode", "linear");
  OnnxModel::attr_int(r, "antialias", 1);
  m.initializer("scales", {4}, {1, 1, 2, 2});
  m.node("FancyOp", {"r"}, {"f"}, "fancy");
  auto* relu = m.node("Relu", {"x"}, {"y"}, "act");
  OnnxModel::attr_int(relu, "flavour", 2);
  m.output("f");
  m.output("y");
  std::string path = m.write(scratch_dir("unsupported"));
  EXPECT_EQ(import_error(path),
            path + ": cannot import 3 items: node 'up' (Resize): antialias = 1 is not supported; "
                   "node 'fancy' (FancyOp): op type is not supported; node "
                   "'act' (Relu): attribute 'flavour' is not supported");
}

TEST(OnnxImport, DynamicDimNeedsAPin) {
  OnnxModel m(17);
  m.input("x", {-1, 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::string path = m.write(scratch_dir("dynamic"));
  EXPECT_EQ(import_error(path),
            path + ": input 'x' dim 0 ('N') is dynamic; pin it with --input-shape x=D0,D1");
  onnx::ImportOptions pinned;
  pinned.input_shapes["x"] = {5, 3};
  ir::Graph g = onnx::import_model(path, pinned);
  EXPECT_EQ(g.inputs()[0]->type.shape, (Shape{5, 3}));
  pinned.input_shapes["x"] = {5, 4};
  EXPECT_EQ(import_error(path, pinned),
            path + ": --input-shape x dim 1 is 4, the model fixes it to 3");
}

TEST(OnnxImport, ShapeGatherConcatChainFoldsToAStaticReshape) {
  OnnxModel m(13);
  m.input("x", {2, 3, 4});
  m.node("Shape", {"x"}, {"s"});
  m.initializer_i64("zero", {0});
  m.node("Gather", {"s", "zero"}, {"batch"});  // [2]
  m.initializer_i64("minus_one", {-1});
  auto* cat = m.node("Concat", {"batch", "minus_one"}, {"target"});
  OnnxModel::attr_int(cat, "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"});
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("fold_shape")));
  EXPECT_EQ(compute_kinds(g), (std::vector<OpKind>{OpKind::Reshape}));
  EXPECT_EQ(g.num_ops(), 1);  // the folded constants are gone too
  EXPECT_EQ(g.outputs()[0].value->type.shape, (Shape{2, 12}));
}

TEST(OnnxImport, OldSoftmaxCoercesToTwoDimensions) {
  OnnxModel m(11);
  m.input("x", {2, 3, 4});
  m.node("Softmax", {"x"}, {"y"});  // opset 11 default axis 1: rows of 3*4
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("softmax11")));
  EXPECT_EQ(compute_kinds(g),
            (std::vector<OpKind>{OpKind::Reshape, OpKind::Softmax, OpKind::Reshape}));
  EXPECT_EQ(g.ops()[0]->attr_ints("shape"), (std::vector<int64_t>{2, 12}));
}

TEST(OnnxImport, ReshapeZeroAndMinusOneAreResolved) {
  OnnxModel m(14);
  m.input("x", {2, 3, 4});
  m.initializer_i64("shape", {0, -1});
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("reshape0")));
  EXPECT_EQ(g.ops().back()->attr_ints("shape"), (std::vector<int64_t>{2, 12}));
}

TEST(OnnxImport, IdentityOutputOfAnInputIsAView) {
  OnnxModel m(17);
  m.input("x", {4});
  m.node("Identity", {"x"}, {"y"});
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("identity")));
  EXPECT_EQ(compute_kinds(g), (std::vector<OpKind>{OpKind::Reshape}));
  EXPECT_EQ(g.outputs()[0].name, "y");
}

TEST(OnnxImport, OpsetOutsideTheRangeIsRefused) {
  OnnxModel m(22);
  m.input("x", {4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::string path = m.write(scratch_dir("opset22"));
  EXPECT_EQ(import_error(path), path + ": default-domain opset 22 is not supported (supported: 1 to 21)");
}

}  // namespace
}  // namespace vkc::test
