// Named fusion regressions: the grouped-conv input gradient written in two orders, the
// conv + bias + relu + quantize chain per target, and the quantized conv under the minimum budget.
#include <gtest/gtest.h>

#include "codegen/compiler.h"
#include "fusion/fusion_test_support.h"
#include "ir/interpreter.h"
#include "ir/passes.h"

namespace vkc::test {
namespace {

using ir::OpKind;

std::vector<std::string> op_kinds_after_pipeline(const ir::Graph& input) {
  ir::Graph g = input.clone();
  codegen::default_pass_pipeline({}).run(g);
  std::vector<std::string> kinds;
  for (const ir::Op* op : g.ops()) kinds.emplace_back(ir::op_name(op->kind));
  return kinds;
}

// A production compiler planned ordering (b) of this gradient with a reshape that did not fold
// through the elementwise (pad) op and blew the workgroup memory (592944 > 65536 bytes). Here both
// orders canonicalize to the same graph, compile to the same single conv dispatch on every
// profile, and match the reference and the conv_transpose that defines the gradient.
TEST(FusionRegression, GroupedConvInputGradientBothOrderings) {
  ir::Graph a = fusion_input("grouped_conv_backward_pad_then_expand.vkir");
  ir::Graph b = fusion_input("grouped_conv_backward_expand_then_pad.vkir");
  EXPECT_EQ(op_kinds_after_pipeline(a), op_kinds_after_pipeline(b));

  for (const std::string& target : known_targets()) {
    ModuleImage ma = compile_for(a, target), mb = compile_for(b, target);
    EXPECT_TRUE(within_limits(ma));
    EXPECT_TRUE(within_limits(mb));
    EXPECT_EQ(ma.manifest.dispatches.size(), mb.manifest.dispatches.size()) << target;
    EXPECT_EQ(ma.manifest.dispatches.size(), 1u) << target << "\n" << all_notes(ma);
  }

  std::map<std::string, HostTensor> in = random_inputs(a, 21);
  GpuRun ra = run_on_gpu(a, in), rb = run_on_gpu(b, in);
  EXPECT_TRUE(outputs_match(ra));
  EXPECT_TRUE(outputs_match(rb));
  EXPECT_EQ(ra.module.manifest.dispatches.size(), 1u);
  // The formulation really is the input gradient: conv_transpose(dy, w), groups 2, pad 1.
  ir::Graph t;
  ir::Value* dy = t.add_input("dy", {DType::f32, {1, 8, 6, 6}});
  ir::Value* w = t.add_input("w", {DType::f32, {8, 3, 3, 3}});
  t.add_output(t.add_op(OpKind::ConvTranspose, {dy, w},
                        {{"groups", int64_t(2)}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}})
                   ->result(),
               "dx");
  HostTensor expected = ir::interpret(t, in).at("dx");
  Comparison c = compare(ra.outputs.at("dx"), expected, 1e-4, 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
  c = compare(rb.outputs.at("dx"), expected, 1e-4, 1e-5);
  EXPECT_TRUE(c.ok) << c.message;
}

TEST(FusionRegression, ConvBiasReluQuantizeIsOneDispatchOnNvidiaAndSplitsOnVulkanMin) {
  ir::Graph g = fusion_input("conv_bias_relu_quantize.vkir");
  ModuleImage nv = compile_for(g, "nvidia");
  ASSERT_EQ(nv.manifest.dispatches.size(), 1u) << all_notes(nv);
  EXPECT_EQ(nv.manifest.dispatches[0].ops.size(), 3u);
  const std::string& fused = nv.manifest.dispatches[0].notes;
  EXPECT_NE(fused.find("fused epilogue: relu 'relu'"), std::string::npos) << fused;
  EXPECT_NE(fused.find("quantize 'quant'"), std::string::npos) << fused;

  // vulkan-min binds 4 storage buffers; x, w, b, the per-channel scale and the result are 5.
  ModuleImage min = compile_for(g, "vulkan-min");
  EXPECT_TRUE(within_limits(min));
  ASSERT_EQ(min.manifest.dispatches.size(), 2u) << all_notes(min);
  const std::string& notes = min.manifest.dispatches[0].notes;
  EXPECT_NE(notes.find("quantize 'quant'"), std::string::npos) << notes;
  EXPECT_NE(notes.find("not fused: the fused dispatch would bind 5 storage buffers, target 'vulkan-min' allows 4"),
            std::string::npos)
      << notes;
  EXPECT_NE(codegen::format_report(min.manifest).find("not fused"), std::string::npos);

  std::map<std::string, HostTensor> in = random_inputs(g, 4);
  for (int64_t i = 0; i < in["s"].numel(); ++i) in["s"].set_f64(i, 0.02 + 0.01 * double(i));
  for (const char* target : {"", "vulkan-min"}) {  // lavapipe fuses like nvidia (8-bit storage)
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(g, in, o);
    EXPECT_TRUE(outputs_match(run, o)) << target;
  }
}

// conv [1,64,512,512] x [256,64,3,3], pad 1, between an int8 dequantize (per-tensor activations,
// per-channel weights) and an int8 quantize. The f32 result alone (256 MiB) is beyond vulkan-min's
// maxStorageBufferRange: only the fused epilogue, which never materializes it, compiles there.
// relu: a relu between the conv and its quantize keeps the float form (the QDQ rewrite to
// conv_integer takes the plain form only; docs/int8.md), whose fusion these tests pin.
ir::Graph quantized_conv(int64_t size, bool relu = false) {
  ir::Graph g;
  ir::Value* xq = g.add_input("xq", {DType::i8, {1, 64, size, size}});
  HostTensor sx(DType::f32, {}), sy(DType::f32, {}), wq(DType::i8, {256, 64, 3, 3}), sw(DType::f32, {256});
  sx.set_f64(0, 0.05);
  sy.set_f64(0, 0.5);
  std::mt19937 rng(7);
  for (int64_t i = 0; i < wq.numel(); ++i) wq.set_i64(i, int64_t(rng() % 31) - 15);
  for (int64_t i = 0; i < sw.numel(); ++i) sw.set_f64(i, 0.001 * double(1 + i % 7));
  ir::Value* x = g.add_op(OpKind::Dequantize, {xq, g.add_constant(sx, "sx")}, {}, "dq_x")->result();
  ir::Value* w = g.add_op(OpKind::Dequantize, {g.add_constant(wq, "wq"), g.add_constant(sw, "sw")},
                          {{"axis", int64_t(0)}}, "dq_w")->result();
  ir::Value* y = g.add_op(OpKind::Conv, {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv")->result();
  if (relu) y = g.add_op(OpKind::Relu, {y}, {}, "relu")->result();
  g.add_output(g.add_op(OpKind::Quantize, {y, g.add_constant(sy, "sy")}, {}, "q_y")->result(), "yq");
  return g;
}

TEST(FusionRegression, QuantizedConvBudgetAllProfiles) {
  ir::Graph big = quantized_conv(512, true);
  for (const std::string& target : known_targets()) {
    ModuleImage m = compile_for(big, target);
    EXPECT_TRUE(within_limits(m));
    ASSERT_EQ(m.manifest.dispatches.size(), 1u) << target << "\n" << all_notes(m);
    EXPECT_NE(m.manifest.dispatches[0].notes.find("prologue: dequantize 'dq_x'"), std::string::npos) << target;
  }
  ir::Graph small = quantized_conv(64, true);
  std::map<std::string, HostTensor> in = random_inputs(small, 5);  // ints in [-8, 8]
  for (const char* target : {"", "vulkan-min"}) {  // vulkan-min: packed 8-bit reads and stores
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(small, in, o);
    EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
    // Integer outputs compare exactly in outputs_match; here a value may differ by one where the
    // f32 accumulation order moves a quotient across a rounding tie, and almost never does.
    const HostTensor& got = run.outputs.at("yq");
    const HostTensor& want = run.reference.at("yq");
    int64_t differ = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      int64_t d = std::abs(got.get_i64(i) - want.get_i64(i));
      EXPECT_LE(d, 1) << target << " element " << i;
      differ += d != 0;
    }
    EXPECT_LT(differ, got.numel() / 1000) << target;
  }
}

// The plain QDQ form of the same conv becomes conv_integer + requantization (docs/int8.md): within
// every profile's limits at the seed size (the i32 sums split by output channels where a binding
// cannot hold them), on int8 tensor cores where the profile lists an i8 shape (nvidia, amd-rdna3,
// amd-rdna4), and exact against the reference of the rewritten graph.
TEST(FusionRegression, QuantizedConvIntegerFormAllProfiles) {
  ir::Graph big = quantized_conv(512);
  for (const std::string& target : known_targets()) {
    ModuleImage m = compile_for(big, target);
    EXPECT_TRUE(within_limits(m));
    const bool int8_product = target == "nvidia" || target == "amd-rdna3" || target == "amd-rdna4";
    const std::string kernel = int8_product ? "conv_integer_coopmat" : "conv_integer";
    bool integer = false;
    for (const DispatchDesc& d : m.manifest.dispatches) integer |= d.kernel == kernel;
    EXPECT_TRUE(integer) << target << "\n" << all_notes(m);
  }
  ir::Graph small = quantized_conv(64);
  ir::PassManager pm;
  pm.add(ir::qdq_to_integer_pass());
  pm.run(small);
  std::map<std::string, HostTensor> in = random_inputs(small, 5);
  for (const char* target : {"", "vulkan-min"}) {  // vulkan-min: packed 8-bit reads and stores
    GpuRunOptions o;
    o.target = target;
    GpuRun run = run_on_gpu(small, in, o);
    EXPECT_TRUE(outputs_match(run, o)) << target;  // integers: exactly
  }
}

}  // namespace
}  // namespace vkc::test
