// The fp16 tensor-core GEMM loop (shaders/gemm_coopmat.glsl): plans and SPIR-V on every profile
// that has cooperative matrices (no GPU needed), and results against the float64 reference on a
// device that has them (the GPU machine; lavapipe has none, so there these tests skip and say so).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "codegen/compiler.h"
#include "codegen/conv_planner.h"
#include "codegen/gemm_planner.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "common/gpu_harness.h"
#include "common/mobilenet_like_graph.h"
#include "ir/conv_geometry.h"
#include "kernels/coopmat_forms.h"
#include "kernels/op_test_helpers.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

struct ConvCase {
  Shape x, w;
  ir::AttrMap attrs;
  bool bias;
  // The dispatches the forced tensor-core plan compiles to: pack kernels (16-byte staging, input
  // channels per group a multiple of 8) for operands not already in the packed layout.
  std::string kernels;
  ir::OpKind kind = ir::OpKind::Conv;
};

const std::string kPackBoth = "conv_pack_input conv_pack_filter conv_implicit_gemm_coopmat ";
const std::string kGemmOnly = "conv_implicit_gemm_coopmat ";  // one-element staging, or packed in place

// Float16 convs: NCHW / NHWC (output channels innermost: results leave N-fast), OIHW / HWCF /
// FHWC filters, grouped, strided and dilated with asymmetric pads, 1-D, 3-D and transposed, sizes
// that leave partial tiles in M, N and K; 16-byte staging from packed copies or in place, and
// one-element staging (channels per group not a multiple of 8).
std::vector<ConvCase> conv_cases() {
  const std::string nhwc = "NHWC";
  return {
      {{1, 64, 20, 20}, {96, 64, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, kPackBoth},
      {{2, 20, 17, 9}, {40, 20, 3, 3}, {{"pads", Ints{0, 1, 2, 1}}, {"strides", Ints{2, 1}}, {"dilations", Ints{1, 2}}}, false, kGemmOnly},
      {{1, 13, 13, 48}, {3, 3, 48, 72}, {{"pads", Ints{1, 1, 1, 1}}, {"input_layout", nhwc},
                                         {"filter_layout", std::string("HWCF")}, {"output_layout", nhwc}}, true,
       "conv_pack_filter conv_implicit_gemm_coopmat "},
      {{2, 9, 11, 24}, {40, 3, 3, 24}, {{"pads", Ints{0, 1, 2, 1}}, {"strides", Ints{2, 1}}, {"dilations", Ints{1, 2}},
                                        {"input_layout", nhwc}, {"filter_layout", std::string("FHWC")}}, true,
       kGemmOnly},
      {{1, 64, 16, 16}, {64, 16, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}, {"groups", int64_t(4)}}, false, kPackBoth},
      // 64 channels: each K slice one tap (the loop's row hooks), with strides, dilations, uneven
      // pads, three images and a partial last M tile.
      {{3, 64, 11, 13}, {80, 64, 3, 3}, {{"pads", Ints{1, 0, 2, 1}}, {"strides", Ints{2, 1}}, {"dilations", Ints{1, 2}}},
       true, kPackBoth},
      {{2, 32, 70}, {48, 32, 5}, {{"pads", Ints{2, 2}}}, true, kPackBoth},
      {{1, 16, 6, 10, 10}, {32, 16, 3, 3, 3}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}}, false, kPackBoth},
      {{1, 32, 9, 7}, {32, 24, 4, 4}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}, {"groups", int64_t(2)}}, true,
       kPackBoth, ir::OpKind::ConvTranspose},
  };
}

ir::ConvGeometry geometry(const ConvCase& c) {
  ir::Graph probe;
  return ir::conv_geometry(
      *probe.add_op(c.kind, {probe.add_input("x", {DType::f16, c.x}), probe.add_input("w", {DType::f16, c.w})}, c.attrs));
}

ir::Graph f16_conv(const ConvCase& c) {
  ir::Graph g;
  std::vector<ir::Value*> operands{g.add_input("x", {DType::f16, c.x}), g.add_input("w", {DType::f16, c.w})};
  if (c.bias) operands.push_back(g.add_input("b", {DType::f16, {geometry(c).out_channels}}));
  g.add_output(g.add_op(c.kind, operands, c.attrs, "conv")->result(), "y");
  return g;
}

ir::Graph f16_matmul(Shape a, Shape b, bool transpose_b) {
  ir::Graph g;
  ir::Value* av = g.add_input("a", {DType::f16, a});
  ir::Value* bv = g.add_input("b", {DType::f16, b});
  ir::AttrMap attrs;
  if (transpose_b) attrs["transpose_b"] = true;
  g.add_output(g.add_op(ir::OpKind::MatMul, {av, bv}, attrs, "mm")->result(), "y");
  return g;
}

std::string strategies(const ModuleImage& m) {
  std::string s;
  for (const DispatchDesc& d : m.manifest.dispatches) s += d.kernel + " ";
  return s;
}

// Float16 matmuls whose lhs comes through a fused prologue: a transpose of the leading dims (ViT's
// sequence-first projections), GELU, a transpose that moves K (the 8 values of a gathered load
// then lie 64 elements apart in memory), and a float32 input cast to float16 (the fp16 precision
// mode's input cast).
struct PrologueCase {
  Shape a;
  int64_t n;
  enum Kind { leading_transpose, gelu, k_moved, cast } kind;
};
std::vector<PrologueCase> prologue_cases() {
  return {{{40, 3, 64}, 72, PrologueCase::leading_transpose},
          {{2, 50, 96}, 40, PrologueCase::gelu},
          {{3, 64, 48}, 24, PrologueCase::k_moved},
          {{70, 56}, 88, PrologueCase::cast}};
}
ir::Graph prologue_matmul(const PrologueCase& c) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", {c.kind == PrologueCase::cast ? DType::f32 : DType::f16, c.a});
  if (c.kind == PrologueCase::leading_transpose) a = g.add_op(ir::OpKind::Transpose, {a}, {{"perm", Ints{1, 0, 2}}})->result();
  if (c.kind == PrologueCase::gelu) a = g.add_op(ir::OpKind::Gelu, {a})->result();
  if (c.kind == PrologueCase::k_moved) a = g.add_op(ir::OpKind::Transpose, {a}, {{"perm", Ints{0, 2, 1}}})->result();
  if (c.kind == PrologueCase::cast) a = g.add_op(ir::OpKind::Cast, {a}, {{"to", std::string("f16")}})->result();
  const int64_t k = a->type.shape.back();
  ir::Value* b = g.add_input("b", {DType::f16, {k, c.n}});
  g.add_output(g.add_op(ir::OpKind::MatMul, {a, b}, {}, "mm")->result(), "y");
  return g;
}

// Forced, every fp16 conv compiles to the tensor-core kernel (valid SPIR-V, memory within the
// profile) on each profile that has cooperative matrices. Unforced, the planner picks it where it
// stages 16-byte loads (input channels per group a multiple of 8) and keeps the FMA kernels
// elsewhere (codegen/kernels/gemm_coopmat.h says why).
TEST(CoopMatrixPlan, Fp16ConvsUseTensorCoresWhereTheyPayOrWhenForced) {
  int compiled = 0;
  for (const ConvCase& c : conv_cases()) {
    ir::Graph g = f16_conv(c);
    for (const std::string& target : known_targets()) {
      codegen::CompileOptions o;
      o.target = find_target(target).limits;
      if (!o.target.shader_float16 || !o.target.storage_buffer_16bit) continue;
      SCOPED_TRACE(target + " x" + shape_str(c.x));
      const bool packed = geometry(c).in_channels_per_group() % 8 == 0;
      std::string unforced = strategies(codegen::compile_graph(g, o));
      const bool tensor_cores = codegen::kernels::coopmat_misfit(o.target).empty();
      if (tensor_cores && packed)
        EXPECT_EQ(unforced, c.kernels);
      else
        EXPECT_EQ(unforced.find("coopmat"), std::string::npos) << unforced;  // an FMA kernel
      if (!tensor_cores) continue;
      o.forced_strategy["conv"] = "implicit_gemm_coopmat";
      o.forced_strategy["conv_transpose"] = "implicit_gemm_coopmat";
      ModuleImage m = codegen::compile_graph(g, o);  // validates the SPIR-V, checks its memory
      EXPECT_EQ(strategies(m), c.kernels);
      EXPECT_EQ(m.manifest.dispatches.back().tiles.at("staging_load_halves"),
                geometry(c).in_channels_per_group() % 8 == 0 ? 8 : 1);
      for (const DispatchDesc& d : m.manifest.dispatches)
        EXPECT_LE(d.workgroup_memory_bytes, o.target.max_compute_shared_memory_size);
      ++compiled;
    }
  }
  EXPECT_GT(compiled, 0) << "no profile with cooperative matrices";
  // The contraction's strategy too, with A and B in either staging order; 16-byte staging where
  // the contiguous dims are multiples of 8 (72 and 40), one element per load where not (36).
  for (bool tb : {false, true})
    for (int64_t k : {72, 36}) {
      codegen::CompileOptions o;
      o.target = find_target("nvidia").limits;
      o.forced_strategy["matmul"] = "coopmat";
      ir::Graph g = f16_matmul({100, k}, tb ? Shape{40, k} : Shape{k, 40}, tb);
      ModuleImage m = codegen::compile_graph(g, o);
      EXPECT_EQ(m.manifest.dispatches.at(0).kernel, "matmul_coopmat");
      EXPECT_EQ(m.manifest.dispatches.at(0).tiles.at("staging_load_halves"), k == 72 ? 8 : 1);
      // Unforced: tensor cores with 16-byte staging, else the FMA loop.
      o.forced_strategy.clear();
      EXPECT_EQ(codegen::compile_graph(g, o).manifest.dispatches.at(0).kernel, k == 72 ? "matmul_coopmat" : "matmul_tiled");
    }
}

// Offline, which extension the tensor-core kernels use follows the profile: KHR wherever the
// target has it (nvidia has both), NV only where KHR is missing; each module declares one form only.
// A float16 matmul whose operand comes through a fused prologue stages 16 bytes per load by
// gathering 8 values through it (contraction.cpp, staging8), unforced, on every profile with the
// tensor-core loop; without cooperative matrices it stays on the FMA loop.
TEST(CoopMatrixPlan, MatmulsThroughProloguesGatherSixteenBytes) {
  for (const PrologueCase& c : prologue_cases()) {
    ir::Graph g = prologue_matmul(c);
    for (const std::string& target : known_targets()) {
      codegen::CompileOptions o;
      o.target = find_target(target).limits;
      if (!o.target.shader_float16 || !o.target.storage_buffer_16bit) continue;
      SCOPED_TRACE(target + " a" + shape_str(c.a));
      ModuleImage m = codegen::compile_graph(g, o);  // validates the SPIR-V, checks its memory
      const DispatchDesc& d = m.manifest.dispatches.back();
      if (!codegen::kernels::coopmat_misfit(o.target).empty()) {
        EXPECT_EQ(d.kernel.find("coopmat"), std::string::npos) << d.kernel;
        continue;
      }
      EXPECT_EQ(strategies(m), "matmul_coopmat ");
      EXPECT_EQ(d.tiles.at("staging_load_halves"), 8);
    }
  }
}

TEST(CoopMatrixPlan, KhrWhereTheTargetHasItNvOnlyWhereItIsMissing) {
  for (bool khr : {true, false})
    for (bool conv : {false, true}) {
      SCOPED_TRACE(std::string(khr ? "KHR" : "NV") + (conv ? " conv" : " matmul"));
      codegen::CompileOptions o;
      o.target = find_target("nvidia").limits;
      o.target.cooperative_matrix_khr = khr;
      ir::Graph g = conv ? f16_conv(conv_cases()[0]) : f16_matmul({256, 192}, {192, 320}, false);
      ModuleImage m = codegen::compile_graph(g, o);
      bool found = false;
      for (const DispatchDesc& d : m.manifest.dispatches) {
        if (d.kernel.find("coopmat") == std::string::npos) continue;
        found = true;
        const auto& caps = d.spirv.capabilities;
        auto has = [&](const char* c) { return std::find(caps.begin(), caps.end(), c) != caps.end(); };
        EXPECT_EQ(has("CooperativeMatrixKHR"), khr);
        EXPECT_EQ(has("CooperativeMatrixNV"), !khr);
        EXPECT_EQ(d.subgroup_sizes[0], 32u);  // the fragments' layout is planned for one subgroup size
        EXPECT_EQ(d.subgroup_sizes[1], 32u);
      }
      EXPECT_TRUE(found);
    }
}

// Per target profile (issue 22 item 3): AMD's wave32/wave64 targets get tensor cores planned for
// wave32 and pinned (required_subgroup_size, through the manifest too); NVIDIA's one size needs no
// pin; Intel Xe2 offers only 8x16x16, so its float16 products stay on the FMA loop, saying why.
TEST(CoopMatrixPlan, SubgroupSizeAndShapePerProfile) {
  struct Case {
    const char* target;
    bool coop;
    uint32_t pin;
  };
  for (const Case& c : {Case{"amd-rdna3", true, 32}, Case{"amd-rdna4", true, 32}, Case{"nvidia", true, 0},
                        Case{"intel-xe2", true, 16}, Case{"intel-alchemist", true, 8}, Case{"intel-xe", false, 0}})
    for (bool conv : {false, true}) {
      SCOPED_TRACE(std::string(c.target) + (conv ? " conv" : " matmul"));
      codegen::CompileOptions o;
      o.target = find_target(c.target).limits;
      ir::Graph g = conv ? f16_conv(conv_cases()[0]) : f16_matmul({256, 192}, {192, 320}, false);
      ModuleImage m = codegen::compile_graph(g, o);
      Manifest back = manifest_from_json(manifest_to_json(m.manifest));
      bool found = false;
      for (const DispatchDesc& d : back.dispatches) {
        if (d.kernel.find("coopmat") == std::string::npos) {
          continue;
        }
        found = true;
        const uint32_t size = c.pin ? c.pin : 32;
        EXPECT_EQ(d.subgroup_sizes, (std::array<uint32_t, 2>{size, size}));
        EXPECT_EQ(d.required_subgroup_size, c.pin);
        // Intel's fragments (M = 8) are the target's: the tile says so.
        const bool intel = std::string(c.target).rfind("intel", 0) == 0;
        EXPECT_EQ(d.tiles.count("fragment_m") ? d.tiles.at("fragment_m") : 16, intel ? 8 : 16) << d.name;
      }
      EXPECT_EQ(found, c.coop);
    }
  // A target offering only shapes the loop cannot run is told so.
  TargetLimits t = find_target("intel-xe2").limits;
  t.cooperative_matrix_khr = false;
  t.cooperative_matrix_shapes = {"8x32x16 f16*f16+f32"};
  EXPECT_NE(codegen::kernels::coopmat_misfit(t).find("has none of the cooperative-matrix shapes vkc's loop runs"), std::string::npos)
      << codegen::kernels::coopmat_misfit(t);
}

// A constant filter is packed once at compile time (ir/passes/pack_conv_filters.cpp): the
// tensor-core conv reads it in place, so only the input's pack dispatch remains; a filter given as
// an input is still packed per execution.
TEST(CoopMatrixPlan, ConstantFiltersArePackedAtCompileTime) {
  for (bool constant : {true, false}) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f16, {1, 64, 20, 20}});
    ir::Value* w = nullptr;
    if (constant) {
      HostTensor t(DType::f16, {96, 64, 3, 3});
      for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double(i % 7) / 8 - 0.375);
      w = g.add_op(ir::OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(t))}}, "w")->result();
    } else {
      w = g.add_input("w", {DType::f16, {96, 64, 3, 3}});
    }
    g.add_output(g.add_op(ir::OpKind::Conv, {x, w}, {{"pads", Ints{1, 1, 1, 1}}}, "conv")->result(), "y");
    codegen::CompileOptions o;
    o.target = find_target("nvidia").limits;
    EXPECT_EQ(strategies(codegen::compile_graph(g, o)),
              constant ? "conv_pack_input conv_implicit_gemm_coopmat " : kPackBoth);
  }
}

// The error compiling `g` for `target` with `strategy` forced on its conv ("(compiled)" if none).
std::string forced_conv_error(const ir::Graph& g, const std::string& target, const std::string& strategy) {
  codegen::CompileOptions o;
  o.target = find_target(target).limits;
  o.forced_strategy["conv"] = strategy;
  return compile_error(g, o);
}

TEST(CoopMatrixPlan, ForcingItWhereItCannotRunNamesTheReason) {
  std::string why = forced_conv_error(f16_conv(conv_cases()[0]), "lavapipe", "implicit_gemm_coopmat");
  EXPECT_NE(why.find("cooperative matrices"), std::string::npos) << why;
  // float32 data never takes the float16 path, forced or not.
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f32, {1, 64, 20, 20}});
  ir::Value* w = g.add_input("w", {DType::f32, {96, 64, 3, 3}});
  g.add_output(g.add_op(ir::OpKind::Conv, {x, w}, {{"pads", Ints{1, 1, 1, 1}}}, "conv")->result(), "y");
  why = forced_conv_error(g, "nvidia", "implicit_gemm_coopmat");
  EXPECT_NE(why.find("not float16"), std::string::npos) << why;
}

// Forced tensor-core tiles compile on every profile with the loop: valid SPIR-V (the KHR rewrite
// where the profile has KHR), workgroup memory as planned (the compiler re-measures it from the
// SPIR-V), the scratch in A's tiles where CoopTile says so. A tile beyond the budget or the loop's
// staging rules, or text not of the form, is refused naming the op.
TEST(CoopMatrixPlan, ForcedTilesCompileOrNameWhyNot) {
  int compiled = 0;
  for (const std::string& target : known_targets()) {
    codegen::CompileOptions o;
    o.target = find_target(target).limits;
    if (!codegen::kernels::coopmat_misfit(o.target).empty()) continue;
    for (const char* tile : {"128x128x32/2x4/s2", "128x256x32/2x4", "64x64x32/2x2/s2", "32x64x16/1x2"})
      for (int64_t k : {72, 36}) {
        SCOPED_TRACE(target + " " + tile + " K " + std::to_string(k));
        o.forced_strategy["matmul"] = std::string("coopmat=") + tile;
        codegen::CoopTile c = codegen::parse_coop_tile(std::string(tile), "test");
        c.subgroup = codegen::kernels::coopmat_subgroup_size(o.target);
        const auto f = codegen::kernels::coopmat_fragment(o.target);
        c.fm = f[0], c.fn = f[1], c.fk = f[2];
        c.a_kfast = true;
        c.vec = k == 72 ? 8 : 1;
        if (!codegen::tile_misfit(c, o.target).empty()) {
          EXPECT_THROW(codegen::compile_graph(f16_matmul({100, k}, {k, 304}, false), o), Error);
          continue;
        }
        ModuleImage m = codegen::compile_graph(f16_matmul({100, k}, {k, 304}, false), o);
        const DispatchDesc& d = m.manifest.dispatches.at(0);
        EXPECT_EQ(d.kernel, "matmul_coopmat");
        EXPECT_EQ(d.workgroup_memory_bytes, c.workgroup_memory_bytes());
        ++compiled;
      }
  }
  EXPECT_GT(compiled, 8);
  // The 128 x 128 tile in two copies of 64-deep slices needs 71680 bytes: more than nvidia's 49152.
  codegen::CompileOptions o;
  o.target = find_target("nvidia").limits;
  for (auto [forced, says] : std::vector<std::pair<std::string, std::string>>{
           {"coopmat=128x128x64/2x4/s2", "71680 bytes of workgroup memory > 49152"},
           {"coopmat=128x128x32/2x4/s3", "cannot stage"},
           {"coopmat=128x128x32", "is not TMxTNxTK/WMxWN"}}) {
    o.forced_strategy["matmul"] = forced;
    std::string why = "(no error)";
    try {
      codegen::compile_graph(f16_matmul({100, 72}, {72, 304}, false), o);
    } catch (const Error& e) {
      why = e.what();
    }
    EXPECT_NE(why.find(says), std::string::npos) << forced << ": " << why;
    EXPECT_NE(why.find("matmul 'mm'"), std::string::npos) << why;
  }
}

// An m x 300 x 256 problem for the tensor-core loop only.
codegen::GemmProblem coop_problem(int64_t m, bool a_kfast, bool b_kfast, uint32_t vec) {
  codegen::GemmProblem p{m, 300, 256, 1};
  p.simt = false;
  p.coop_vec = vec;
  p.a_kfast = a_kfast;
  p.b_kfast = b_kfast;
  return p;
}

TEST(CoopMatrixPlan, EveryTileFitsItsBudgetAndTheLoopsStagingRules) {
  TargetLimits t = find_target("nvidia").limits;
  for (uint32_t budget : {49152u, 32768u, 16384u, 8192u}) {
    t.max_compute_shared_memory_size = budget;
    for (bool ak : {false, true})
      for (bool bk : {false, true})
        for (uint32_t vec : {1u, 8u})
          for (int64_t m : {16, 100, 5000})
            if (auto c = codegen::choose_gemm(coop_problem(m, ak, bk, vec), t)) {
              const codegen::CoopTile& tile = std::get<codegen::CoopTile>(c->tile);
              EXPECT_LE(tile.workgroup_memory_bytes(), budget);
              EXPECT_EQ(tile.vec, vec);
              EXPECT_EQ(tile.a_kfast, ak);
              EXPECT_EQ(tile.subgroup, t.min_subgroup_size);
              EXPECT_NO_THROW(codegen::kernels::gemm_coopmat_glsl(tile, false, false));
            }
  }
  t.max_compute_shared_memory_size = 4096;  // below the smallest tile: no plan, the f32 paths remain
  EXPECT_FALSE(codegen::choose_gemm(coop_problem(5000, false, false, 1), t).has_value());
  // FMA tiles are only taken where the problem allows them.
  t.max_compute_shared_memory_size = 49152;
  codegen::GemmProblem both = coop_problem(5000, true, true, 8);
  both.simt = true;
  ASSERT_TRUE(codegen::choose_gemm(both, t).has_value());
  EXPECT_TRUE(codegen::is_coop(codegen::choose_gemm(both, t)->tile));  // tensor cores first
  t.cooperative_matrix_nv = false;  // KHR alone still gives tensor cores
  EXPECT_TRUE(codegen::is_coop(codegen::choose_gemm(both, t)->tile));
  t.cooperative_matrix_khr = false;
  ASSERT_TRUE(codegen::choose_gemm(both, t).has_value());
  EXPECT_FALSE(codegen::is_coop(codegen::choose_gemm(both, t)->tile));  // then the FMA loop
}

// The 128 x 128 tensor-core tiles on plain matrices need three waves of their own, as the largest
// FMA tile does (gemm_planner.cpp, kLargeCoopTileArea): ViT-B/16 b8's first MLP product in the fp16
// mode (312 such tiles on nvidia's 132 compute units) takes 64 x 64 tiles, the 4096^3 product
// (1024) keeps 128 x 128 with 2 x 2 subgroups.
TEST(CoopMatrixPlan, LargeTilesOnlyOverThreeWaves) {
  const TargetLimits& t = find_target("nvidia").limits;
  auto tile_for = [&](int64_t m, int64_t n, int64_t k) {
    codegen::GemmProblem p{m, n, k, 1};
    p.coop_vec = 8;
    p.a_kfast = true;
    p.b_kfast = false;
    p.matrix_operands = true;
    std::optional<codegen::GemmChoice> c = codegen::choose_gemm(p, t);
    EXPECT_TRUE(c.has_value() && codegen::is_coop(c->tile)) << m << "x" << n << "x" << k;
    if (!c || !codegen::is_coop(c->tile)) return std::string();
    const codegen::CoopTile& ct = std::get<codegen::CoopTile>(c->tile);
    return cat(ct.tm, "x", ct.tn, "/", ct.wm, "x", ct.wn);
  };
  EXPECT_EQ(tile_for(1576, 3072, 768), "64x64/2x2");
  EXPECT_EQ(tile_for(4096, 4096, 4096), "128x128/2x2");
  EXPECT_EQ(tile_for(2048, 3328, 768), "128x128/2x2");  // 16 x 26 = 416 tiles: three waves
}


// A ResNet-like bottleneck in float16: conv1 (1x1) + relu, conv2 (1x1, with a bias) + the
// downsampled input (the residual) + relu, and a last 1x1 conv reading that result, so that the
// channels-last pass keeps the values between the convs channels innermost.
ir::Graph f16_bottleneck(int64_t batch, int64_t channels, int64_t expanded, int64_t size) {
  using ir::OpKind;
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f16, {batch, channels, size, size}});
  ir::Value* w1 = g.add_input("w1", {DType::f16, {channels, channels, 1, 1}});
  ir::Value* w2 = g.add_input("w2", {DType::f16, {expanded, channels, 1, 1}});
  ir::Value* b2 = g.add_input("b2", {DType::f16, {expanded}});
  ir::Value* w3 = g.add_input("w3", {DType::f16, {expanded, channels, 1, 1}});
  ir::Value* w4 = g.add_input("w4", {DType::f16, {channels, expanded, 1, 1}});
  ir::Value* y = g.add_op(OpKind::Relu, {g.add_op(OpKind::Conv, {x, w1}, {}, "conv1")->result()})->result();
  y = g.add_op(OpKind::Conv, {y, w2, b2}, {}, "conv2")->result();
  ir::Value* r = g.add_op(OpKind::Conv, {x, w3}, {}, "down")->result();
  y = g.add_op(OpKind::Relu, {g.add_op(OpKind::Add, {y, r}, {}, "residual")->result()})->result();
  g.add_output(g.add_op(OpKind::Conv, {y, w4}, {}, "conv4")->result(), "y");
  return g;
}

// The dispatch that runs conv2 with the residual in its epilogue.
const DispatchDesc& residual_conv(const ModuleImage& m) {
  for (const DispatchDesc& d : m.manifest.dispatches)
    if (d.kernel == "conv_implicit_gemm_coopmat" &&
        std::any_of(d.ops.begin(), d.ops.end(), [](const std::string& op) { return op.find("'residual'") != std::string::npos; }))
      return d;
  throw Error("no tensor-core conv with the residual in its epilogue");
}

// Channels-last results leave four channels at a time (gemm_coopmat_glsl's quads: one epilogue
// call per 4, the residual read and the result written 8 bytes at a time) where the channels per
// group are a multiple of 4; elsewhere one element at a time.
TEST(CoopMatrixPlan, ChannelsLastResultsLeaveInQuads) {
  codegen::CompileOptions o;
  o.target = find_target("nvidia").limits;
  ModuleImage m = codegen::compile_graph(f16_bottleneck(2, 64, 256, 14), o);
  EXPECT_EQ(residual_conv(m).tiles.count("quad_stores"), 1u);
  ModuleImage odd = codegen::compile_graph(f16_bottleneck(2, 64, 250, 14), o);
  EXPECT_EQ(residual_conv(odd).tiles.count("quad_stores"), 0u);
}

// NVIDIA's single-copy tiles of 256 invocations with 16-byte staging keep two staged slices in
// registers (coop_register_sets); its 128-invocation tiles, two-copy tiles and other vendors one.
// The tensor-core conv dispatch planned for `c` on the profile `target`.
DispatchDesc coop_conv_plan(const ConvCase& c, const char* target) {
  codegen::CompileOptions o;
  o.target = find_target(target).limits;
  ModuleImage m = codegen::compile_graph(f16_conv(c), o);
  for (const DispatchDesc& d : m.manifest.dispatches)
    if (d.kernel == "conv_implicit_gemm_coopmat") return d;
  throw Error(cat(target, ": no tensor-core conv"));
}

TEST(CoopMatrixPlan, WideSingleCopyTilesStageTwoSlicesAheadOnNvidia) {
  // ResNet's 8x256x56x56 3x3 (392 tiles of 128 x 128: too few for the deep-conv tile below).
  ConvCase resnet{{8, 256, 56, 56}, {256, 256, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false, ""};
  auto plan = [&](const char* target) { return coop_conv_plan(resnet, target); };
  const DispatchDesc nv = plan("nvidia");
  ASSERT_EQ(nv.workgroup_size[0], 256u) << nv.strategy;
  EXPECT_EQ(nv.tiles.count("register_sets") ? nv.tiles.at("register_sets") : 1, 2) << nv.strategy;
  EXPECT_EQ(plan("amd-rdna3").tiles.count("register_sets"), 0u);
  using codegen::CoopTile;
  CoopTile one_copy{128, 128, 64, 2, 4, 32, true, false, 8}, two_copies = one_copy, narrow = one_copy;
  two_copies.tk = 32;
  two_copies.stages = 2;
  narrow.wn = 2;
  const TargetLimits& t = find_target("nvidia").limits;
  EXPECT_EQ(codegen::kernels::coop_register_sets(one_copy, t), 2u);
  EXPECT_EQ(codegen::kernels::coop_register_sets(two_copies, t), 1u);
  EXPECT_EQ(codegen::kernels::coop_register_sets(narrow, t), 1u);
  EXPECT_EQ(codegen::kernels::coop_register_sets(one_copy, find_target("intel-xe2").limits), 1u);
  EXPECT_NO_THROW(codegen::kernels::gemm_coopmat_glsl(one_copy, false, false, false, false, 2));
  EXPECT_THROW(codegen::kernels::gemm_coopmat_glsl(two_copies, false, false, false, false, 2), Error);
}

// Each step's products run one step late (shaders/gemm_coopmat.glsl LAG) on NVIDIA's tiles of
// 128 x 128 and more with float16 operands; smaller tiles lost with it (bench/RESULTS.md session 38).
TEST(CoopMatrixPlan, LargeNvidiaTilesMultiplyOneStepLate) {
  using codegen::CoopTile;
  CoopTile one_copy{128, 128, 64, 2, 4, 32, true, false, 8}, two_copies = one_copy;
  two_copies.tk = 32;
  two_copies.stages = 2;
  const TargetLimits& t = find_target("nvidia").limits;
  CoopTile pieces = one_copy, small{64, 64, 64, 2, 2, 32, true, false, 8};
  pieces.split = true;
  EXPECT_TRUE(codegen::kernels::coop_lagged(one_copy, t));
  EXPECT_TRUE(codegen::kernels::coop_lagged(two_copies, t));
  EXPECT_FALSE(codegen::kernels::coop_lagged(small, t));
  EXPECT_FALSE(codegen::kernels::coop_lagged(pieces, t));
  EXPECT_FALSE(codegen::kernels::coop_lagged(one_copy, find_target("amd-rdna3").limits));
  EXPECT_NE(codegen::kernels::gemm_coopmat_glsl(one_copy, false, false, false, false, 2, true).find("#define LAG 1"),
            std::string::npos);
  EXPECT_THROW(codegen::kernels::gemm_coopmat_glsl(pieces, false, false, false, false, 1, true), Error);
}

// Deep convs with large grids take 128 x 128 x 32 on 2 x 2 subgroups with two copies on NVIDIA
// (gemm_planner.cpp kDeepConvMinK): the seed conv (K 576, 4096 tiles) and ggml's 16x256x19x19 *
// 4096x256x4x4 (K 4096, 1600), not ResNet's 8x256x56x56 3x3 (392 tiles), not a K-64 1x1 over the
// seed's grid, not 20 channels (no one-tap slices), not other vendors.
TEST(CoopMatrixPlan, DeepConvsWithLargeGridsTakeTwoByTwoSubgroupsOnNvidia) {
  const Ints p1{1, 1, 1, 1};
  auto tile = [](const DispatchDesc& d) {
    return cat(d.tiles.at("tile_m"), "x", d.tiles.at("tile_n"), "x", d.tiles.at("tile_k"), "/", d.tiles.at("subgroups_m"),
               "x", d.tiles.at("subgroups_n"), d.tiles.count("stages") ? cat("/s", d.tiles.at("stages")) : "");
  };
  ConvCase seed{{1, 64, 512, 512}, {256, 64, 3, 3}, {{"pads", p1}}, false, ""};
  ConvCase ggml{{16, 256, 19, 19}, {4096, 256, 4, 4}, {{"pads", Ints{2, 2, 2, 2}}}, false, ""};
  ConvCase resnet{{8, 256, 56, 56}, {256, 256, 3, 3}, {{"pads", p1}}, false, ""};
  ConvCase shallow{{1, 64, 512, 512}, {256, 64, 1, 1}, {}, false, ""};
  ConvCase odd{{1, 40, 512, 512}, {256, 40, 3, 3}, {{"pads", p1}}, false, ""};  // 40 channels: slices of 32 cross taps
  for (const ConvCase* c : {&seed, &ggml}) {
    const DispatchDesc d = coop_conv_plan(*c, "nvidia");
    EXPECT_EQ(tile(d), "128x128x32/2x2/s2") << shape_str(c->x);
    EXPECT_EQ(d.workgroup_size[0], 128u);
    EXPECT_EQ(d.workgroup_memory_bytes, 2u * 2 * (128 + 128) * (32 + 8));
  }
  for (const ConvCase* c : {&resnet, &shallow, &odd}) EXPECT_EQ(coop_conv_plan(*c, "nvidia").workgroup_size[0], 256u) << shape_str(c->x);
  EXPECT_EQ(coop_conv_plan(seed, "amd-rdna3").tiles.at("subgroups_n"), coop_conv_plan(resnet, "amd-rdna3").tiles.at("subgroups_n"));
  // A matmul of the same size keeps its own 2 x 2 tile (64-deep, one copy).
  codegen::CompileOptions o;
  o.target = find_target("nvidia").limits;
  const DispatchDesc mm = codegen::compile_graph(f16_matmul({262144, 576}, {576, 256}, false), o).manifest.dispatches.at(0);
  EXPECT_EQ(mm.tiles.at("tile_k"), 64) << mm.strategy;
}

class CoopMatrixGpu : public ::testing::TestWithParam<Form> {
 protected:
  void SetUp() override {
    if (!device_has(GetParam())) GTEST_SKIP() << no_form_reason(GetParam());
  }
};

TEST_P(CoopMatrixGpu, Fp16ConvsMatchTheReference) {
  uint32_t seed = 7;
  for (const ConvCase& c : conv_cases()) {
    ir::Graph g = f16_conv(c);
    SCOPED_TRACE("x" + shape_str(c.x) + " w" + shape_str(c.w));
    GpuRunOptions o = fp16_tolerance();
    keep_only(o, GetParam());
    o.forced_strategy["conv"] = "implicit_gemm_coopmat";
    o.forced_strategy["conv_transpose"] = "implicit_gemm_coopmat";
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    EXPECT_EQ(strategies(run.module), c.kernels);
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

// Forced tensor-core tiles on convs ("implicit_gemm_coopmat=TILE", how vkc_bench measures them
// against each other): 128- and 256-invocation tiles, one and two copies, 16-byte staging with one
// tap per slice (64 channels) and one-element staging (20 channels), against the float64 reference.
TEST_P(CoopMatrixGpu, ForcedFp16ConvTilesMatchTheReference) {
  uint32_t seed = 120;
  const std::vector<ConvCase> cases = conv_cases();
  // Cases 0 (1x64x20x20 * 96x64x3x3) and 1 (2x20x17x9 * 40x20x3x3, strided and dilated); one-element
  // staging of A (M-fast) needs a multiple of TM invocations, which 256 x 64 on 4 subgroups is not.
  for (auto [tile, cases_of_tile] : std::vector<std::pair<std::string, std::vector<size_t>>>{
           {"128x64x64/2x2", {0, 1}}, {"64x128x64/2x2", {0, 1}}, {"128x128x64/2x2", {0, 1}},
           {"256x64x32/4x1", {0}}, {"64x64x32/2x2/s2", {0, 1}}}) {
    for (size_t i : cases_of_tile) {
      const ConvCase& c = cases.at(i);
      ir::Graph g = f16_conv(c);
      SCOPED_TRACE(std::string(tile) + " x" + shape_str(c.x) + " w" + shape_str(c.w));
      GpuRunOptions o = fp16_tolerance();
      keep_only(o, GetParam());
      o.forced_strategy["conv"] = "implicit_gemm_coopmat=" + tile;
      GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
      const DispatchDesc& d = run.module.manifest.dispatches.back();
      const codegen::CoopTile want = codegen::parse_coop_tile(tile, "test");
      EXPECT_EQ(d.strategy, "implicit_gemm_coopmat");
      EXPECT_EQ(std::vector<int64_t>({d.tiles.at("tile_m"), d.tiles.at("tile_n"), d.tiles.at("tile_k"),
                                      d.tiles.at("subgroups_m"), d.tiles.at("subgroups_n")}),
                std::vector<int64_t>({want.tm, want.tn, want.tk, want.wm, want.wn}));
      EXPECT_EQ(d.tiles.at("staging_load_halves"), i == 0 ? 8 : 1);
      EXPECT_TRUE(outputs_match(run, o));
    }
  }
}

// A constant filter, packed at compile time and read in place by the tensor-core kernel.
TEST_P(CoopMatrixGpu, ConstantFilterPackedAtCompileTime) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::f16, {2, 32, 13, 11}});
  HostTensor t(DType::f16, {48, 32, 3, 3});
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, double((i * 37) % 17) / 16 - 0.5);
  ir::Value* w = g.add_op(ir::OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(t))}}, "w")->result();
  g.add_output(g.add_op(ir::OpKind::Conv, {x, w}, {{"pads", Ints{1, 0, 1, 2}}}, "conv")->result(), "y");
  GpuRunOptions o = fp16_tolerance();
  keep_only(o, GetParam());
  GpuRun run = run_on_gpu(g, random_inputs(g, 77), o);
  EXPECT_EQ(strategies(run.module), "conv_pack_input conv_implicit_gemm_coopmat ");
  EXPECT_TRUE(declares(run.module, GetParam()));
  EXPECT_TRUE(outputs_match(run, o));
}

// Small integer-valued operands: every product and sum is exact in float16 x float16 + float32,
// so the tensor cores must give the reference's numbers exactly (a wrong layout, role or stride
// in the KHR rewrite cannot hide behind a tolerance).
TEST_P(CoopMatrixGpu, SmallIntegerProductsAreExact) {
  uint32_t seed = 700;
  for (auto [a, b, tb] : std::vector<std::tuple<Shape, Shape, bool>>{{{64, 48}, {48, 80}, false},
                                                                   {{40, 32}, {24, 32}, true},
                                                                   {{33, 17}, {17, 50}, false}}) {
    ir::Graph g = f16_matmul(a, b, tb);
    SCOPED_TRACE("a" + shape_str(a) + " b" + shape_str(b));
    std::map<std::string, HostTensor> in = random_inputs(g, seed++);
    for (auto& [name, t] : in)  // integers in [-4, 4]
      for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, std::round(t.get_f64(i) * 4));
    GpuRunOptions o;
    o.rel_tol = 0;
    o.abs_tol = 0;
    keep_only(o, GetParam());
    o.forced_strategy["matmul"] = "coopmat";
    GpuRun run = run_on_gpu(g, in, o);
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

TEST_P(CoopMatrixGpu, Fp16MatmulsMatchTheReference) {
  uint32_t seed = 70;
  // 16-byte staging: the first three (B N-fast, B K-fast, batched A); one element: the last two.
  for (auto [a, b, tb] : std::vector<std::tuple<Shape, Shape, bool>>{{{256, 192}, {192, 320}, false},
                                                                   {{100, 72}, {56, 72}, true},
                                                                   {{3, 40, 64}, {64, 24}, false},
                                                                   {{100, 70}, {50, 70}, true},
                                                                   {{1000, 33}, {33, 17}, false}}) {
    ir::Graph g = f16_matmul(a, b, tb);
    SCOPED_TRACE("a" + shape_str(a) + " b" + shape_str(b));
    GpuRunOptions o = fp16_tolerance();
    keep_only(o, GetParam());
    o.forced_strategy["matmul"] = "coopmat";
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    EXPECT_NE(strategies(run.module).find("coopmat"), std::string::npos) << strategies(run.module);
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

// Every form of the fp16 loop, forced: one or two copies of the operand tiles, subgroups holding
// 64 x 32 or 64 x 64 of the tile, the accumulator scratch in A's tiles (16-byte staging, A's tiles
// large enough) or in its own array (32 x 64 x 16 with one copy: A's 1.5 KiB are less than the two
// subgroups' 2 KiB; and every one-element staging, the last shape, whose K of 70 is not a multiple
// of 8), partial edge tiles and K not a multiple of the slice.
TEST_P(CoopMatrixGpu, ForcedFp16TilesMatchTheReference) {
  uint32_t seed = 80;
  for (const char* tile : {"128x128x32/2x4/s2", "128x128x32/2x2", "128x128x32/2x2/s2", "128x256x32/2x4", "64x32x32/2x1/s2",
                           "32x64x16/1x2", "64x64x32/2x2/s2"}) {
    for (auto [a, b, tb] : std::vector<std::tuple<Shape, Shape, bool>>{
             {{200, 328}, {328, 264}, false}, {{2, 72, 96}, {136, 96}, true}, {{150, 70}, {70, 90}, false},
             {{130, 256}, {256, 72}, false}, {{64, 32}, {32, 64}, false}}) {
      ir::Graph g = f16_matmul(a, b, tb);
      SCOPED_TRACE(std::string(tile) + " a" + shape_str(a) + " b" + shape_str(b));
      GpuRunOptions o = fp16_tolerance();
      keep_only(o, GetParam());
      o.forced_strategy["matmul"] = std::string("coopmat=") + tile;
      GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
      const std::string s = run.module.manifest.dispatches.at(0).strategy;
      const std::string t = tile;
      EXPECT_NE(s.find("coopmat " + t.substr(0, t.find('/'))), std::string::npos) << s;
      EXPECT_EQ(s.find("2 stages") != std::string::npos, t.find("/s2") != std::string::npos) << s;
      EXPECT_TRUE(outputs_match(run, o));
    }
  }
}

// Mobilenet-like and efficientnet-like graphs (16 input channels) in the fp16 precision mode: the
// tensor-core convs gather their input through a fused prologue (the graph input's cast, the
// squeeze-excite scale; conv::input_gathered_in_place) instead of a pack dispatch, and the
// depthwise convs run on their channels-last kernel between them.
TEST_P(CoopMatrixGpu, MobilenetLikeFp16GraphsGatherTheirInputsInPlace) {
  uint32_t seed = 90;
  for (bool efficientnet : {false, true}) {
    SCOPED_TRACE(efficientnet ? "efficientnet-like" : "mobilenet-like");
    MobilenetLikeShape shape;
    shape.batch = 2;
    shape.size = 32;
    shape.in_channels = 16;
    shape.efficientnet = efficientnet;
    std::mt19937 rng(seed);
    ir::Graph g = mobilenet_like_graph(shape, rng);
    GpuRunOptions o = fp16_tolerance();
    keep_only(o, GetParam());
    o.precision = Precision::fp16;
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    const std::string kernels = strategies(run.module);
    EXPECT_EQ(kernels.find("conv_pack_input"), std::string::npos) << kernels;
    EXPECT_NE(kernels.find("conv_depthwise_channels_last"), std::string::npos) << kernels;
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

// The same matmuls on the device: 8 values gathered through the prologue per 16-byte staging load.
TEST_P(CoopMatrixGpu, Fp16MatmulsThroughProloguesMatchTheReference) {
  uint32_t seed = 95;
  for (const PrologueCase& c : prologue_cases()) {
    ir::Graph g = prologue_matmul(c);
    SCOPED_TRACE("a" + shape_str(c.a));
    GpuRunOptions o = fp16_tolerance();
    keep_only(o, GetParam());
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    EXPECT_EQ(strategies(run.module), "matmul_coopmat ");
    EXPECT_EQ(run.module.manifest.dispatches.back().tiles.at("staging_load_halves"), 8);
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

// The bottleneck on the device, its results leaving in quads (256 channels) and one at a time
// (250), against the reference.
TEST_P(CoopMatrixGpu, ResidualBlocksMatchTheReferenceInQuadsAndNot) {
  uint32_t seed = 120;
  for (int64_t expanded : {256, 250}) {
    SCOPED_TRACE(expanded);
    ir::Graph g = f16_bottleneck(2, 64, expanded, 14);
    GpuRunOptions o = fp16_tolerance();
    keep_only(o, GetParam());
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    EXPECT_EQ(residual_conv(run.module).tiles.count("quad_stores"), expanded % 4 == 0 ? 1u : 0u);
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, CoopMatrixGpu, ::testing::Values(Form::khr, Form::nv),
                         [](const ::testing::TestParamInfo<Form>& i) { return i.param == Form::khr ? "KHR" : "NV"; });

// Fragments of another shape than 16x16x16 (Intel's are 8x16x16 and 8x8x16, plan-only here): the
// loop run with the device's 16x8x16 through KHR (NVIDIA offers it), convs in every staging form
// and matmuls, against the reference. Skipped where the device does not offer 16x8x16.
TEST(CoopMatrixFragments, NarrowFragmentsMatchTheReference) {
  const TargetLimits& device = shared_context().limits();
  const char* shape = "16x8x16 f16*f16+f32";
  if (!device.cooperative_matrix_khr || !device.offers_cooperative_matrix_shape(shape))
    GTEST_SKIP() << "device '" << shared_context().device_info().name << "' offers no KHR " << shape
                 << " product (runs on the GPU machine)";
  auto narrow = [&](GpuRunOptions& o) {
    o.adjust_target = [shape](TargetLimits& t) {
      t.cooperative_matrix_nv = false;
      t.cooperative_matrix_shapes = {shape};
    };
  };
  auto fragments_are_narrow = [](const ModuleImage& m) {
    int coop = 0;
    for (const DispatchDesc& d : m.manifest.dispatches)
      if (d.kernel.find("coopmat") != std::string::npos && d.kernel.find("pack") == std::string::npos) {
        ++coop;
        EXPECT_EQ(d.tiles.count("fragment_n") ? d.tiles.at("fragment_n") : 0, 8) << d.name;
      }
    return coop > 0;
  };
  uint32_t seed = 120;
  for (const ConvCase& c : conv_cases()) {
    ir::Graph g = f16_conv(c);
    SCOPED_TRACE("x" + shape_str(c.x) + " w" + shape_str(c.w));
    GpuRunOptions o = fp16_tolerance();
    narrow(o);
    o.forced_strategy["conv"] = "implicit_gemm_coopmat";
    o.forced_strategy["conv_transpose"] = "implicit_gemm_coopmat";
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    EXPECT_TRUE(fragments_are_narrow(run.module));
    EXPECT_TRUE(declares(run.module, Form::khr));
    EXPECT_TRUE(outputs_match(run, o));
  }
  for (auto [a, b, tb] : std::vector<std::tuple<Shape, Shape, bool>>{{{256, 192}, {192, 320}, false},
                                                                   {{100, 72}, {56, 72}, true},
                                                                   {{1000, 33}, {33, 17}, false}}) {
    ir::Graph g = f16_matmul(a, b, tb);
    SCOPED_TRACE("a" + shape_str(a) + " b" + shape_str(b));
    GpuRunOptions o = fp16_tolerance();
    narrow(o);
    o.forced_strategy["matmul"] = "coopmat";
    GpuRun run = run_on_gpu(g, random_inputs(g, seed++), o);
    EXPECT_TRUE(fragments_are_narrow(run.module));
    EXPECT_TRUE(outputs_match(run, o));
  }
}

// A device with both extensions gets KHR when nothing is adjusted (the issue: prefer KHR).
TEST(CoopMatrixPreference, KhrWhereTheDeviceHasIt) {
  if (!device_has_coopmat()) GTEST_SKIP() << no_coopmat_reason();
  ir::Graph g = f16_matmul({64, 64}, {64, 64}, false);
  GpuRunOptions o = fp16_tolerance();
  o.forced_strategy["matmul"] = "coopmat";
  GpuRun run = run_on_gpu(g, random_inputs(g, 5), o);
  EXPECT_TRUE(declares(run.module, device_has(Form::khr) ? Form::khr : Form::nv));
  EXPECT_TRUE(outputs_match(run, o));
}

}  // namespace
}  // namespace vkc::test
