// Precision fp16x3: float32 matrix products on the fp16 tensor-core loop, each operand as two
// float16 pieces (CoopTile::split, shaders/gemm_coopmat.glsl SPLIT). Plans on the profiles (no GPU
// needed), and results against the float64 reference at float32's tolerance on a device with
// cooperative matrices (the GPU machine; lavapipe has none, so there the device tests skip and
// say so).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
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

// Grids under one wave of SMs split K and add the slices in a reduce dispatch: ViT-B/16 b8's output
// projection (78 tiles, K 768) and second MLP product (K 3072) in 3 slices of 2 x 2-subgroup
// tiles (two workgroups per SM), BERT-base b8's (48 tiles) in 2 of 2 x 4 and 4 of 2 x 2; ViT's
// in-projection (234 tiles) and first MLP product (312) stay unsplit, and 512 rows (24 tiles,
// under a quarter wave) stay on the FMA loop. The forced form "/kSPLIT" is checked like the FMA
// loop's.
TEST(Fp16x3Plan, ProductsUnderOneWaveSplitK) {
  for (const auto& [m_rows, k, n, split, wn] :
       {std::tuple{1576, 768, 768, 3, 2}, {1576, 3072, 768, 3, 2}, {1576, 768, 2304, 1, 2}, {1576, 768, 3072, 1, 4},
        {1024, 768, 768, 2, 4}, {1024, 3072, 768, 4, 2}}) {
    SCOPED_TRACE(cat(m_rows, "x", n, "x", k));
    const ModuleImage m = compile_for(f32_matmul({m_rows, k}, {k, n}, false), "nvidia", Precision::fp16x3);
    const DispatchDesc& d = product(m);
    EXPECT_EQ(d.tiles.at("subgroups_n"), wn);
    EXPECT_EQ(d.tiles.at("fp16_pieces"), 1);
    if (split == 1) {
      EXPECT_EQ(d.kernel, "matmul_coopmat");
      EXPECT_EQ(m.manifest.dispatches.size(), 1u);
      continue;
    }
    EXPECT_EQ(d.kernel, "matmul_coopmat_split_k");
    EXPECT_EQ(d.tiles.at("split_k"), split);
    EXPECT_EQ(d.tiles.at("workgroups"), (m_rows + 127) / 128 * 6 * split);
    ASSERT_EQ(m.manifest.dispatches.size(), 2u);
    EXPECT_EQ(m.manifest.dispatches[1].kernel, "matmul_split_k_reduce");
    EXPECT_NE(m.manifest.dispatches[1].strategy.find(cat("K in ", split, " slices")), std::string::npos);
  }
  EXPECT_EQ(product(compile_for(f32_matmul({512, 768}, {768, 768}, false), "nvidia", Precision::fp16x3)).tiles.count("fp16_pieces"),
            0u);
  const ir::Graph g = f32_matmul({200, 328}, {328, 264}, false);
  EXPECT_EQ(product(compile_for(g, "nvidia", Precision::fp16x3, {{"matmul", "coopmat=128x128x32/2x2/k4"}})).tiles.at("split_k"), 4);
  for (const auto& [tile, why] : {std::pair{"128x128x32/2x2/k12", "fewer than 12 slices"},
                                  {"128x128x32/2x2/k", "is not TMxTNxTK/WMxWN[/sSTAGES][/kSPLIT]"},
                                  {"128x128x32/2x2/k0", "is not TMxTNxTK/WMxWN[/sSTAGES][/kSPLIT]"}}) {
    try {
      compile_for(g, "nvidia", Precision::fp16x3, {{"matmul", cat("coopmat=", tile)}});
      ADD_FAILURE() << tile << " compiled";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  // float16 operands: the plain loop has no split.
  ir::Graph h;
  ir::Value* a = h.add_input("a", {DType::f16, {256, 192}});
  ir::Value* b = h.add_input("b", {DType::f16, {192, 320}});
  h.add_output(h.add_op(ir::OpKind::MatMul, {a, b}, {}, "mm")->result(), "y");
  try {
    compile_for(h, "nvidia", Precision::fp32, {{"matmul", "coopmat=128x128x32/2x2/k2"}});
    ADD_FAILURE() << "compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("only float32 pieces split K"), std::string::npos) << e.what();
  }
}

// The pieces' relative L2 error (operands uniform in [-scale, scale)). Measured on the H200
// (session 37, bench/RESULTS.md): 2.8e-7 to 1.3e-6 at scales 1 and 1e2, 1.9e-6 to 2.2e-6 at 1e-3,
// 1.9e-4 at 1e-5; bench/pieces_error_sim.py gives the same at 1e-3 and 1e-5 from the pieces alone,
// and 1.9e-5 at 1e-4. Unscaled (session 36): 4.2e-5 at 1e-3 (lo pieces float16 subnormals) and
// 4.2e-4 at 1e-4; 2.7e-4 at scale 1 with the lo pieces lost (a driver that folded
// x - float(float16(x)) to 0). float32's loop: about 1e-7.
constexpr double kRelativeL2Bound = 5e-6;
// Operands near 1e-4: A's lo pieces (A scaled by 16) are float16 subnormals there.
constexpr double kRelativeL2BoundSmall = 5e-5;

// sqrt(sum (y - ref)^2 / sum ref^2): the figure docs/api.md gives for the pieces' products.
double relative_l2(const HostTensor& y, const HostTensor& ref) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double d = y.get_f64(i) - ref.get_f64(i);
    diff += d * d;
    norm += ref.get_f64(i) * ref.get_f64(i);
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

class Fp16x3Gpu : public ::testing::TestWithParam<Form> {
 protected:
  void SetUp() override {
    if (!device_has(GetParam())) GTEST_SKIP() << no_form_reason(GetParam());
  }
  GpuRunOptions options() const {
    // The elementwise bound is the bound for whole models against PyTorch fp32; the
    // relative L2 error has its own (kRelativeL2Bound).
    GpuRunOptions o;
    o.rel_tol = 1e-4;
    keep_only(o, GetParam());
    o.precision = Precision::fp16x3;
    return o;
  }
};

// B N-fast and K-fast, A K-fast and M-fast, batched, partial tiles in M, N and K, A through a fused prologue, forced
// tiles of 128 and 256 invocations, K split in 2 and 3 slices; operands scaled by 1e-3 (unscaled, lo
// pieces would be float16 subnormals), 1e-4 (A's are, even scaled) and 1e2 (within B's scaled range, 255).
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
                                         // K split (11 steps: slices of 3, 4 and 4, the last partial)
                                         {{200, 328}, {328, 264}, false, true, "128x128x32/2x2/k3"},
                                         {{136, 328}, {264, 328}, true, false, "128x128x32/2x4/k2"},
                                         {{96, 136}, {96, 80}, false, false, "", true}}) {
    for (double scale : {1.0, 1e-3, 1e2, 1e-4}) {
      ir::Graph g = f32_matmul(c.a, c.b, c.tb, c.relu, c.ta);
      SCOPED_TRACE(cat("a", shape_str(c.a), " b", shape_str(c.b), " tile '", c.tile, "' scale ", scale));
      std::map<std::string, HostTensor> in = random_inputs(g, seed++);
      for (auto& [name, t] : in)
        for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, t.get_f64(i) * scale);
      GpuRunOptions o = options();
      o.abs_tol = 1e-7 * scale * scale;
      // Forced: unforced, NVIDIA takes the pieces only for grids of at least half a wave of 128 x 128
      // tiles (a quarter, split over K).
      o.forced_strategy["matmul"] = c.tile.empty() ? "coopmat" : "coopmat=" + c.tile;
      GpuRun run = run_on_gpu(g, in, o);
      // Printed for the record (the bound below is elementwise): how the error moves with the
      // operands' scale says where it comes from.
      const double l2 = relative_l2(run.outputs.at("y"), run.reference.at("y"));
      std::printf("[fp16x3] a%s b%s tile '%s' scale %g: relative L2 error %.2e\n", shape_str(c.a).c_str(),
                  shape_str(c.b).c_str(), c.tile.c_str(), scale, l2);
      EXPECT_LT(l2, scale < 1e-3 ? kRelativeL2BoundSmall : kRelativeL2Bound);
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
  for (const char* forced : {"coopmat", "coopmat=128x128x32/2x2/k2"}) {  // unsplit, and each slice alone
    SCOPED_TRACE(forced);
    GpuRunOptions o = options();
    o.forced_strategy["matmul"] = forced;
    GpuRun run = run_on_gpu(g, in, o);
    EXPECT_EQ(product(run.module).tiles.at("fp16_pieces"), 1);
    EXPECT_TRUE(outputs_match(run, options()));
  }
}

// Values within float16's range but not once scaled (shaders/gemm_coopmat.glsl: A x 16, B x 256)
// and none beyond it: the tiles they reach take the float32 loop too, not an overflow; the other
// tiles stay on the pieces (1e-4 elementwise, as fp32).
TEST_P(Fp16x3Gpu, ValuesBeyondTheScaledRangeGiveFloat32Results) {
  ir::Graph g = f32_matmul({200, 256}, {256, 136}, false);
  std::map<std::string, HostTensor> in = random_inputs(g, 320);
  in.at("a").set_f64(3 * 256 + 7, 5000.0);  // row 3: the tiles of rows 0-127 (or 0-63)
  in.at("a").set_f64(3 * 256 + 100, -30000.0);
  in.at("b").set_f64(9 * 136 + 130, 300.0);  // column 130: the tiles of columns 128-135
  for (const char* forced : {"coopmat", "coopmat=128x128x32/2x2/k2", "coopmat=64x64x32/2x2"}) {
    SCOPED_TRACE(forced);
    GpuRunOptions o = options();
    o.forced_strategy["matmul"] = forced;
    GpuRun run = run_on_gpu(g, in, o);
    EXPECT_EQ(product(run.module).tiles.at("fp16_pieces"), 1);
    EXPECT_TRUE(outputs_match(run, o));
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, Fp16x3Gpu, ::testing::Values(Form::khr, Form::nv),
                         [](const ::testing::TestParamInfo<Form>& i) { return i.param == Form::khr ? "KHR" : "NV"; });

}  // namespace
}  // namespace vkc::test
