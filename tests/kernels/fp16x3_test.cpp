// Precision fp16x3: float32 matrix products on the fp16 tensor-core loop, each operand as two
// float16 pieces (CoopTile::split, shaders/gemm_coopmat.glsl SPLIT). Plans on the profiles (no GPU
// needed), and results against the float64 reference at float32's tolerance on a device with
// cooperative matrices (the GPU machine; lavapipe has none, so there the device tests skip and
// say so).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "kernels/coopmat_forms.h"
#include "kernels/op_test_helpers.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

// y = a x b (b [N, K] when transposed, a [K, M] when transpose_a), float32; with `relu_a`, A comes
// through a fused prologue (gathered 8 values at a time instead of read in place).
ir::Graph f32_matmul(Shape a, Shape b, bool transpose_b, bool relu_a = false, bool transpose_a = false) {
  ir::Graph g;
  ir::Value* av = g.add_input("a", {DType::f32, a});
  ir::Value* bv = g.add_input("b", {DType::f32, b});
  if (relu_a) av = g.add_op(ir::OpKind::Relu, {av}, {}, "relu")->result();
  ir::AttrMap attrs;
  if (transpose_b) attrs["transpose_b"] = true;
  if (transpose_a) attrs["transpose_a"] = true;
  g.add_output(g.add_op(ir::OpKind::MatMul, {av, bv}, attrs, "mm")->result(), "y");
  return g;
}

const DispatchDesc& product(const ModuleImage& m) {
  for (const DispatchDesc& d : m.manifest.dispatches)
    if (d.kernel.rfind("matmul", 0) == 0) return d;
  throw Error("no matmul dispatch");
}

ModuleImage compile_for(const ir::Graph& g, const std::string& target, Precision p,
                        std::map<std::string, std::string> forced = {}) {
  codegen::CompileOptions o;
  o.target = find_target(target).limits;
  o.precision = p;
  o.forced_strategy = std::move(forced);
  return codegen::compile_graph(g, o);
}

TEST(Fp16x3Plan, Fp32ProductsTakeTensorCoresOnlyInThatPrecisionAndWhereTheTargetHasThem) {
  const ir::Graph g = f32_matmul({1576, 768}, {768, 2304}, false);
  const DispatchDesc pieces = product(compile_for(g, "nvidia", Precision::fp16x3));
  EXPECT_EQ(pieces.kernel, "matmul_coopmat");
  EXPECT_EQ(pieces.tiles.at("fp16_pieces"), 1);
  EXPECT_NE(pieces.strategy.find("fp16x3 tensor cores"), std::string::npos) << pieces.strategy;
  // Four operand tiles (hi and lo of A [m][k] and of B [k][n], rows padded by 8 halves) and the
  // range flag; the scratch lies in A's tiles. The compiler re-measures it from the SPIR-V.
  const int64_t tm = pieces.tiles.at("tile_m"), tn = pieces.tiles.at("tile_n"), tk = pieces.tiles.at("tile_k");
  EXPECT_EQ(int64_t(pieces.workgroup_memory_bytes), 2 * 2 * (tm * (tk + 8) + tk * (tn + 8)) + 4);
  EXPECT_EQ(product(compile_for(g, "nvidia", Precision::fp32)).kernel, "matmul_tiled");
  // No cooperative matrices (lavapipe), or no runs of 8 along K (70): the float32 loop, no error.
  EXPECT_EQ(product(compile_for(g, "lavapipe", Precision::fp16x3)).kernel, "matmul_tiled");
  EXPECT_NE(product(compile_for(f32_matmul({100, 70}, {70, 90}, false), "nvidia", Precision::fp16x3)).kernel,
            "matmul_coopmat");
  // Float16 products in that precision keep the plain fp16 loop.
  ir::Graph h;
  ir::Value* a = h.add_input("a", {DType::f16, {256, 192}});
  ir::Value* b = h.add_input("b", {DType::f16, {192, 320}});
  h.add_output(h.add_op(ir::OpKind::MatMul, {a, b}, {}, "mm")->result(), "y");
  EXPECT_EQ(product(compile_for(h, "nvidia", Precision::fp16x3)).tiles.count("fp16_pieces"), 0u);
}

TEST(Fp16x3Plan, ForcingItWhereTheLayoutCannotStageItNamesTheReason) {
  try {
    compile_for(f32_matmul({100, 70}, {70, 90}, false), "nvidia", Precision::fp32, {{"matmul", "coopmat"}});
    FAIL() << "compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("float32 operands need runs of 8"), std::string::npos) << e.what();
  }
}

class Fp16x3Gpu : public ::testing::TestWithParam<Form> {
 protected:
  void SetUp() override {
    if (!device_has(GetParam())) GTEST_SKIP() << no_form_reason(GetParam());
  }
  GpuRunOptions options() const {
    // Relative (L2) error 4.3e-5 on the H200 (float32's loop: about 1e-7), 2.7e-4 with the lo
    // pieces lost (what a driver that folded x - float(float16(x)) to 0 gave): the bound tells
    // them apart. It is the bound for whole models against PyTorch fp32.
    GpuRunOptions o;
    o.rel_tol = 1e-4;
    keep_only(o, GetParam());
    o.precision = Precision::fp16x3;
    return o;
  }
};

// B N-fast and K-fast, A K-fast and M-fast, batched, partial tiles in M, N and K, A through a fused prologue, forced
// tiles of 128 and 256 invocations; operands scaled by 1e-3 (lo pieces float16 subnormals) and 1e3.
TEST_P(Fp16x3Gpu, Fp32MatmulsMatchTheReference) {
  uint32_t seed = 300;
  struct Case {
    Shape a, b;
    bool tb, relu;
    std::string tile;
    bool ta = false;  // A staged M-fast
  };
  for (const Case& c : std::vector<Case>{{{256, 192}, {192, 320}, false, false, ""},
                                         {{100, 72}, {56, 72}, true, false, ""},
                                         {{3, 40, 64}, {64, 24}, false, false, ""},
                                         {{200, 328}, {328, 264}, false, true, ""},
                                         {{200, 328}, {328, 264}, false, false, "128x128x32/2x4"},
                                         {{130, 256}, {256, 72}, false, false, "64x64x32/2x2"},
                                         {{96, 136}, {96, 80}, false, false, "", true}}) {
    for (double scale : {1.0, 1e-3, 1e3}) {
      ir::Graph g = f32_matmul(c.a, c.b, c.tb, c.relu, c.ta);
      SCOPED_TRACE(cat("a", shape_str(c.a), " b", shape_str(c.b), " tile '", c.tile, "' scale ", scale));
      std::map<std::string, HostTensor> in = random_inputs(g, seed++);
      for (auto& [name, t] : in)
        for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, t.get_f64(i) * scale);
      GpuRunOptions o = options();
      o.abs_tol = 1e-7 * scale * scale;
      // Forced: unforced, NVIDIA takes the pieces only for grids of half a wave of 128 x 128 tiles.
      o.forced_strategy["matmul"] = c.tile.empty() ? "coopmat" : "coopmat=" + c.tile;
      GpuRun run = run_on_gpu(g, in, o);
      EXPECT_EQ(product(run.module).tiles.at("fp16_pieces"), 1) << product(run.module).strategy;
      EXPECT_TRUE(declares(run.module, GetParam()));
      EXPECT_TRUE(outputs_match(run, o));
    }
  }
}

// Values float16 cannot hold (1e5, inf, NaN) in some tiles: those tiles take the float32 loop and
// give float32's results (inf and NaN where the reference has them, the large sums exact to
// float32's tolerance); the other tiles stay on the pieces.
TEST_P(Fp16x3Gpu, ValuesBeyondFloat16sRangeGiveFloat32Results) {
  ir::Graph g = f32_matmul({200, 256}, {256, 136}, false);
  std::map<std::string, HostTensor> in = random_inputs(g, 310);
  HostTensor& a = in.at("a");
  a.set_f64(3 * 256 + 7, 1e5);  // row 3
  a.set_f64(150 * 256 + 0, -7e4);  // row 150
  a.set_f64(90 * 256 + 255, std::numeric_limits<double>::infinity());  // row 90
  in.at("b").set_f64(100 * 136 + 130, std::numeric_limits<double>::quiet_NaN());  // column 130
  GpuRunOptions o = options();
  o.forced_strategy["matmul"] = "coopmat";
  GpuRun run = run_on_gpu(g, in, o);
  EXPECT_EQ(product(run.module).tiles.at("fp16_pieces"), 1);
  EXPECT_TRUE(outputs_match(run, options()));
}

INSTANTIATE_TEST_SUITE_P(Forms, Fp16x3Gpu, ::testing::Values(Form::khr, Form::nv),
                         [](const ::testing::TestParamInfo<Form>& i) { return i.param == Form::khr ? "KHR" : "NV"; });

}  // namespace
}  // namespace vkc::test
