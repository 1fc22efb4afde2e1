// Attention on tensor cores (shaders/attention_coopmat.comp, issue 23 item 3: "fp16 on tensor
// cores where present"): plans and SPIR-V on every profile with cooperative matrices (no GPU), and
// results against the float64 reference of the unfused graph on a device that has them (the GPU
// machine; lavapipe has none, so there the GPU tests skip and say so).
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/compiler.h"
#include "codegen/kernels/attention_plan.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "kernels/bert_self_attention.h"
#include "kernels/coopmat_forms.h"
#include "kernels/op_test_helpers.h"
#include "module/target_profiles.h"
#include "support/error.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

struct Dims {
  int64_t b, h, sq, sk, d, dv;
};

ir::Value* scalar(ir::Graph& g, DType t, double v) {
  HostTensor s(t, {1});
  s.set_f64(0, v);
  return g.add_constant(s);
}

// A constant [n, n] near the identity by which graph inputs are projected, as a model's q, k and v
// come from matmuls (which the fp16 precision mode runs in float16).
ir::Value* projection(ir::Graph& g, ir::Value* x, int64_t n, uint32_t seed) {
  HostTensor w(DType::f32, {n, n});
  for (int64_t i = 0; i < w.numel(); ++i) w.set_f64(i, double(int64_t((i * 7919 + seed * 104729) % 41) - 20) / (4.0 * double(n)) + (i % (n + 1) == 0 ? 1.0 : 0.0));
  return g.add_op(K::MatMul, {x, g.add_constant(w)})->result();
}

// BERT's form, softmax((q @ k^T) / sqrt(d) + mask) @ v, over `dtype` tensors (float16: a float16
// model). `mask`: an additive [sq, sk] input; `k_transposed`: k arrives as [b, h, d, sk];
// `projected`: q, k and v are graph inputs times a constant (for the fp16 precision mode).
ir::Graph bert_attention(Dims s, DType dtype, bool mask, bool k_transposed = false, bool projected = false) {
  ir::Graph g;
  ir::Value* q = g.add_input("q", {dtype, {s.b, s.h, s.sq, s.d}});
  ir::Value* k = g.add_input("k", {dtype, k_transposed ? Shape{s.b, s.h, s.d, s.sk} : Shape{s.b, s.h, s.sk, s.d}});
  ir::Value* v = g.add_input("v", {dtype, {s.b, s.h, s.sk, s.dv}});
  if (projected) {
    q = projection(g, q, s.d, 1);
    k = projection(g, k, k_transposed ? s.sk : s.d, 2);
    v = projection(g, v, s.dv, 3);
  }
  ir::Value* kt = k_transposed ? k : g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
  ir::Value* scores = g.add_op(K::Div, {g.add_op(K::MatMul, {q, kt})->result(), scalar(g, dtype, std::sqrt(double(s.d)))})->result();
  if (mask) scores = g.add_op(K::Add, {scores, g.add_input("mask", {dtype, {s.sq, s.sk}})})->result();
  ir::Value* p = g.add_op(K::Softmax, {scores}, {{"axis", int64_t(-1)}}, "softmax")->result();
  g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  return g;
}

// The fused op itself with causal masking (the form the pass makes of Trilu/Where masks).
ir::Graph causal_attention(Dims s, DType dtype) {
  ir::Graph g;
  ir::Value* q = g.add_input("q", {dtype, {s.b, s.sq, s.d}});
  ir::Value* k = g.add_input("k", {dtype, {s.b, s.sk, s.d}});
  ir::Value* v = g.add_input("v", {dtype, {s.b, s.sk, s.dv}});
  g.add_output(g.add_op(K::Attention, {q, k, v}, {{"scale", 1.0 / std::sqrt(double(s.d))}, {"causal", true}}, "attention")
                   ->result(),
               "out");
  return g;
}

std::string kernels_of(const ModuleImage& m) {
  std::string s;
  for (const DispatchDesc& d : m.manifest.dispatches) s += d.kernel + " ";
  return s;
}

// Every profile with cooperative matrices plans float16 attention on tensor cores, in SPIR-V that
// validates (the KHR rewrite where the profile has KHR) and workgroup memory within the profile,
// re-measured from the SPIR-V by the compiler; elsewhere, and for float32 tensors, for single query
// rows (decoding) and head dims above 128, the FMA kernel.
TEST(AttentionCoopPlan, Fp16AttentionUsesTensorCoresWhereTheTargetHasThem) {
  int planned = 0;
  for (const std::string& target : known_targets()) {
    codegen::CompileOptions o;
    o.target = find_target(target).limits;
    if (!o.target.shader_float16 || !o.target.storage_buffer_16bit) continue;
    SCOPED_TRACE(target);
    const bool tensor_cores = codegen::kernels::coopmat_misfit(o.target).empty();
    for (Dims s : {Dims{1, 12, 128, 128, 64, 64}, Dims{2, 3, 50, 77, 40, 24}, Dims{1, 2, 64, 300, 128, 128}}) {
      const std::string kernels = kernels_of(codegen::compile_graph(bert_attention(s, DType::f16, true), o));
      if (!tensor_cores) {
        EXPECT_EQ(kernels, "attention ");
        continue;
      }
      EXPECT_EQ(kernels, "attention_coopmat ");
      ++planned;
      // fp16 mode on a float32 graph: the casts become the kernel's prologues.
      codegen::CompileOptions half = o;
      half.precision = Precision::fp16;
      const std::string mode = kernels_of(codegen::compile_graph(bert_attention(s, DType::f32, true, false, true), half));
      EXPECT_NE(mode.find("attention_coopmat "), std::string::npos) << mode;
    }
    EXPECT_EQ(kernels_of(codegen::compile_graph(bert_attention({1, 12, 128, 128, 64, 64}, DType::f32, true), o)), "attention ");
    EXPECT_EQ(kernels_of(codegen::compile_graph(bert_attention({1, 12, 1, 128, 64, 64}, DType::f16, false), o)), "attention ");
    EXPECT_EQ(kernels_of(codegen::compile_graph(bert_attention({1, 2, 64, 64, 160, 160}, DType::f16, false), o)),
              "attention ");
  }
  EXPECT_GE(planned, 3 * 4) << "fewer profiles with tensor cores than expected";
}

// BERT's joined q/k/v product on tensor cores feeds the tensor-core attention through slices, in
// SPIR-V that validates, on the profiles with cooperative matrices (the GPU test below runs it).
TEST(AttentionCoopPlan, JoinedProjectionsFeedTensorCoreAttention) {
  for (const char* profile : {"nvidia", "amd-rdna3", "intel-xe2"}) {
    codegen::CompileOptions o;
    o.target = find_target(profile).limits;
    o.precision = Precision::fp16;
    EXPECT_EQ(kernels_of(codegen::compile_graph(bert_self_attention(2, 128, 4, 64), o)),
              "matmul_coopmat attention_coopmat ")
        << profile;
  }
}

// Forcing: every tile that fits compiles; a tile, operand type or target that does not fit is a
// one-line error naming the op and why.
TEST(AttentionCoopPlan, ForcedTilesCompileOrNameWhyNot) {
  codegen::CompileOptions o;
  o.target = find_target("nvidia").limits;
  ir::Graph g = bert_attention({1, 2, 100, 90, 64, 64}, DType::f16, true);
  for (const char* tiles : {"64x64", "64x32", "32x64", "32x32", "64x16", "32x16"}) {
    o.forced_strategy["attention"] = std::string("coopmat=") + tiles;
    ModuleImage m = codegen::compile_graph(g, o);
    EXPECT_EQ(m.manifest.dispatches.at(0).strategy, std::string("coopmat ") + tiles);
    EXPECT_LE(m.manifest.dispatches.at(0).workgroup_memory_bytes, o.target.max_compute_shared_memory_size);
  }
  auto error_of = [&](const ir::Graph& graph, const std::string& forced, const TargetLimits& t) -> std::string {
    codegen::CompileOptions f;
    f.target = t;
    f.forced_strategy["attention"] = forced;
    try {
      codegen::compile_graph(graph, f);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(g, "coopmat=64x8", o.target).find("not whole fragments"), std::string::npos);
  EXPECT_NE(error_of(g, "coopmat=20x64", o.target).find("not BQxBK"), std::string::npos);
  EXPECT_NE(error_of(bert_attention({1, 2, 64, 64, 128, 128}, DType::f16, false), "coopmat=128x64", o.target)
                .find("bytes of workgroup memory"),
            std::string::npos);
  EXPECT_NE(error_of(bert_attention({1, 2, 64, 64, 64, 64}, DType::f32, false), "coopmat", o.target).find("not float16"),
            std::string::npos);
  EXPECT_NE(error_of(g, "coopmat", find_target("lavapipe").limits).find("cooperative"), std::string::npos);
  const std::string e = error_of(g, "coopmat=64x8", o.target);
  EXPECT_NE(e.find("attention"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

class AttentionCoopGpu : public ::testing::TestWithParam<Form> {
 protected:
  void SetUp() override {
    if (!device_has(GetParam())) GTEST_SKIP() << no_form_reason(GetParam());
  }
  GpuRunOptions options(const std::string& tiles = "") const {
    GpuRunOptions o;
    o.rel_tol = 1e-2;  // float16 q, k, v, probabilities and result; float32 sums
    o.abs_tol = 5e-3;
    keep_only(o, GetParam());
    o.forced_strategy["attention"] = tiles.empty() ? "coopmat" : "coopmat=" + tiles;
    return o;
  }
  void expect_match(const ir::Graph& g, const std::map<std::string, HostTensor>& inputs, const GpuRunOptions& o) {
    GpuRun run = run_on_gpu(g, inputs, o);
    EXPECT_EQ(kernels_of(run.module), "attention_coopmat ");
    EXPECT_TRUE(declares(run.module, GetParam()));
    EXPECT_TRUE(outputs_match(run, o));
  }
};

// Query and key counts that leave partial tiles, head dims padded to whole fragments (24, 40, 80),
// keys stored transposed, every tiling, and a mask.
TEST_P(AttentionCoopGpu, Fp16AttentionMatchesTheReference) {
  uint32_t seed = 300;
  for (const char* tiles : {"", "64x64", "64x32", "32x64", "32x16"}) {
    for (auto [s, mask, kt] : std::vector<std::tuple<Dims, bool, bool>>{{{1, 2, 100, 77, 64, 64}, true, false},
                                                                      {{2, 3, 64, 130, 32, 48}, false, true},
                                                                      {{1, 1, 33, 200, 128, 128}, true, false},
                                                                      {{1, 2, 50, 66, 80, 40}, false, false},
                                                                      {{1, 1, 17, 9, 24, 16}, true, true}}) {
      if (std::string(tiles) == "64x64" && s.d > 64) continue;  // does not fit 48 KiB: its own test below
      ir::Graph g = bert_attention(s, DType::f16, mask, kt);
      SCOPED_TRACE(std::string(tiles) + " sq " + std::to_string(s.sq) + " sk " + std::to_string(s.sk) + " d " +
                   std::to_string(s.d));
      expect_match(g, random_inputs(g, seed++), options(tiles));
    }
  }
}

// Scores whose row maximum keeps growing by more than the rescaling threshold from key tile to
// key tile (a mask rising along the keys), so the output accumulators are rescaled on most tiles;
// causal masking with the tile skip; rows whose keys are all hidden (0/0: NaN, as softmax gives)
// and a NaN score.
TEST_P(AttentionCoopGpu, RescalingHiddenRowsAndNaNMatchTheReference) {
  {
    Dims s{1, 2, 70, 260, 64, 64};
    ir::Graph g = bert_attention(s, DType::f16, true);
    std::map<std::string, HostTensor> in = random_inputs(g, 41);
    HostTensor& mask = in.at("mask");
    for (int64_t i = 0; i < s.sq; ++i)
      for (int64_t j = 0; j < s.sk; ++j) mask.set_f64(i * s.sk + j, double(j % 97) * 0.4 + double(i % 3) - 30.0);
    for (const char* tiles : {"64x32", "32x64"}) {
      SCOPED_TRACE(tiles);
      expect_match(g, in, options(tiles));
    }
    for (int64_t j = 0; j < s.sk; ++j) mask.set_f64(5 * s.sk + j, -INFINITY);  // row 5: every key hidden
    mask.set_f64(9 * s.sk + 100, NAN);                                       // row 9: one NaN score
    expect_match(g, in, options());
  }
  for (Dims s : {Dims{3, 1, 150, 150, 64, 64}, Dims{2, 1, 40, 100, 32, 32}}) {
    ir::Graph g = causal_attention(s, DType::f16);
    SCOPED_TRACE("causal sq " + std::to_string(s.sq));
    expect_match(g, random_inputs(g, 43), options());
  }
}

// The fp16 precision mode on a float32 BERT attention: tensor cores through the mode's casts,
// within the mode's bound against the float64 reference of the float32 graph.
TEST_P(AttentionCoopGpu, Fp16PrecisionModeRunsTheFloat32GraphOnTensorCores) {
  Dims s{2, 4, 128, 128, 64, 64};
  ir::Graph g = bert_attention(s, DType::f32, true, false, true);
  GpuRunOptions o = options();
  o.forced_strategy.clear();  // the planner's choice
  o.precision = Precision::fp16;
  GpuRun run = run_on_gpu(g, random_inputs(g, 45), o);
  EXPECT_NE(kernels_of(run.module).find("attention_coopmat "), std::string::npos) << kernels_of(run.module);
  EXPECT_TRUE(outputs_match(run, o));
}

// HF BERT's q, k and v: products of one activation, joined into one product
// (ir::fuse_shared_input_matmuls_pass) whose slices the tensor-core kernel reads with the head
// split, in the fp16 precision mode.
TEST_P(AttentionCoopGpu, Fp16ModeReadsJoinedProjectionsThroughSlices) {
  const ir::Graph g = bert_self_attention(2, 128, 4, 64);
  GpuRunOptions o = options();
  o.forced_strategy.clear();
  o.precision = Precision::fp16;
  GpuRun run = run_on_gpu(g, random_inputs(g, 47), o);
  EXPECT_EQ(kernels_of(run.module), "matmul_coopmat attention_coopmat ") << kernels_of(run.module);
  EXPECT_TRUE(outputs_match(run, o));
}

INSTANTIATE_TEST_SUITE_P(Forms, AttentionCoopGpu, ::testing::Values(Form::khr, Form::nv),
                         [](const ::testing::TestParamInfo<Form>& i) { return i.param == Form::khr ? "KHR" : "NV"; });

}  // namespace
}  // namespace vkc::test
