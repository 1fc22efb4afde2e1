// matmul / batch_matmul / gemm kernels: tiled and naive strategies against the reference, on the
// device and planned for the strictest profile, plus compile-only checks on every profile.
#include "codegen/kernels/contraction_plan.h"
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

struct MatmulCase {
  Shape a, b;
  bool ta = false, tb = false;
};

class MatmulTest : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulTest, MatchesReferenceWithEachStrategy) {
  const MatmulCase& c = GetParam();
  ir::Graph g = one_op_graph(K::MatMul, {f32(c.a), f32(c.b)}, {{"transpose_a", c.ta}, {"transpose_b", c.tb}});
  for (const char* s : {"tiled", "dot", "naive"}) expect_gpu_matches(g, 11, "matmul", s);
}

INSTANTIATE_TEST_SUITE_P(
    MatmulShapes, MatmulTest,
    ::testing::Values(MatmulCase{{64, 32}, {32, 48}},          // one full tile
                      MatmulCase{{70, 33}, {33, 65}},          // partial edge tiles, odd K
                      MatmulCase{{3, 33, 17}, {17, 29}},       // batch broadcast of rhs
                      MatmulCase{{2, 1, 5, 7}, {3, 7, 6}},     // batch broadcast both ways
                      MatmulCase{{7}, {7, 5}},                 // 1-D lhs
                      MatmulCase{{4, 7}, {7}},                 // 1-D rhs
                      MatmulCase{{9}, {9}},                    // dot product (rank-0 result)
                      MatmulCase{{2, 30, 20}, {2, 40, 30}, true, true},
                      MatmulCase{{20, 30}, {40, 30}, false, true},
                      MatmulCase{{30, 20}, {30, 40}, true, false}));

TEST(MatmulKernelTest, BatchMatmulWithTransposes) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Shape a = ta ? Shape{3, 24, 40} : Shape{3, 40, 24}, b = tb ? Shape{3, 36, 24} : Shape{3, 24, 36};
      ir::Graph g = one_op_graph(K::BatchMatMul, {f32(a), f32(b)}, {{"transpose_a", ta}, {"transpose_b", tb}});
      for (const char* s : {"tiled", "dot", "naive"}) expect_gpu_matches(g, 5, "batch_matmul", s);
    }
}

TEST(MatmulKernelTest, GemmAlphaBetaAndBroadcastC) {
  for (Shape c : {Shape{}, Shape{40}, Shape{50, 1}, Shape{50, 40}, Shape{1, 40}}) {
    ir::Graph g = one_op_graph(K::Gemm, {f32({30, 50}), f32({40, 30}), f32(c)},
                               {{"alpha", 0.5}, {"beta", 2.0}, {"transpose_a", true}, {"transpose_b", true}});
    for (const char* s : {"tiled", "dot", "naive"}) expect_gpu_matches(g, 3, "gemm", s);
  }
  ir::Graph no_c = one_op_graph(K::Gemm, {f32({50, 30}), f32({30, 40})}, {{"alpha", -1.5}});
  for (const char* s : {"tiled", "dot", "naive"}) expect_gpu_matches(no_c, 4, "gemm", s);
}

TEST(MatmulKernelTest, HalfPrecision) {
  ir::Graph g = one_op_graph(K::MatMul, {{DType::f16, {2, 40, 24}}, {DType::f16, {24, 36}}});
  for (const char* s : {"tiled", "dot", "naive"}) expect_gpu_matches(g, 8, "matmul", s, "", 2e-3);
}

TEST(MatmulKernelTest, RunsWhenPlannedForTheMinimumProfile) {
  ir::Graph g = one_op_graph(K::MatMul, {f32({2, 100, 70}), f32({70, 90})});
  for (const char* s : {"tiled", "dot", "naive"}) expect_gpu_matches(g, 9, "matmul", s, "vulkan-min");
}

TEST(MatmulKernelTest, FitsEveryProfile) {
  ir::Graph g = one_op_graph(K::MatMul, {f32({4, 256, 128}), f32({128, 256})});
  for (const char* s : {"tiled", "dot", "naive"}) expect_compiles_everywhere(g, "matmul", s);
  ir::Graph gemm = one_op_graph(K::Gemm, {f32({64, 64}), f32({64, 64}), f32({64})});
  for (const char* s : {"tiled", "dot", "naive"}) expect_compiles_everywhere(gemm, "gemm", s);
}

TEST(MatmulKernelTest, UnknownStrategyIsAnError) {
  ir::Graph g = one_op_graph(K::MatMul, {f32({8, 8}), f32({8, 8})});
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.forced_strategy["matmul"] = "winograd";
  try {
    codegen::compile_graph(g, co);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul 'under_test'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

std::string default_strategy(const ir::Graph& g, const std::string& target) {
  codegen::CompileOptions co;
  co.target = find_target(target).limits;
  return codegen::compile_graph(g, co).manifest.dispatches.at(0).strategy;
}

TEST(MatmulKernelTest, PlannerPicksTilesPerTarget) {
  ir::Graph big = one_op_graph(ir::OpKind::MatMul, {f32({256, 128}), f32({128, 256})});
  EXPECT_EQ(default_strategy(big, "lavapipe"), "tiled 64x64x16 tile, 4x4 per invocation");
  // vulkan-min allows only 128 invocations per workgroup.
  EXPECT_EQ(default_strategy(big, "vulkan-min"), "tiled 64x32x16 tile, 4x4 per invocation");
  ir::Graph small = one_op_graph(ir::OpKind::MatMul, {f32({20, 128}), f32({128, 20})});
  // 20 x 20: every tile pads more than a quarter, so the least wasteful one (16x8 pads 20 x 20 to
  // 32 x 24), whatever the compute units: 6 workgroups of 32 invocations.
  EXPECT_EQ(default_strategy(small, "vulkan-min"), "tiled 16x8x8 tile, 2x2 per invocation");
  EXPECT_EQ(default_strategy(small, "lavapipe"), "tiled 16x8x8 tile, 2x2 per invocation");
  ir::Graph matvec = one_op_graph(ir::OpKind::MatMul, {f32({256, 128}), f32({128})});
  EXPECT_EQ(default_strategy(matvec, "lavapipe"), "dot: 8 outputs per workgroup, K in 32 slices");
  EXPECT_EQ(default_strategy(matvec, "vulkan-min"), "dot: 4 outputs per workgroup, K in 32 slices");
  ir::Graph shallow = one_op_graph(ir::OpKind::MatMul, {f32({256, 32}), f32({32})});
  EXPECT_EQ(default_strategy(shallow, "lavapipe"), "naive");
  // Vendor-tuned tiles: NVIDIA's two-stage 256x128 tile on NVIDIA only; AMD, with more workgroup
  // memory, keeps the portable 128x128 tile.
  ir::Graph square = one_op_graph(ir::OpKind::MatMul, {f32({4096, 512}), f32({512, 4096})});
  EXPECT_EQ(default_strategy(square, "nvidia"), "tiled 256x128x16 tile, 8x8 per invocation, 2 stages");
  EXPECT_EQ(default_strategy(square, "amd-rdna3"), "tiled 128x128x16 tile, 8x8 per invocation");
  EXPECT_EQ(default_strategy(square, "intel-xe"), "tiled 128x128x16 tile, 8x8 per invocation");
}

// NVIDIA's two-stage tiles, planned for this device as if NVIDIA made it (lavapipe's 32 KiB take the
// 24 KiB one, an NVIDIA GPU the 48 KiB one on 512 invocations): edge tiles in M, N and K, a batch,
// both transposes.
TEST(MatmulKernelTest, TwoStageTilesMatchTheReference) {
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) {
    t.vendor = Vendor::nvidia;
    t.compute_units = 0;  // the first tile that fits, whatever the grid
  };
  int seed = 60;
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "plain");
    // M = 480 of two 256-row tiles, N = 240 of two 128-column ones, K = 70 (a partial last slice,
    // 8- or 16-deep): edges in all three, and within the planner's 75% efficiency so that the tile
    // is taken.
    Shape a = transposed ? Shape{2, 70, 480} : Shape{2, 480, 70}, b = transposed ? Shape{240, 70} : Shape{70, 240};
    ir::Graph g = one_op_graph(K::MatMul, {f32(a), f32(b)}, {{"transpose_a", transposed}, {"transpose_b", transposed}});
    GpuRun run = run_on_gpu(g, random_inputs(g, ++seed), o);
    EXPECT_TRUE(outputs_match(run, o));
    if (split_testing()) continue;  // a range split's pieces take their own tiles
    const DispatchDesc& d = run.module.manifest.dispatches.at(0);
    EXPECT_EQ(d.tiles.count("stages") ? d.tiles.at("stages") : 0, 2) << d.strategy;
    // 256x128: on 512 invocations of 8x8 blocks where 16-deep slices fit (48 KiB), else 256 of 16x8.
    const bool deep = d.tiles.count("tile_k") && d.tiles.at("tile_k") == 16;
    EXPECT_EQ(d.tiles.count("tile_m") ? d.tiles.at("tile_m") : 0, 256) << d.strategy;
    EXPECT_EQ(d.tiles.count("reg_m") ? d.tiles.at("reg_m") : 0, deep ? 8 : 16) << d.strategy;
  }
  // The 512-invocation form of 8x8 blocks, 8-deep slices so that it fits lavapipe's 32 KiB too.
  ir::Graph mm = one_op_graph(K::MatMul, {f32({2, 480, 70}), f32({70, 240})});
  expect_gpu_matches(mm, 63, "matmul", "tiled=256x128x8/8x8/2");
}

// The FMA loop stages a plain f32 rhs ([K, N], N contiguous) in quads of 4 columns, each one
// 16-byte load and one 16-byte workgroup-memory store, where the strides allow (contraction.cpp,
// staging4). Edge tiles in N and K read zeros for whole quads; a transposed rhs (K-fast quads), a
// rhs behind a fused prologue and register blocks above 64 accumulators keep one-element loads. Each form against the
// reference on the device with a 64x64x16 tile, 4x4 per invocation (256 invocations stage 256
// quads); the GLSL also with 128x128x16, 16x8 per invocation, on each profile.
TEST(MatmulKernelTest, FourWideRhsLoadsWhereTheStridesAllow) {
  int seed = 90;
  for (const char* tile : {"tiled=64x64x16/4x4/1", "tiled=128x128x16/16x8/1"})
    for (int64_t k : {36, 34})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool relu_b : {false, true}) {
            SCOPED_TRACE(cat(tile, ", K ", k, ta ? ", transposed lhs" : "", tb ? ", transposed rhs" : "",
                             relu_b ? ", relu rhs" : ""));
            const std::map<std::string, std::string> forced{{"matmul", tile}};
            ir::Graph g;
            // M = 100 and N = 76: edge tiles in both.
            ir::Value* a = g.add_input("a", f32(ta ? Shape{k, 100} : Shape{100, k}));
            ir::Value* b = g.add_input("b", f32(tb ? Shape{76, k} : Shape{k, 76}));
            if (relu_b) b = g.add_op(K::Relu, {b}, {}, "relu")->result();
            ir::Value* y = g.add_op(K::MatMul, {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}}, "matmul")->result();
            g.add_output(y, "y");
            // The relu joins the matmul's rhs prologue (docs/fusion.md).
            const bool b4 = !relu_b && !tb && std::string(tile).find("4x4") != std::string::npos;
            for (const char* target : {"nvidia", "amd-rdna3", "intel-xe", "lavapipe"}) {
              std::string glsl = emitted_glsl(g, find_target(target).limits, forced);
              EXPECT_NE(glsl.find("void gemm_tile("), std::string::npos) << target;
              EXPECT_EQ(glsl.find("#define B_VEC 1") != std::string::npos, b4) << target;
              EXPECT_EQ(glsl.find("vec4 b_load4(uint n, uint k) {") != std::string::npos, b4) << target;
            }
            // The 16x8 block keeps the one-element loads that other tests run (and takes lavapipe
            // minutes to compile 16 times over).
            if (std::string(tile).find("16x8") != std::string::npos) continue;
            GpuRunOptions o;
            o.forced_strategy = forced;
            GpuRun run = run_on_gpu(g, random_inputs(g, ++seed), o);
            EXPECT_TRUE(outputs_match(run, o));
            if (!split_testing()) {
              EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
            }
          }
  // Batches: a rhs shared by every batch entry (batch stride 0) and one per entry (its matrix
  // size, 36 x 76, the batch stride), both four-wide.
  for (const Shape& rhs : {Shape{36, 76}, Shape{3, 36, 76}}) {
    SCOPED_TRACE(cat("batched rhs ", rhs.size() == 3));
    const std::map<std::string, std::string> forced{{"matmul", "tiled=64x64x16/4x4/1"}};
    ir::Graph g = one_op_graph(K::MatMul, {f32({3, 100, 36}), f32(rhs)});
    EXPECT_NE(emitted_glsl(g, find_target("lavapipe").limits, forced).find("#define B_VEC 1"), std::string::npos);
    GpuRunOptions o;
    o.forced_strategy = forced;
    GpuRun run = run_on_gpu(g, random_inputs(g, ++seed), o);
    EXPECT_TRUE(outputs_match(run, o));
  }
}

// Occupancy: on 132 SMs a 256 x 256 output takes tiles small enough for the most workgroups the
// tile list allows, a large one keeps the largest tile, and batches count as workgroups too.
TEST(MatmulKernelTest, SmallOutputsTakeSmallerTilesOnLargeGpus) {
  const TargetLimits& nv = find_target("nvidia").limits;
  TargetLimits blind = nv;
  blind.compute_units = 0;
  auto workgroups = [](const std::optional<codegen::SimtTile>& t, int64_t m, int64_t n, int64_t b) {
    return b * ((m + t->tm - 1) / t->tm) * ((n + t->tn - 1) / t->tn);
  };
  auto small = codegen::kernels::contraction_tile(256, 256, 512, nv);
  auto small_blind = codegen::kernels::contraction_tile(256, 256, 512, blind);
  ASSERT_TRUE(small && small_blind);
  EXPECT_GT(workgroups(small, 256, 256, 1), workgroups(small_blind, 256, 256, 1));
  // 128 x 2 tiles of 256x128 fall short of the three waves the largest tile needs; 128 x 8
  // tiles of 128x64 (NVIDIA's 128-invocation tile) do not.
  auto batched = codegen::kernels::contraction_tile(256, 256, 512, nv, 128);
  ASSERT_TRUE(batched);
  EXPECT_EQ(batched->tm * batched->tn, 128 * 64);
  EXPECT_GT(batched->tm * batched->tn, small->tm * small->tn);
  auto big = codegen::kernels::contraction_tile(4096, 4096, 512, nv);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->tm * big->tn, small_blind->tm * small_blind->tn);
  EXPECT_GE(workgroups(big, 4096, 4096, 1), int64_t(2 * nv.compute_units));
  // The tiled kernel still matches the reference with the small tiles: planned for this device as
  // if it had 132 compute units (any device runs that plan; a lavapipe-planned module would not
  // run on an NVIDIA GPU, whose subgroups are 32 wide).
  ir::Graph g = one_op_graph(ir::OpKind::MatMul, {f32({2, 40, 72}), f32({72, 36})});
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) { t.compute_units = 132; };
  GpuRun run = run_on_gpu(g, random_inputs(g, 13), o);
  EXPECT_TRUE(outputs_match(run, o));
  const DispatchDesc& d = run.module.manifest.dispatches.at(0);
  EXPECT_LE(d.tiles.at("tile_m") * d.tiles.at("tile_n"), 32 * 32) << d.strategy;
}

// The classifier head at batch 1 and 2 (Gemm with a transposed [N, K] weight: lanes walk K) and a
// row times a [K, N] matrix (lanes walk N); K deeper than a workgroup's slices and not a multiple
// of them, N not a multiple of the outputs per workgroup.
TEST(MatmulKernelTest, DotKernelThinProblems) {
  for (int64_t m : {1, 2}) {
    ir::Graph head = one_op_graph(K::Gemm, {f32({m, 300}), f32({37, 300}), f32({37})}, {{"transpose_b", true}});
    expect_gpu_matches(head, 21, "gemm", "");
    EXPECT_EQ(default_strategy(head, "lavapipe").rfind("dot:", 0), 0u) << default_strategy(head, "lavapipe");
  }
  ir::Graph row = one_op_graph(K::MatMul, {f32({1, 300}), f32({300, 45})});
  expect_gpu_matches(row, 22, "matmul", "");
  EXPECT_EQ(default_strategy(row, "lavapipe"), "dot: 32 outputs per workgroup, K in 8 slices");
  EXPECT_EQ(default_strategy(row, "vulkan-min"), "dot: 32 outputs per workgroup, K in 4 slices");
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

// A sequence-first projection ([L, B, E] x [E, F], as torchvision's ViT exports its attention's
// input projection) is one tall GEMM: the batches of thin A matrices fold into its rows, so the
// tiled kernel runs it (it ran 197 products of 8 rows through the dot kernel, 1.65 ms each on the
// H200 at batch 8). Results against the reference with each strategy; the unforced plan tiles it.
TEST(MatmulKernelTest, BatchesOfThinRowsOverASharedWeightFoldIntoOneGemm) {
  ir::Graph g = one_op_graph(K::MatMul, {f32({19, 4, 72}), f32({72, 36})});
  for (const char* s : {"", "tiled", "dot", "naive"}) expect_gpu_matches(g, 31, "matmul", s);
  EXPECT_EQ(default_strategy(g, "lavapipe").rfind("tiled", 0), 0u) << default_strategy(g, "lavapipe");
  // B with batches of its own is not shared: no fold, and the thin products stay on the dot kernel.
  ir::Graph own = one_op_graph(K::MatMul, {f32({19, 4, 72}), f32({19, 72, 36})});
  expect_gpu_matches(own, 32, "matmul", "");
  EXPECT_EQ(default_strategy(own, "lavapipe").rfind("dot:", 0), 0u) << default_strategy(own, "lavapipe");
  // A transposed A's batches are not runs of its rows: no fold, and the result still matches.
  ir::Graph ta = one_op_graph(K::MatMul, {f32({19, 72, 4}), f32({72, 36})}, {{"transpose_a", true}});
  expect_gpu_matches(ta, 33, "matmul", "");
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

// K split over workgroups: the slices' partial sums and the reduce dispatch (epilogue and fused
// store run once there) against the reference, with K not a multiple of the slices or the tile,
// batches, and gemm's alpha, beta and broadcast C. Forced, so lavapipe runs the split plans.
TEST(MatmulKernelTest, SplitKMatchesTheReference) {
  ir::Graph mm = one_op_graph(K::MatMul, {f32({2, 40, 300}), f32({2, 300, 36})});
  for (const char* s : {"tiled=32x32x16/4x4/1/k2", "tiled=32x32x16/4x4/2/k5", "tiled=16x16x8/2x2/1/k37"})
    expect_gpu_matches(mm, 41, "matmul", s);
  ir::Graph gemm = one_op_graph(K::Gemm, {f32({300, 50}), f32({40, 300}), f32({50, 1})},
                                {{"alpha", 0.5}, {"beta", 2.0}, {"transpose_a", true}, {"transpose_b", true}});
  expect_gpu_matches(gemm, 42, "gemm", "tiled=32x32x16/4x4/1/k3");
  // The plan: two dispatches, the reduce after the slices.
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.forced_strategy["matmul"] = "tiled=32x32x16/4x4/1/k3";
  ModuleImage m = codegen::compile_graph(mm, co);
  ASSERT_EQ(m.manifest.dispatches.size(), 2u);
  EXPECT_EQ(m.manifest.dispatches[0].kernel, "matmul_split_k");
  EXPECT_EQ(m.manifest.dispatches[0].tiles.at("split_k"), 3);
  EXPECT_EQ(m.manifest.dispatches[1].kernel, "matmul_split_k_reduce");
  // More slices than K steps, and a malformed tile: one-line errors naming the op.
  co.forced_strategy["matmul"] = "tiled=32x32x16/4x4/1/k40";
  EXPECT_THROW(codegen::compile_graph(mm, co), Error);
  co.forced_strategy["matmul"] = "tiled=32x32x16/4x4";
  EXPECT_THROW(codegen::compile_graph(mm, co), Error);
}

// A K-contiguous lhs staged in 4x4 blocks (four 16-byte loads into four 16-byte stores) against the
// reference: M not a multiple of 4 or of the tile, K 36 (a partial slice), plain and batched, with
// a four-wide rhs and with a transposed one. A transposed lhs (M-contiguous) keeps one-element loads.
TEST(MatmulKernelTest, LhsIn4x4BlocksWhereTheStridesAllow) {
  const std::map<std::string, std::string> forced{{"matmul", "tiled=128x64x16/8x8/1"}};
  int seed = 300;
  for (bool tb : {false, true})
    for (const Shape& a : {Shape{201, 36}, Shape{3, 130, 68}}) {
      const int64_t k = a.back();
      ir::Graph g = one_op_graph(K::MatMul, {f32(a), f32(tb ? Shape{76, k} : Shape{k, 76})}, {{"transpose_b", tb}});
      for (const char* target : {"nvidia", "amd-rdna3", "lavapipe"})
        EXPECT_NE(emitted_glsl(g, find_target(target).limits, forced).find("#define A_4X4 1"), std::string::npos)
            << target << " " << shape_str(a) << (tb ? " transposed rhs" : "");
      GpuRunOptions o;
      o.forced_strategy = forced;
      GpuRun run = run_on_gpu(g, random_inputs(g, ++seed), o);
      EXPECT_TRUE(outputs_match(run, o)) << shape_str(a) << (tb ? " transposed rhs" : "");
    }
  ir::Graph g = one_op_graph(K::MatMul, {f32({36, 201}), f32({36, 76})}, {{"transpose_a", true}});
  EXPECT_NE(emitted_glsl(g, find_target("nvidia").limits, forced).find("#define A_4X4 0"), std::string::npos);
}

// An unsplit product with a constant rhs (a model's weight) whose grid holds more than 3
// workgroups per compute unit keeps the lhs in one-element loads: inside ViT-B/16 its 4x4 blocks
// lost 10% there (H200, session 28) while an input rhs, a split product or a grid of one round
// gained. Planner's tiles (128x64x16 8x8 on nvidia's 132 compute units: 3 x 132 = 396; grids of
// whole rounds, which the balance step keeps on 128x64).
TEST(MatmulKernelTest, LhsIn4x4BlocksExceptConstantRhsOverManyRounds) {
  const TargetLimits& t = find_target("nvidia").limits;
  auto blocks = [&](int64_t m, int64_t n, int64_t k, bool constant_b) {
    ir::Graph g;
    ir::Value* a = g.add_input("a", f32({m, k}));
    ir::Value* b = nullptr;
    if (constant_b) {
      HostTensor w(DType::f32, {k, n});
      for (int64_t i = 0; i < w.numel(); ++i) w.set_f64(i, double(i % 7) - 3);
      b = g.add_constant(std::move(w));
    } else {
      b = g.add_input("b", f32({k, n}));
    }
    g.add_output(g.add_op(K::MatMul, {a, b})->result(), "y");
    const std::string glsl = emitted_glsl(g, t, {});
    EXPECT_NE(glsl.find("TM = 128u, TN = 64u"), std::string::npos) << m << "x" << n << "x" << k;
    return glsl.find("#define A_4X4 1") != std::string::npos;
  };
  EXPECT_FALSE(blocks(2048, 2112, 64, true));   // 16 x 33 = 528 workgroups, constant rhs
  EXPECT_TRUE(blocks(2048, 2112, 64, false));   // the same with the rhs an input
  EXPECT_TRUE(blocks(1024, 3072, 64, true));    // 8 x 48 = 384: one round
  EXPECT_TRUE(blocks(1536, 768, 3072, true));   // 12 x 12 = 144 tiles, K split: 576 workgroups
}

// spirv-opt's passes run on the FMA loop's kernels up to 64 accumulators per invocation and not
// above (GemmCoreShape::spirv_opt; measured per block size on the H200), for matmuls and convs.
TEST(MatmulKernelTest, SpirvOptimizerOnlyUpToSixtyFourAccumulators) {
  const TargetLimits& t = find_target("nvidia").limits;
  ir::Graph mm = one_op_graph(K::MatMul, {f32({256, 256}), f32({256, 256})});
  for (auto [tile, optimized] : {std::pair{"tiled=128x128x16/16x8/1", false}, {"tiled=128x128x16/8x8/1", true},
                                 {"tiled=64x64x16/4x4/1", true}}) {
    std::vector<codegen::EmittedKernel> ks = emitted_kernels(mm, t, {{"matmul", tile}});
    ASSERT_EQ(ks.size(), 1u) << tile;
    EXPECT_EQ(ks[0].optimize_spirv, optimized) << tile;
  }
  ir::Graph conv = one_op_graph(K::Conv, {f32({1, 64, 64, 64}), f32({256, 64, 3, 3})}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  for (auto [tile, optimized] : {std::pair{"implicit_gemm=256x128x8/16x8/2", false}, {"implicit_gemm=128x128x16/8x8/1", true}}) {
    std::vector<codegen::EmittedKernel> ks = emitted_kernels(conv, t, {{"conv", tile}});
    ASSERT_FALSE(ks.empty()) << tile;
    EXPECT_EQ(ks[0].optimize_spirv, optimized) << tile << " " << ks[0].strategy;
  }
}

// A lhs behind index maps only (ViT's sequence-first projection: a [batch, tokens, features]
// activation transposed to [tokens, batch, features]; a slice of features) is read in place through
// the composed strides, each row's offset once (contraction.cpp, lhs_view): in 4x4 blocks where the
// rows start 16-byte aligned and K is a multiple of 4, else one element at a time, and with the lhs
// staged K-fast or M-fast; against the reference on the device.
TEST(MatmulKernelTest, LhsUnderIndexMapsReadInPlace) {
  struct Case {
    Shape x;        // the activation [b, s, f]
    int64_t f0, f1;  // the features sliced, [f0, f1)
    const char* tile;
    const char* expect;  // in the GLSL
  };
  const Case cases[] = {
      {{3, 45, 36}, 0, 36, "tiled=128x64x16/8x8/1", "a_load4"},  // 16-byte rows: 4x4 blocks
      {{3, 45, 40}, 4, 36, "tiled=128x64x16/8x8/1", "a_load4"},  // a slice at an aligned offset
      {{3, 45, 38}, 1, 35, "tiled=128x64x16/8x8/1", "a_src"},    // unaligned rows: one element
      {{2, 33, 36}, 0, 36, "tiled=32x32x8/2x2/1", "a_src"},      // M-fast staging
  };
  int seed = 500;
  for (const Case& c : cases) {
    SCOPED_TRACE(cat(shape_str(c.x), " [", c.f0, ", ", c.f1, ") ", c.tile));
    ir::Graph g;
    ir::Value* x = g.add_input("x", f32(c.x));
    if (c.f0 != 0 || c.f1 != c.x[2])
      x = g.add_op(K::Slice, {x}, {{"starts", Ints{c.f0}}, {"ends", Ints{c.f1}}, {"axes", Ints{2}}})->result();
    ir::Value* t = g.add_op(K::Transpose, {x}, {{"perm", Ints{1, 0, 2}}})->result();
    ir::Value* w = g.add_input("w", f32({c.f1 - c.f0, 52}));
    g.add_output(g.add_op(K::MatMul, {t, w}, {}, "matmul")->result(), "y");
    const std::map<std::string, std::string> forced{{"matmul", c.tile}};
    const std::string glsl = emitted_glsl(g, find_target("lavapipe").limits, forced);
    EXPECT_NE(glsl.find("uint a_row(uint m)"), std::string::npos) << glsl;
    EXPECT_NE(glsl.find(c.expect), std::string::npos);
    const bool m_fast = std::string(c.tile) == "tiled=32x32x8/2x2/1";
    EXPECT_NE(glsl.find(m_fast ? "A_KFAST = 0u" : "A_KFAST = 1u"), std::string::npos);
    GpuRunOptions o;
    o.forced_strategy = forced;
    GpuRun run = run_on_gpu(g, random_inputs(g, ++seed), o);
    EXPECT_TRUE(outputs_match(run, o));
  }
}

}  // namespace
}  // namespace vkc::test
