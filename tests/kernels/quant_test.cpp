// quantize / dequantize kernels: exact against the reference (round half to even, saturation,
// per-tensor and per-channel), through 8-bit storage and through packed words (vulkan-min).
#include <cmath>

#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

// Inputs spread over a few quantization steps around zero, plus saturating values and exact ties.
std::map<std::string, HostTensor> quant_inputs(const ir::Graph& g, uint32_t seed) {
  std::map<std::string, HostTensor> in = random_inputs(g, seed);
  HostTensor& scale = in.at("x1");
  for (int64_t i = 0; i < scale.numel(); ++i) scale.set_f64(i, 0.01 + 0.002 * double(i % 5));
  HostTensor& x = in.at("x0");
  if (is_float(x.dtype())) {
    for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, x.get_f64(i) * 2.5);
    for (int64_t i = 0; i + 7 < x.numel(); i += 7) x.set_f64(i, 0.5 * double((i / 7) % 9) - 2.0);
  }
  return in;
}

struct QuantCase {
  Shape shape;
  Shape scale;
  int64_t axis;
};

// Packed 8-bit access reads and writes whole words; the runtime binds ranges of at least 4 bytes
// but does not round larger ones up, so run the packed path only where sizes allow.
bool packable(const QuantCase& c) {
  int64_t channels = shape_numel(c.scale);
  return shape_numel(c.shape) % 4 == 0 && (channels == 1 || channels % 4 == 0);
}

class QuantTest : public ::testing::TestWithParam<QuantCase> {};

TEST_P(QuantTest, QuantizeMatchesReference) {
  const QuantCase& c = GetParam();
  for (DType to : {DType::i8, DType::u8}) {
    for (bool with_zp : {false, true}) {
      std::vector<ir::TensorType> in{f32(c.shape), f32(c.scale)};
      ir::AttrMap attrs{{"axis", c.axis}, {"to", std::string(dtype_name(to))}};
      if (with_zp) in.push_back({to, c.scale});
      ir::Graph g = one_op_graph(K::Quantize, in, attrs);
      SCOPED_TRACE(std::string(dtype_name(to)) + (with_zp ? " with zero point" : ""));
      auto inputs = quant_inputs(g, 81);
      expect_gpu_matches(g, inputs, "quantize");
      if (packable(c))  // packed words: see quant.cpp
        expect_gpu_matches(g, inputs, "quantize", "", "vulkan-min");
      expect_compiles_everywhere(g);
    }
  }
}

TEST_P(QuantTest, DequantizeMatchesReference) {
  const QuantCase& c = GetParam();
  for (DType from : {DType::i8, DType::u8, DType::i32}) {
    for (bool with_zp : {false, true}) {
      std::vector<ir::TensorType> in{{from, c.shape}, f32(c.scale)};
      if (with_zp) in.push_back({from, c.scale});
      ir::Graph g = one_op_graph(K::Dequantize, in, {{"axis", c.axis}});
      SCOPED_TRACE(std::string(dtype_name(from)) + (with_zp ? " with zero point" : ""));
      auto inputs = quant_inputs(g, 82);
      expect_gpu_matches(g, inputs, "dequantize");
      if (packable(c))
        expect_gpu_matches(g, inputs, "dequantize", "", "vulkan-min");
      expect_compiles_everywhere(g);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(QuantParams, QuantTest,
                         ::testing::Values(QuantCase{{4, 8, 5}, {}, 1},        // per tensor (rank 0)
                                           QuantCase{{3, 7}, {1}, 0},          // per tensor ([1]), odd size
                                           QuantCase{{2, 4, 3, 3}, {4}, 1},    // per channel
                                           QuantCase{{5, 8}, {8}, -1}));       // per channel, last axis

TEST(QuantKernelTest, TiesRoundHalfToEvenAndSaturate) {
  ir::Graph g = one_op_graph(K::Quantize, {f32({16}), f32({}), {DType::i8, {}}});
  HostTensor x(DType::f32, {16}), s(DType::f32, {}), zp(DType::i8, {});
  const double values[16] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, -129.5, 1e9, -1e9,
                             INFINITY, -INFINITY, NAN, 3.49999};
  for (int i = 0; i < 16; ++i) x.set_f64(i, values[i]);
  s.set_f64(0, 1.0);
  zp.set_f64(0, 0);
  std::map<std::string, HostTensor> in{{"x0", x}, {"x1", s}, {"x2", zp}};
  expect_gpu_matches(g, in, "quantize");
  expect_gpu_matches(g, in, "quantize", "", "vulkan-min");
  // Without 8-bit storage the result is written as packed words.
  codegen::CompileOptions co;
  co.target = find_target("vulkan-min").limits;
  EXPECT_EQ(codegen::compile_graph(g, co).manifest.dispatches.at(0).strategy.rfind("packed", 0), 0u);
}

}  // namespace
}  // namespace vkc::test
