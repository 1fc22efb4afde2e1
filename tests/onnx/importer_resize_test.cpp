// Resize / Upsample / MaxPool-with-Indices import: the IR ops the importer builds (sizes, scales,
// modes, axes, keep_aspect_ratio_policy, roi), the imported models on the device against the
// reference, and one-line errors for bad scales and sizes naming the node, op and operand.
#include <gtest/gtest.h>

#include "common/gpu_harness.h"
#include "onnx/importer.h"
#include "onnx_model_builder.h"
#include "support/error.h"
#include "support/npy.h"

namespace vkc::test {
namespace {

const ir::Op* only_op(const ir::Graph& g, ir::OpKind kind) {
  const ir::Op* found = nullptr;
  for (const ir::Op* op : g.ops())
    if (op->kind == kind) {
      EXPECT_EQ(found, nullptr) << "more than one " << ir::op_name(kind);
      found = op;
    }
  EXPECT_NE(found, nullptr) << "no " << ir::op_name(kind);
  return found;
}

void expect_runs_like_reference(const ir::Graph& g, uint32_t seed) {
  GpuRun run = run_on_gpu(g, random_inputs(g, seed));
  EXPECT_TRUE(outputs_match(run, {{}, 1e-5, 1e-6, "", {}}));
}

TEST(OnnxResize, LinearWithScalesKeepsTheScaleForTheTransform) {
  OnnxModel m(13);
  m.input("x", {1, 2, 4, 5});
  m.initializer("scales", {4}, {1, 1, 0.6f, 1.7f});
  auto* r = m.node("Resize", {"x", "", "scales"}, {"y"}, "rs");
  OnnxModel::attr_string(r, "mode", "linear");
  OnnxModel::attr_string(r, "coordinate_transformation_mode", "align_corners");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("resize_linear")));
  const ir::Op* op = only_op(g, ir::OpKind::Resize);
  EXPECT_EQ(op->name, "rs");
  // floor(4 * 0.6) = 2, floor(5 * 1.7) = 8; the float scales are kept bit-exactly.
  EXPECT_EQ(op->attr_ints("sizes"), (std::vector<int64_t>{1, 2, 2, 8}));
  EXPECT_EQ(op->attr_floats("scales"), (std::vector<double>{1, 1, double(0.6f), double(1.7f)}));
  EXPECT_EQ(op->attr_string("coordinate_mode"), "align_corners");
  expect_runs_like_reference(g, 3);
}

TEST(OnnxResize, SizesWithAxesAndKeepAspectRatio) {
  OnnxModel m(18);
  m.input("x", {1, 3, 6, 8});
  m.initializer_i64("sizes", {9, 9});
  auto* r = m.node("Resize", {"x", "", "", "sizes"}, {"y"});
  OnnxModel::attr_string(r, "mode", "cubic");
  OnnxModel::attr_ints(r, "axes", {2, -1});
  OnnxModel::attr_string(r, "keep_aspect_ratio_policy", "not_larger");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("resize_aspect")));
  const ir::Op* op = only_op(g, ir::OpKind::Resize);
  // not_larger: one scale min(9/6, 9/8) = 1.125 for H and W: round(6.75) = 7, 9.
  EXPECT_EQ(op->attr_ints("sizes"), (std::vector<int64_t>{1, 3, 7, 9}));
  EXPECT_EQ(op->attr_floats("scales"), (std::vector<double>{1, 1, 1.125, 1.125}));
  expect_runs_like_reference(g, 4);
}

TEST(OnnxResize, NearestFromSizesTakesOutOverIn) {
  OnnxModel m(19);
  m.input("x", {1, 1, 3, 4});
  m.initializer_i64("sizes", {1, 1, 7, 3});
  auto* r = m.node("Resize", {"x", "", "", "sizes"}, {"y"});
  OnnxModel::attr_string(r, "nearest_mode", "ceil");
  OnnxModel::attr_string(r, "coordinate_transformation_mode", "half_pixel_symmetric");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("resize_nearest_sizes")));
  const ir::Op* op = only_op(g, ir::OpKind::Resize);
  EXPECT_FALSE(op->has_attr("scales"));
  EXPECT_EQ(op->attr_string("nearest_mode"), "ceil");
  expect_runs_like_reference(g, 5);
}

TEST(OnnxResize, CropAndResizeSpreadsRoiOverAxes) {
  OnnxModel m(18);
  m.input("x", {1, 2, 6, 6});
  m.initializer("roi", {4}, {0.1f, -0.2f, 0.8f, 1.3f});
  m.initializer_i64("sizes", {5, 7});
  auto* r = m.node("Resize", {"x", "roi", "", "sizes"}, {"y"});
  OnnxModel::attr_string(r, "mode", "linear");
  OnnxModel::attr_string(r, "coordinate_transformation_mode", "tf_crop_and_resize");
  OnnxModel::attr_ints(r, "axes", {2, 3});
  OnnxModel::attr_float(r, "extrapolation_value", 4.0f);
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("resize_crop")));
  const ir::Op* op = only_op(g, ir::OpKind::Resize);
  EXPECT_EQ(op->attr_floats("roi"), (std::vector<double>{0, 0, double(0.1f), double(-0.2f), 1, 1,
                                                         double(0.8f), double(1.3f)}));
  expect_runs_like_reference(g, 6);
}

TEST(OnnxResize, UpsampleIsAsymmetric) {
  OnnxModel m(9);
  m.input("x", {1, 2, 3, 3});
  m.initializer("scales", {4}, {1, 1, 2.5f, 2});
  auto* u = m.node("Upsample", {"x", "scales"}, {"y"});
  OnnxModel::attr_string(u, "mode", "linear");
  m.output("y");
  ir::Graph g = onnx::import_model(m.write(scratch_dir("upsample")));
  const ir::Op* op = only_op(g, ir::OpKind::Resize);
  EXPECT_EQ(op->attr_string("coordinate_mode"), "asymmetric");
  EXPECT_EQ(op->result()->type.shape, (Shape{1, 2, 7, 6}));
  expect_runs_like_reference(g, 7);
}

TEST(OnnxMaxPool, IndicesOutputAndStorageOrder) {
  for (int64_t order : {0, 1}) {
    OnnxModel m(12);
    m.input("x", {1, 2, 5, 6});
    auto* p = m.node("MaxPool", {"x"}, {"y", "idx"}, "mp");
    OnnxModel::attr_ints(p, "kernel_shape", {2, 3});
    OnnxModel::attr_ints(p, "strides", {2, 2});
    OnnxModel::attr_ints(p, "pads", {1, 1, 0, 1});
    OnnxModel::attr_int(p, "storage_order", order);
    m.output("y");
    m.output("idx", 7);  // INT64
    ir::Graph g = onnx::import_model(m.write(scratch_dir("maxpool_indices")));
    const ir::Op* op = only_op(g, ir::OpKind::MaxPoolWithIndices);
    EXPECT_EQ(op->attr_int("storage_order"), order);
    GpuRun run = run_on_gpu(g, random_inputs(g, 8));
    EXPECT_TRUE(outputs_match(run));
    EXPECT_EQ(run.outputs.at("idx").dtype(), DType::i64);
  }
}

TEST(OnnxResize, BadScalesAndSizesAreOneLineErrors) {
  auto model = [](const std::string& dir, const std::vector<float>& scales,
                  const std::vector<int64_t>& sizes) {
    OnnxModel m(13);
    m.input("x", {1, 1, 4, 4});
    std::vector<std::string> inputs{"x", ""};
    if (!scales.empty()) {
      m.initializer("scales", {int64_t(scales.size())}, scales);
      inputs.push_back("scales");
    } else {
      inputs.push_back("");
    }
    if (!sizes.empty()) {
      m.initializer_i64("sizes", sizes);
      inputs.push_back("sizes");
    }
    m.node("Resize", inputs, {"y"}, "bad");
    m.output("y");
    return m.write(scratch_dir(dir));
  };
  std::string p = model("rs_neg", {1, 1, -2, 2}, {});
  EXPECT_EQ(import_error(p), p + ": cannot import 1 item: node 'bad' (Resize): input 2 'scales' entry 2 "
                                 "is -2, expected a finite value > 0");
  p = model("rs_count", {1, 2}, {});
  EXPECT_EQ(import_error(p), p + ": cannot import 1 item: node 'bad' (Resize): input 2 'scales' has 2 "
                                 "entries, expected 4 (one per input dim)");
  p = model("rs_tiny", {1, 1, 0.1f, 1}, {});
  EXPECT_EQ(import_error(p), p + ": cannot import 1 item: node 'bad' (Resize): input 2 'scales' entry 2 "
                                 "is 0.1: it resizes dim 2 of size 4 to 0 elements, expected 1 to 2^40");
  p = model("rs_size0", {}, {1, 1, 0, 4});
  EXPECT_EQ(import_error(p), p + ": cannot import 1 item: node 'bad' (Resize): input 3 'sizes' entry 2 "
                                 "is 0, expected >= 1");
  p = model("rs_both", {1, 1, 2, 2}, {1, 1, 8, 8});
  EXPECT_EQ(import_error(p), p + ": cannot import 1 item: node 'bad' (Resize): input 2 'scales' and "
                                 "input 3 'sizes' are both given; exactly one is allowed");
  p = model("rs_none", {}, {});
  EXPECT_EQ(import_error(p), p + ": cannot import 1 item: node 'bad' (Resize): neither input 'scales' "
                                 "nor input 'sizes' is given");
}

// ONNX allowzero = 1 keeps a 0 in the target shape as a zero-size dim: zero-element tensors go
// through import, compilation (no dispatch: nothing to write), the runtime and .npy files.
TEST(OnnxReshape, AllowZeroRunsZeroElementTensorsEndToEnd) {
  OnnxModel m(14);
  m.input("x", {0, 3, 4});
  m.initializer_i64("shape", {3, 4, 0});
  auto* r = m.node("Reshape", {"x", "shape"}, {"r"});
  OnnxModel::attr_int(r, "allowzero", 1);
  m.node("Relu", {"r"}, {"y"});
  m.output("y");
  std::string dir = scratch_dir("reshape_allowzero");
  ir::Graph g = onnx::import_model(m.write(dir));
  EXPECT_EQ(g.outputs()[0].value->type.shape, (Shape{3, 4, 0}));
  GpuRun run = run_on_gpu(g, random_inputs(g, 1));
  EXPECT_TRUE(outputs_match(run));
  EXPECT_EQ(run.outputs.at("y").shape(), (Shape{3, 4, 0}));
  EXPECT_TRUE(run.module.manifest.dispatches.empty()) << "a zero-element result needs no dispatch";
  write_npy(dir + "/y.npy", run.outputs.at("y"));
  HostTensor back = read_npy(dir + "/y.npy");
  EXPECT_EQ(back.shape(), (Shape{3, 4, 0}));
  EXPECT_EQ(back.dtype(), DType::f32);
  // Without allowzero, 0 copies the input dim: [0, 3, 4] -> [0, 4, 3] has the same zero elements.
  OnnxModel copy(14);
  copy.input("x", {0, 3, 4});
  copy.initializer_i64("shape", {0, 4, 3});
  copy.node("Reshape", {"x", "shape"}, {"y"});
  copy.output("y");
  ir::Graph g2 = onnx::import_model(copy.write(scratch_dir("reshape_copyzero")));
  EXPECT_EQ(g2.outputs()[0].value->type.shape, (Shape{0, 4, 3}));
}

}  // namespace
}  // namespace vkc::test
