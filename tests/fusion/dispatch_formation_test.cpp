// Dispatch formation for pooling, reductions and matmul (no GPU): IR in text form -> which ops
// each dispatch group holds, and why a fusion was refused.
#include <gtest/gtest.h>

#include "codegen/dispatch_group.h"
#include "fusion/fusion_test_support.h"
#include "ir/text_format.h"
#include "module/target_profiles.h"

namespace vkc::test {
namespace {

std::string notes_of(const std::string& text, const std::string& target = "lavapipe") {
  ir::Graph g = ir::parse_graph(text);
  std::string s;
  for (const codegen::DispatchGroup& d : codegen::form_dispatch_groups(g, find_target(target).limits))
    s += d.notes + "\n";
  return s;
}

TEST(PoolFusionFormation, MaxPoolReluQuantizeIsOneGroup) {
  const char* ir = R"(graph @g(%x: tensor<1x4x8x8xf32>) {
    %s = constant "s" {value = dense<[0.05]> : tensor<f32>} : tensor<f32>
    %p = max_pool "mp" (%x) {kernel = [2, 2], strides = [2, 2]} : tensor<1x4x4x4xf32>
    %r = relu "r" (%p) : tensor<1x4x4x4xf32>
    %q = quantize "q" (%r, %s) {to = "u8"} : tensor<1x4x4x4xu8>
    return %q as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[mp+r+q]");
  EXPECT_NE(notes_of(ir).find("fused epilogue: relu 'r'"), std::string::npos) << notes_of(ir);
}

TEST(PoolFusionFormation, DequantizeAndPadFuseIntoPoolPrologue) {
  // A pad op is an index map whose value is data: the pool never sees its own padding rule for
  // it, so pad -> max_pool stays exact and fuses.
  const char* ir = R"(graph @g(%xq: tensor<1x3x6x6xu8>) {
    %s = constant "s" {value = dense<[0.1]> : tensor<f32>} : tensor<f32>
    %x = dequantize "dq" (%xq, %s) : tensor<1x3x6x6xf32>
    %p = pad "pad" (%x) {pads = [0, 0, 1, 1, 0, 0, 1, 1], value = -2.0} : tensor<1x3x8x8xf32>
    %m = max_pool "mp" (%p) {kernel = [3, 3]} : tensor<1x3x6x6xf32>
    return %m as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[dq+pad+mp]");
}

TEST(PoolFusionFormation, GlobalAvgPoolAddAndElementwisePrologue) {
  const char* ir = R"(graph @g(%x: tensor<2x8x5x5xf32>, %y: tensor<2x8x5x5xf32>, %b: tensor<2x8x1x1xf32>) {
    %s = sub "sub" (%x, %y) : tensor<2x8x5x5xf32>
    %a = abs "abs" (%s) : tensor<2x8x5x5xf32>
    %p = avg_pool "gap" (%a) {global = true} : tensor<2x8x1x1xf32>
    %o = add "add" (%p, %b) : tensor<2x8x1x1xf32>
    return %o as "out"
  })";
  EXPECT_EQ(groups_of(ir), "[sub+abs+gap+add]");
}

TEST(PoolFusionFormation, ProducerWithAnotherUseStaysMaterialized) {
  const char* ir = R"(graph @g(%x: tensor<1x2x6x6xf32>) {
    %r = relu "r" (%x) : tensor<1x2x6x6xf32>
    %p = max_pool "mp" (%r) {kernel = [2, 2]} : tensor<1x2x5x5xf32>
    %n = neg "n" (%p) : tensor<1x2x5x5xf32>
    return %n as "y", %r as "relu_out"
  })";
  EXPECT_EQ(groups_of(ir), "[r] [mp+n]");
}

TEST(PoolFusionFormation, IntegerPoolTakesNoEpilogue) {
  // An i8 max pool's result is not the f32 accumulator the epilogue takes.
  const char* ir = R"(graph @g(%x: tensor<1x2x4x4xi8>) {
    %p = max_pool "mp" (%x) {kernel = [2, 2], strides = [2, 2]} : tensor<1x2x2x2xi8>
    %c = cast "c" (%p) {to = "f32"} : tensor<1x2x2x2xf32>
    %r = relu "r" (%c) : tensor<1x2x2x2xf32>
    return %r as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[mp] [c+r]");
}

TEST(ReductionFusionFormation, ReduceMeanMulAddIsOneGroup) {
  const char* ir = R"(graph @g(%x: tensor<4x16xf32>, %w: tensor<4x1xf32>) {
    %b = constant "b" {value = dense<[0.5]> : tensor<f32>} : tensor<f32>
    %m = reduce_mean "mean" (%x) {axes = [1]} : tensor<4x1xf32>
    %p = mul "mul" (%m, %w) : tensor<4x1xf32>
    %o = add "add" (%p, %b) : tensor<4x1xf32>
    return %o as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[mean+mul+add]");
}

TEST(ReductionFusionFormation, SoftmaxTakesPrologueAndEpilogue) {
  const char* ir = R"(graph @g(%x: tensor<3x40xf32>, %t: tensor<3x40xf32>) {
    %d = div "scale" (%x, %t) : tensor<3x40xf32>
    %s = softmax "sm" (%d) : tensor<3x40xf32>
    %l = log "log" (%s) : tensor<3x40xf32>
    return %l as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[scale+sm+log]");
}

TEST(ReductionFusionFormation, ArgMaxTakesAPrologueButNoEpilogue) {
  const char* ir = R"(graph @g(%xq: tensor<5x7xi8>) {
    %s = constant "s" {value = dense<[0.25]> : tensor<f32>} : tensor<f32>
    %x = dequantize "dq" (%xq, %s) : tensor<5x7xf32>
    %a = argmax "am" (%x) {axis = 1} : tensor<5x1xi64>
    %c = cast "c" (%a) {to = "f32"} : tensor<5x1xf32>
    return %c as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[dq+am] [c]");
}

TEST(ReductionFusionFormation, IntegerReductionAndBroadcastProducersStaySeparate) {
  // The i32 sum keeps its own store; exp(b) would run once per element of the larger add, so
  // only the add joins the reduction's prologue.
  const char* ir = R"(graph @g(%x: tensor<4x8xi32>, %y: tensor<4x8xf32>, %b: tensor<8xf32>) {
    %s = reduce_sum "isum" (%x) {axes = [1]} : tensor<4x1xi32>
    %n = neg "ineg" (%s) : tensor<4x1xi32>
    %e = exp "exp" (%b) : tensor<8xf32>
    %a = add "add" (%y, %e) : tensor<4x8xf32>
    %m = reduce_max "fmax" (%a) {axes = [1]} : tensor<4x1xf32>
    return %n as "ints", %m as "floats"
  })";
  EXPECT_EQ(groups_of(ir), "[isum] [ineg] [exp] [add+fmax]");
}

TEST(MatmulFusionFormation, DequantizeMatmulBiasReluIsOneGroup) {
  const char* ir = R"(graph @g(%x: tensor<16x32xf32>, %wq: tensor<32x24xi8>, %bias: tensor<24xf32>) {
    %s = constant "s" {value = dense<[0.02]> : tensor<f32>} : tensor<f32>
    %w = dequantize "dq" (%wq, %s) : tensor<32x24xf32>
    %y = matmul "mm" (%x, %w) : tensor<16x24xf32>
    %a = add "bias" (%y, %bias) : tensor<16x24xf32>
    %r = relu "relu" (%a) : tensor<16x24xf32>
    return %r as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[dq+mm+bias+relu]");
}

TEST(MatmulFusionFormation, ElementwiseFusesUnlessRecomputedOnEveryColumn) {
  // M = 4: the naive kernel reads each element of A once per output column (512 times), each of
  // B once per row (4 times). tanh(a) is stored once by its own dispatch; gelu(b) is fused.
  const char* ir = R"(graph @g(%a: tensor<4x32xf32>, %b: tensor<32x512xf32>) {
    %ta = tanh "ta" (%a) : tensor<4x32xf32>
    %gb = gelu "gb" (%b) : tensor<32x512xf32>
    %y = matmul "mm" (%ta, %gb) : tensor<4x512xf32>
    return %y as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[ta] [gb+mm]");
  std::string notes = notes_of(ir);
  EXPECT_NE(notes.find("fused prologue: gelu 'gb'"), std::string::npos) << notes;
  EXPECT_NE(notes.find("tanh 'ta' (<input>:2:11) not fused: matmul 'mm' (<input>:4:10) reads each element of its "
                       "operand 512 times"),
            std::string::npos)
      << notes;
}

TEST(MatmulFusionFormation, ConvTakesNoElementwisePrologue) {
  // Conv's prologue stays index maps, casts and dequantize (its kernels re-read each input
  // element once per filter tap and output channel).
  const char* ir = R"(graph @g(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>) {
    %r = relu "r" (%x) : tensor<1x2x6x6xf32>
    %c = conv "c" (%r, %w) : tensor<1x4x4x4xf32>
    return %c as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[r] [c]");
}

TEST(FusionBudget, PoolEpilogueSplitsOnVulkanMinBindings) {
  // Per-channel dequantize (input, scale, zero point), a residual and a per-channel quantize:
  // 6 storage buffers in one dispatch. lavapipe binds 32, vulkan-min 4: there the dequantize is
  // left out, which keeps the most ops fused (x, the residual, the scale and y).
  const char* ir = R"(graph @g(%xq: tensor<1x4x6x6xu8>, %sx: tensor<4xf32>, %zx: tensor<4xu8>, %res: tensor<1x4x3x3xf32>, %sy: tensor<4xf32>) {
    %x = dequantize "dq" (%xq, %sx, %zx) : tensor<1x4x6x6xf32>
    %p = avg_pool "ap" (%x) {kernel = [2, 2], strides = [2, 2]} : tensor<1x4x3x3xf32>
    %a = add "res" (%p, %res) : tensor<1x4x3x3xf32>
    %q = quantize "q" (%a, %sy) {to = "u8"} : tensor<1x4x3x3xu8>
    return %q as "y"
  })";
  EXPECT_EQ(groups_of(ir), "[dq+ap+res+q]");
  EXPECT_EQ(groups_of(ir, "vulkan-min"), "[dq] [ap+res+q]");
  std::string notes = notes_of(ir, "vulkan-min");
  EXPECT_NE(notes.find("dequantize 'dq' (<input>:2:10) not fused: the fused dispatch would bind 6 storage buffers, "
                       "target 'vulkan-min' allows 4"),
            std::string::npos)
      << notes;
}

}  // namespace
}  // namespace vkc::test
