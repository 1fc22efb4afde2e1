// The fp16 precision mode on the device (lavapipe: the SIMT kernels): every example model and a
// transformer-style block stay within the documented bound, max abs error over max abs output
// <= 5e-3 against the float64 reference of the original graph; the casts that keep the inputs
// and outputs f32 fuse into the first and last kernels (no extra dispatch).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/gpu_harness.h"
#include "ir/text_format.h"
#include "support/file_io.h"

namespace vkc::test {
namespace {

using ir::OpKind;

double relative_max_error(const GpuRun& run) {
  double err = 0, ref = 0;
  for (const auto& [name, r] : run.reference) {
    const HostTensor& a = run.outputs.at(name);
    EXPECT_EQ(a.dtype(), r.dtype()) << name << ": outputs keep the model's dtype";
    for (int64_t i = 0; i < r.numel(); ++i) {
      double x = a.get_f64(i), y = r.get_f64(i);
      if (std::isnan(x) || std::isnan(y)) return INFINITY;
      err = std::max(err, std::abs(x - y));
      ref = std::max(ref, std::abs(y));
    }
  }
  return ref > 0 ? err / ref : err;
}

int f16_tensors(const Manifest& m) {
  int n = 0;
  for (const TensorDesc& t : m.tensors) n += t.dtype == DType::f16;
  return n;
}

ir::Graph example(const std::string& name) {
  const std::string path = std::string(VKC_SOURCE_DIR) + "/examples/" + name;
  return ir::parse_graph(read_text_file(path), path);
}

GpuRunOptions fp16() {
  GpuRunOptions o;
  o.precision = Precision::fp16;
  return o;
}

TEST(PrecisionE2E, EveryExampleWithinTheBound) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(VKC_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".vkir") continue;
    ir::Graph g = example(entry.path().filename().string());
    GpuRun run = run_on_gpu(g, random_inputs(g, 7), fp16());
    double e = relative_max_error(run);
    EXPECT_LE(e, 5e-3) << entry.path().filename();
    EXPECT_EQ(run.module.manifest.precision, Precision::fp16);
    ++models;
  }
  EXPECT_GE(models, 4);
}

TEST(PrecisionE2E, SmallConvnetStoresF16AndAddsNoDispatch) {
  ir::Graph g = example("small_convnet.vkir");
  GpuRun f32 = run_on_gpu(g, random_inputs(g, 3));
  GpuRun f16 = run_on_gpu(g, random_inputs(g, 3), fp16());
  EXPECT_LE(relative_max_error(f16), 5e-3);
  EXPECT_EQ(f16_tensors(f32.module.manifest), 0);
  EXPECT_GE(f16_tensors(f16.module.manifest), 4);  // weights and activations
  const auto& d16 = f16.module.manifest.dispatches;
  ASSERT_EQ(d16.size(), f32.module.manifest.dispatches.size());
  // The input's cast is the first kernel's prologue, the output's the last kernel's epilogue.
  EXPECT_EQ(d16.front().ops.front().rfind("cast", 0), 0u) << d16.front().ops.front();
  EXPECT_EQ(d16.back().ops.back().rfind("cast", 0), 0u) << d16.back().ops.back();
  EXPECT_EQ(f16.module.manifest.tensor(f16.module.manifest.inputs[0]).dtype, DType::f32);
  EXPECT_EQ(f16.module.manifest.tensor(f16.module.manifest.outputs[0]).dtype, DType::f32);
}

// An embedding x = input * W0, then x -> matmul(W1) + b1 -> gelu -> matmul(W2) -> + x -> layer_norm
// -> matmul -> softmax: contractions with f16 storage, the normalization and softmax in f32.
ir::Graph mlp_block(int64_t tokens, int64_t width, int64_t hidden) {
  ir::Graph g;
  std::mt19937 rng(5);
  auto weights = [&](Shape shape, double scale) {
    HostTensor t(DType::f32, shape);
    std::uniform_real_distribution<double> d(-scale, scale);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, d(rng));
    return g.add_constant(t);
  };
  ir::Value* input = g.add_input("x", {DType::f32, {tokens, width}});
  ir::Value* x = g.add_op(OpKind::MatMul, {input, weights({width, width}, 1.0 / std::sqrt(double(width)))})->result();
  ir::Value* h = g.add_op(OpKind::MatMul, {x, weights({width, hidden}, 1.0 / std::sqrt(double(width)))})->result();
  h = g.add_op(OpKind::Add, {h, weights({hidden}, 0.1)})->result();
  h = g.add_op(OpKind::Gelu, {h})->result();
  h = g.add_op(OpKind::MatMul, {h, weights({hidden, width}, 1.0 / std::sqrt(double(hidden)))})->result();
  h = g.add_op(OpKind::Add, {h, x})->result();
  h = g.add_op(OpKind::LayerNorm, {h, weights({width}, 1.0), weights({width}, 0.1)})->result();
  ir::Value* logits = g.add_op(OpKind::MatMul, {h, weights({width, 10}, 0.5)})->result();
  ir::Value* probs = g.add_op(OpKind::Softmax, {logits}, {{"axis", int64_t(-1)}})->result();
  g.add_output(logits, "logits");
  g.add_output(probs, "probs");
  return g;
}

TEST(PrecisionE2E, TransformerMlpBlockWithinTheBound) {
  ir::Graph g = mlp_block(48, 96, 192);
  GpuRun run = run_on_gpu(g, random_inputs(g, 11), fp16());
  EXPECT_LE(relative_max_error(run), 5e-3);
  EXPECT_GE(f16_tensors(run.module.manifest), 5);
  // The layer norm and the softmax compute in f32 (their statistics and exponentials); a cast of
  // their result to f16 for the next matmul fuses into their own kernel, so no dispatch is added
  // for it: as many dispatches as in fp32.
  GpuRun f32 = run_on_gpu(g, random_inputs(g, 11));
  EXPECT_EQ(run.module.manifest.dispatches.size(), f32.module.manifest.dispatches.size());
}

TEST(PrecisionE2E, Fp16NeedsA16BitTarget) {
  ir::Graph g = example("small_convnet.vkir");
  GpuRunOptions o = fp16();
  o.adjust_target = [](TargetLimits& t) { t.shader_float16 = false; };
  try {
    run_on_gpu(g, random_inputs(g, 1), o);
    FAIL() << "compiled fp16 for a target without shaderFloat16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("precision fp16 needs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkc::test
