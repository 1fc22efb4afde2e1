// An out-of-bounds access planted in a kernel, caught by Vulkan robustness
// (ContextOptions::robust_buffer_access). The manifest shrinks the arena tensor that one dispatch
// writes and the next reads to 16 of its 64 elements, so both kernels run past the end of that
// binding. With robustBufferAccess2 the stray writes are dropped and the stray reads give zero,
// which makes the result exactly predictable: the test checks every element, so an access that
// escaped its binding (a write that landed, a read that saw it) shows up as a wrong number.
//
// This is the CI check for planted out-of-bounds accesses: the Debian 12 validation layer
// (1.3.239) checks buffer bounds in GPU-assisted mode only on devices with descriptor indexing,
// which lavapipe (Mesa 22.3) lacks (see gpu_assisted_hostile_test.cpp and docs/reliability.md).
#include <gtest/gtest.h>

#include <memory>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "hostile/hostile_util.h"
#include "ir/interpreter.h"
#include "ir/text_format.h"
#include "runtime/runtime.h"

namespace vkc::hostile {
namespace {

constexpr const char* kReluTranspose =
    "graph @g(%x: tensor<8x8xf32>) {\n"
    "  %t = relu (%x) : tensor<8x8xf32>\n"
    "  %y = transpose (%t) {perm = [1, 0]} : tensor<8x8xf32>\n"
    "  return %y as \"y\"\n}\n";

std::unique_ptr<rt::Context> robust_context() {
  rt::ContextOptions options;
  options.robust_buffer_access = true;
  return std::make_unique<rt::Context>(options);
}

TEST(HostileRobustAccess, PlantedOutOfBoundsAccessIsContained) {
  std::unique_ptr<rt::Context> ctx = robust_context();
  ASSERT_EQ(ctx->robustness(), rt::Robustness::BufferAccess2)
      << "this device offers only " << rt::robustness_name(ctx->robustness())
      << ", whose stray accesses are not predictable";
  const uint64_t align = std::max<uint64_t>(ctx->robust_storage_alignment(), 1);
  ASSERT_EQ(64 % align, 0u) << "bounds rounded to " << align << " bytes would cover the planted overrun";

  codegen::CompileOptions o;
  o.target = ctx->limits();
  ModuleImage m = codegen::compile_graph(ir::parse_graph(kReluTranspose), o);
  TensorDesc* t = nullptr;
  for (TensorDesc& d : m.manifest.tensors)
    if (d.role == TensorRole::Intermediate && d.view_of.empty()) t = &d;
  ASSERT_NE(t, nullptr) << "relu and transpose were fused: no arena tensor to shrink";
  t->shape = {16};

  std::map<std::string, HostTensor> inputs = test::random_inputs(ir::parse_graph(kReluTranspose), 7);
  const HostTensor& x = inputs.at("x");
  rt::Program program(*ctx, m);
  rt::ExecuteOptions run;
  run.poison_outputs = true;
  HostTensor y = program.execute(inputs, run).at("y");

  // relu wrote t[0..16) and nothing else; transpose read zeros for t[16..64).
  int mismatches = 0;
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      int i = c * 8 + r;  // y[r][c] = t[c][r]
      double expect = i < 16 ? std::max(0.0, x.get_f64(i)) : 0.0;
      double got = y.get_f64(r * 8 + c);
      if (got != expect && mismatches++ < 5)
        ADD_FAILURE() << "y[" << r << "][" << c << "] = " << got << ", expected " << expect;
    }
  EXPECT_EQ(mismatches, 0);
  EXPECT_TRUE(ctx->validation_messages().empty());
}

// Robust access changes nothing for a correct module: the same numbers as the reference.
TEST(HostileRobustAccess, CorrectModuleRunsUnchanged) {
  std::unique_ptr<rt::Context> ctx = robust_context();
  EXPECT_NE(ctx->robustness(), rt::Robustness::None);
  ir::Graph g = ir::parse_graph(
      "graph @g(%x: tensor<1x3x12x12xf32>, %w: tensor<4x3x3x3xf32>) {\n"
      "  %c = conv (%x, %w) {pads = [1, 1, 1, 1]} : tensor<1x4x12x12xf32>\n"
      "  %r = relu (%c) : tensor<1x4x12x12xf32>\n"
      "  %p = max_pool (%r) {kernel = [2, 2], strides = [2, 2]} : tensor<1x4x6x6xf32>\n"
      "  return %p as \"p\"\n}\n");
  std::map<std::string, HostTensor> inputs = test::random_inputs(g, 11);
  codegen::CompileOptions o;
  o.target = ctx->limits();
  rt::Program program(*ctx, codegen::compile_graph(g, o));
  rt::ExecuteOptions run;
  run.poison_outputs = true;
  HostTensor p = program.execute(inputs, run).at("p");
  HostTensor ref = ir::interpret(g, inputs).at("p");
  ASSERT_EQ(p.numel(), ref.numel());
  for (int64_t i = 0; i < p.numel(); ++i)
    ASSERT_NEAR(p.get_f64(i), ref.get_f64(i), 1e-5 * (1 + std::abs(ref.get_f64(i)))) << "element " << i;
}

}  // namespace
}  // namespace vkc::hostile
