// Attention (issue 23 item 3): the forms exporters emit fuse into one attention op
// (ir/passes/fuse_attention.cpp), whose tiled online-softmax kernel runs on the device against the
// reference interpreter of the UNFUSED graph: several shapes (query and key counts not multiples
// of the tiles, head dims 16 to 128, Sq = 1 as in decoding), every tiling, masks of every
// broadcast, fully masked rows, NaN, a head split fused into the loads, and the fallback to the
// unfused kernels when no tiling fits the target.
#include <cmath>
#include <random>

#include "codegen/kernels/attention_plan.h"
#include "ir/pass_manager.h"
#include "ir/passes.h"
#include "kernels/bert_self_attention.h"
#include "kernels/op_test_helpers.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

enum class Form {
  Sdpa,            // torch SDPA export: q * sqrt(s) @ (k^T * sqrt(s))
  Bert,            // HF BERT: (q @ k^T) / sqrt(d) + mask
  Vit,             // torchvision ViT: (q * s) @ k^T
  TransposeFlag,   // matmul(q, k, transpose_b)
  KPreTransposed,  // k arrives as [.., D, Sk]
};

struct Shape6 {
  int64_t b, h, sq, sk, d, dv;
};

ir::Value* scalar(ir::Graph& g, double v) {
  HostTensor t(DType::f32, {1});
  t.set_f64(0, v);
  return g.add_constant(t);
}

// The attention pattern over q [b,h,sq,d], k [b,h,sk,d] (or [b,h,d,sk]), v [b,h,sk,dv], with an
// optional mask input of `mask_shape`.
ir::Graph pattern(Form form, Shape6 s, const Shape* mask_shape = nullptr) {
  ir::Graph g;
  ir::Value* q = g.add_input("q", f32({s.b, s.h, s.sq, s.d}));
  ir::Value* k = g.add_input("k", form == Form::KPreTransposed ? f32({s.b, s.h, s.d, s.sk}) : f32({s.b, s.h, s.sk, s.d}));
  ir::Value* v = g.add_input("v", f32({s.b, s.h, s.sk, s.dv}));
  ir::Value* mask = mask_shape ? g.add_input("mask", f32(*mask_shape)) : nullptr;
  const double scale = 1.0 / std::sqrt(double(s.d));
  auto kt = [&] { return g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result(); };
  ir::Value* scores = nullptr;
  switch (form) {
    case Form::Sdpa: {
      ir::Value* qs = g.add_op(K::Mul, {q, scalar(g, std::sqrt(scale))})->result();
      ir::Value* ks = g.add_op(K::Mul, {kt(), scalar(g, std::sqrt(scale))})->result();
      scores = g.add_op(K::MatMul, {qs, ks})->result();
      break;
    }
    case Form::Bert:
      scores = g.add_op(K::Div, {g.add_op(K::MatMul, {q, kt()})->result(), scalar(g, std::sqrt(double(s.d)))})->result();
      break;
    case Form::Vit:
      scores = g.add_op(K::MatMul, {g.add_op(K::Mul, {q, scalar(g, scale)})->result(), kt()})->result();
      break;
    case Form::TransposeFlag:
      scores = g.add_op(K::Mul, {g.add_op(K::MatMul, {q, k}, {{"transpose_b", true}})->result(), scalar(g, scale)})
                   ->result();
      break;
    case Form::KPreTransposed:
      scores = g.add_op(K::Mul, {g.add_op(K::MatMul, {q, k})->result(), scalar(g, scale)})->result();
      break;
  }
  if (mask) scores = g.add_op(K::Add, {scores, mask})->result();
  ir::Value* p = g.add_op(K::Softmax, {scores}, {{"axis", int64_t(-1)}}, "softmax")->result();
  g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  return g;
}

// Fused attention kernels: the FMA one, or on a device with tensor cores the fp16 precision mode's
// "attention_coopmat" (the H200 takes it where lavapipe takes the FMA kernel).
int attention_dispatches(const ModuleImage& m) {
  int n = 0;
  for (const DispatchDesc& d : m.manifest.dispatches) n += d.kernel == "attention" || d.kernel == "attention_coopmat";
  return n;
}

void expect_fused_match(const ir::Graph& g, uint32_t seed, const std::string& tiles = "",
                        std::map<std::string, HostTensor> inputs = {}, const std::string& target = "") {
  GpuRunOptions o;
  o.target = target;
  if (!tiles.empty()) o.forced_strategy["attention"] = tiles;
  o.rel_tol = 2e-5;
  if (inputs.empty()) inputs = random_inputs(g, seed);
  try {
    GpuRun run = run_on_gpu(g, inputs, o);
    EXPECT_TRUE(outputs_match(run, o));
    if (split_testing()) return;  // beyond the binding: unfused or cut into pieces (the numbers still checked)
    EXPECT_EQ(attention_dispatches(run.module), 1) << "the pattern did not become one attention kernel";
    EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
    if (!tiles.empty()) {
      EXPECT_EQ(run.module.manifest.dispatches[0].strategy, "tiled " + tiles);
    }
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(Attention, EveryExportedFormFusesAndMatches) {
  const Shape6 shapes[] = {{1, 2, 37, 45, 16, 24}, {2, 3, 64, 64, 64, 64}, {1, 1, 1, 77, 64, 64},
                           {1, 2, 33, 130, 128, 128}, {1, 1, 70, 19, 80, 40}};
  const Form forms[] = {Form::Sdpa, Form::Bert, Form::Vit, Form::TransposeFlag, Form::KPreTransposed};
  uint32_t seed = 1;
  for (const Shape6& s : shapes)
    for (Form f : forms) {
      SCOPED_TRACE(cat("form ", int(f), " shape ", s.b, "x", s.h, " sq ", s.sq, " sk ", s.sk, " d ", s.d, " dv ", s.dv));
      expect_fused_match(pattern(f, s), seed++);
    }
}

TEST(Attention, EveryTilingMatches) {
  const Shape mask{1, 1, 1, 45};
  for (const char* tiles : {"16x8", "16x16", "16x32", "32x16", "32x32", "48x16", "48x32", "64x8", "64x32"}) {
    SCOPED_TRACE(tiles);
    expect_fused_match(pattern(Form::Bert, {2, 2, 70, 45, 16, 24}, &mask), 11, tiles);
  }
}

TEST(Attention, MasksOfEveryBroadcastMatch) {
  const Shape6 s{2, 3, 21, 29, 32, 32};
  const Shape masks[] = {{2, 1, 1, 29}, {21, 29}, {2, 3, 21, 29}, {1}, {3, 1, 29}, {29}};
  uint32_t seed = 20;
  for (const Shape& m : masks) {
    SCOPED_TRACE(cat("mask ", shape_str(m)));
    expect_fused_match(pattern(Form::Bert, s, &m), seed++);
  }
}

// Random inputs of an attention pattern with an [sq, sk] mask, the mask causal as models build it
// (large negative above the diagonal).
std::map<std::string, HostTensor> causal_mask_inputs(const ir::Graph& g, int64_t sq, int64_t sk, uint32_t seed) {
  std::map<std::string, HostTensor> in = random_inputs(g, seed);
  HostTensor& mask = in.at("mask");
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < sk; ++j) mask.set_f64(i * sk + j, j > i ? -1e9 : 0.0);
  return in;
}

// A causal mask, rows whose every key is hidden (-inf everywhere: NaN, as softmax gives), and a
// NaN in q (its row is NaN).
TEST(Attention, HiddenKeysAndNaNMatchTheReference) {
  const Shape6 s{1, 2, 40, 40, 16, 16};
  const Shape mshape{40, 40};
  ir::Graph g = pattern(Form::Sdpa, s, &mshape);
  std::map<std::string, HostTensor> in = causal_mask_inputs(g, 40, 40, 5);
  HostTensor& mask = in.at("mask");
  expect_fused_match(g, 0, "", in);
  for (int64_t j = 0; j < 40; ++j) mask.set_f64(7 * 40 + j, -INFINITY);  // row 7: no key left
  in.at("q").set_f64(3 * 16 + 2, NAN);                                 // row 3 of head 0
  expect_fused_match(g, 0, "", in);
  expect_fused_match(g, 0, "16x16", in);
}

// The rows' maxima over a key tile combine through subgroup shuffles where the target's one
// subgroup size is 8 or more (lavapipe: 8, so each subgroup is one row group), else through
// workgroup memory (the same device with its shuffles hidden from the planner): both on hidden
// keys, a row with no key left, a NaN, a partial last key tile and several tile widths.
TEST(Attention, RowMaximaThroughShufflesAndThroughWorkgroupMemory) {
  const Shape6 s{1, 2, 40, 37, 16, 16};
  const Shape mshape{40, 37};
  ir::Graph g = pattern(Form::Sdpa, s, &mshape);
  std::map<std::string, HostTensor> in = causal_mask_inputs(g, 40, 37, 6);
  for (int64_t j = 0; j < 37; ++j) in.at("mask").set_f64(9 * 37 + j, -INFINITY);  // row 9: no key left
  in.at("q").set_f64(5 * 16 + 1, NAN);
  EXPECT_TRUE(codegen::kernels::attention_row_max_by_shuffle(find_target("lavapipe").limits));
  EXPECT_TRUE(codegen::kernels::attention_row_max_by_shuffle(find_target("nvidia").limits));
  EXPECT_FALSE(codegen::kernels::attention_row_max_by_shuffle(find_target("vulkan-min").limits));
  EXPECT_FALSE(codegen::kernels::attention_row_max_by_shuffle(find_target("amd-rdna3").limits));  // wave32 or 64
  for (bool shuffles : {true, false})
    for (const char* tiles : {"16x8", "16x16", "32x32"}) {
      SCOPED_TRACE(cat(shuffles ? "shuffles " : "workgroup memory ", tiles));
      GpuRunOptions o;
      o.forced_strategy["attention"] = tiles;
      o.rel_tol = 2e-5;
      if (!shuffles) o.adjust_target = [](TargetLimits& t) { t.subgroup_shuffle = false; };
      GpuRun run = run_on_gpu(g, in, o);
      EXPECT_TRUE(outputs_match(run, o));
      if (split_testing()) continue;  // cut into pieces (the numbers still checked)
      ASSERT_EQ(run.module.manifest.dispatches.size(), 1u);
      const DispatchDesc& d = run.module.manifest.dispatches[0];
      EXPECT_EQ(d.kernel, "attention");
      // Measured from the SPIR-V the device ran, not from the plan.
      const auto& caps = d.spirv.capabilities;
      EXPECT_EQ(std::find(caps.begin(), caps.end(), "GroupNonUniformShuffle") != caps.end(), shuffles);
    }
}

// A target with 4 storage buffers per stage (vulkan-min) cannot bind q, k, v, a mask and the
// result: the masked attention stays the unfused chain there (it was an internal error), the
// unmasked one still fuses.
TEST(Attention, MaskedAttentionBeyondTheTargetsBindingsStaysUnfused) {
  const Shape6 s{1, 2, 20, 19, 16, 16};
  const Shape mshape{20, 19};
  ir::Graph masked = pattern(Form::Bert, s, &mshape);
  GpuRunOptions o;
  o.target = "vulkan-min";
  o.rel_tol = 2e-5;
  GpuRun run = run_on_gpu(masked, random_inputs(masked, 8), o);
  EXPECT_TRUE(outputs_match(run, o));
  EXPECT_EQ(attention_dispatches(run.module), 0);
  ir::Graph plain = pattern(Form::Bert, s);
  GpuRun fused = run_on_gpu(plain, random_inputs(plain, 9), o);
  EXPECT_TRUE(outputs_match(fused, o));
  if (!split_testing()) {
    EXPECT_EQ(attention_dispatches(fused.module), 1);
  }
}

// Where masks (PyTorch's masked_fill, a decoder's mask of the cache positions after the token):
// select(hidden, fill, scores) and select(keep, scores, fill), with the scale inside or outside
// the Where, fills of -inf, -1e9 and a finite -2 (the op puts the fill in the score's place, so
// even a fill that does not hide the key is exact), a mask broadcast over heads and queries
// (the decoder's [Sk] mask) or per query, rows whose every key is hidden, and scores far above
// 32 (where adding -1e9 instead would round differently): one attention dispatch each, matching
// the reference of the unfused graph.
TEST(Attention, WhereMasksFuseAndMatch) {
  uint32_t seed = 60;
  for (bool keep_branch : {false, true})
    for (bool scale_outside : {false, true})
      for (double fill : {-double(INFINITY), -1e9, -2.0})
        for (const Shape& mask_shape : {Shape{29}, Shape{21, 29}}) {
          SCOPED_TRACE(cat("keep ", keep_branch, " scale outside ", scale_outside, " fill ", fill, " mask ",
                           shape_str(mask_shape)));
          const Shape6 s{2, 3, 21, 29, 16, 16};
          ir::Graph g;
          ir::Value* q = g.add_input("q", f32({s.b, s.h, s.sq, s.d}));
          ir::Value* k = g.add_input("k", f32({s.b, s.h, s.sk, s.d}));
          ir::Value* v = g.add_input("v", f32({s.b, s.h, s.sk, s.dv}));
          ir::Value* hidden = g.add_input("hidden", {DType::boolean, mask_shape});
          ir::Value* kt = g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
          ir::Value* x = g.add_op(K::MatMul, {q, kt})->result();
          if (!scale_outside) x = g.add_op(K::Mul, {x, scalar(g, 0.25)})->result();
          ir::Value* f = scalar(g, fill);
          ir::Value* cond = keep_branch ? g.add_op(K::Not, {hidden})->result() : hidden;
          x = g.add_op(K::Select, {cond, keep_branch ? x : f, keep_branch ? f : x})->result();
          if (scale_outside) x = g.add_op(K::Mul, {x, scalar(g, 0.25)})->result();
          ir::Value* p = g.add_op(K::Softmax, {x}, {{"axis", int64_t(-1)}})->result();
          g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
          std::map<std::string, HostTensor> in = random_inputs(g, seed++);
          for (const char* name : {"q", "k"})  // scores up to 16 * 8 * 8 * 0.25 = 256
            for (int64_t i = 0; i < in.at(name).numel(); ++i) in.at(name).set_f64(i, in.at(name).get_f64(i) * 8);
          HostTensor& h = in.at("hidden");
          const int64_t n = h.numel(), cols = mask_shape.back();
          for (int64_t i = 0; i < n; ++i) {
            const int64_t row = i / cols, col = i % cols;
            // Keys after a "position" hidden; the per-query mask hides all of row 4's keys.
            h.set_f64(i, double(col > 10 + row % 7 || (mask_shape.size() == 2 && row == 4)));
          }
          expect_fused_match(g, 0, "", in);
        }
}

// GPT-2's older export, Where(causal, scores / sqrt(d), finfo.min) + attention_mask: the fill
// first, then the mask added to every score (the op's added_mask), with the padding mask per
// batch [B, 1, 1, Sk] or per query [Sq, Sk], padded keys at -1e4 or finfo.min (then a hidden
// score is finfo.min + finfo.min = -inf, as in PyTorch), and a batch whose first query row sees
// only padded keys. One attention dispatch each, matching the reference of the unfused graph.
// A mask added before the Where, or a scale outside the add (it would scale the mask too), is
// not the op's order: those stay unfused, and still match.
ir::Graph where_then_added_mask(const Shape& added_shape, bool added_first, bool scale_outside_add) {
  ir::Graph g;
  ir::Value* q = g.add_input("q", f32({2, 3, 21, 16}));
  ir::Value* k = g.add_input("k", f32({2, 3, 21, 16}));
  ir::Value* v = g.add_input("v", f32({2, 3, 21, 16}));
  HostTensor lower(DType::boolean, {1, 1, 21, 21});  // GPT-2's causal buffer, a constant
  for (int64_t i = 0; i < 21; ++i)
    for (int64_t j = 0; j < 21; ++j) lower.set_f64(i * 21 + j, double(j <= i));
  ir::Value* causal = g.add_constant(lower, "causal");
  ir::Value* added = g.add_input("added", f32(added_shape));
  ir::Value* x = g.add_op(K::MatMul, {q, g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result()})->result();
  if (!scale_outside_add) x = g.add_op(K::Div, {x, scalar(g, 4.0)})->result();
  ir::Value* fill = scalar(g, -3.4028234663852886e38);
  if (added_first) x = g.add_op(K::Add, {x, added})->result();
  x = g.add_op(K::Select, {causal, x, fill})->result();
  if (!added_first) x = g.add_op(K::Add, {x, added})->result();
  if (scale_outside_add) x = g.add_op(K::Div, {x, scalar(g, 4.0)})->result();
  ir::Value* p = g.add_op(K::Softmax, {x}, {{"axis", int64_t(-1)}})->result();
  g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  return g;
}

std::map<std::string, HostTensor> gpt2_masks(const ir::Graph& g, uint32_t seed, double padded) {
  std::map<std::string, HostTensor> in = random_inputs(g, seed);
  HostTensor& a = in.at("added");
  const int64_t cols = a.shape().back();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const int64_t row = i / cols, col = i % cols;  // keys 0-2 padded in batch 1 (a left-padded prompt)
    a.set_f64(i, a.shape().size() == 4 && row == 1 && col < 3 ? padded : 0.5 * a.get_f64(i));
  }
  return in;
}

TEST(Attention, WhereThenAddedMaskFusesAndMatches) {
  uint32_t seed = 70;
  for (double padded : {-1e4, -3.4028234663852886e38})
    for (const Shape& added_shape : {Shape{2, 1, 1, 21}, Shape{21, 21}}) {
      SCOPED_TRACE(cat("padded ", padded, " added mask ", shape_str(added_shape)));
      ir::Graph g = where_then_added_mask(added_shape, false, false);
      expect_fused_match(g, 0, "", gpt2_masks(g, seed++, padded));
    }
  {  // The fp16 precision mode: q, k and v in float16, the masks as they are (5e-3, issue 22).
    ir::Graph g = where_then_added_mask(Shape{2, 1, 1, 21}, false, false);
    GpuRunOptions o;
    o.precision = Precision::fp16;
    o.rel_tol = 5e-3;
    o.abs_tol = 5e-3;
    GpuRun run = run_on_gpu(g, gpt2_masks(g, 80, -1e4), o);
    EXPECT_TRUE(outputs_match(run, o));
    if (!split_testing()) {
      EXPECT_EQ(attention_dispatches(run.module), 1);
    }
  }
  for (bool added_first : {false, true}) {
    SCOPED_TRACE(cat("added first ", added_first));
    ir::Graph g = where_then_added_mask(Shape{2, 1, 1, 21}, added_first, !added_first);
    GpuRun run = run_on_gpu(g, gpt2_masks(g, 90, -1e4));
    EXPECT_TRUE(outputs_match(run));
    EXPECT_EQ(attention_dispatches(run.module), 0);
  }
}

// The attention op itself with causal = true and k_transposed = true (the pass does not form
// them from these graphs; the kernel and the reference must agree on them all the same).
TEST(Attention, CausalAndTransposedKeysOnTheOpItself) {
  for (bool kt : {false, true})
    for (auto [sq, sk] : {std::pair<int64_t, int64_t>{33, 33}, {5, 47}, {1, 20}, {20, 5}}) {
      SCOPED_TRACE(cat("k_transposed ", kt, " sq ", sq, " sk ", sk));
      ir::Graph g;
      ir::Value* q = g.add_input("q", f32({2, sq, 32}));
      ir::Value* k = g.add_input("k", kt ? f32({2, 32, sk}) : f32({2, sk, 32}));
      ir::Value* v = g.add_input("v", f32({2, sk, 24}));
      ir::Op* a = g.add_op(K::Attention, {q, k, v}, {{"scale", 0.2}, {"causal", true}, {"k_transposed", kt}}, "attention");
      g.add_output(a->result(), "out");
      expect_fused_match(g, 31);
      expect_fused_match(g, 31, "32x16");
      expect_fused_match(g, 31, "16x8");  // the key tiles after the diagonal are skipped
    }
}

// BERT splits heads with reshape + transpose before the scores: they fuse into q/k/v's loads.
TEST(Attention, HeadSplitFusesIntoTheLoads) {
  const int64_t b = 2, sq = 19, h = 4, d = 16;
  ir::Graph g;
  auto heads = [&](const char* name) {
    ir::Value* x = g.add_input(name, f32({b, sq, h * d}));
    ir::Value* r = g.add_op(K::Reshape, {x}, {{"shape", Ints{b, sq, h, d}}})->result();
    return g.add_op(K::Transpose, {r}, {{"perm", Ints{0, 2, 1, 3}}})->result();
  };
  ir::Value* q = heads("q");
  ir::Value* k = heads("k");
  ir::Value* v = heads("v");
  ir::Value* kt = g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
  ir::Value* s = g.add_op(K::Div, {g.add_op(K::MatMul, {q, kt})->result(), scalar(g, 4.0)})->result();
  ir::Value* p = g.add_op(K::Softmax, {s}, {{"axis", int64_t(3)}})->result();
  g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  expect_fused_match(g, 41);
}

// The head split in front of the attention op (reshape + transpose: strides (h*d, d, 1) per
// batch, head and token) is read in place through those strides, one multiply-add per element
// (codegen/kernels/attention.cpp, operand_access), also with k stored transposed ([.., d, keys]:
// the key's stride is 1) and with k and v behind a slice of one joined tensor; against the
// reference on the device.
TEST(Attention, HeadSplitIsReadInPlaceThroughItsStrides) {
  const int64_t b = 2, sq = 21, h = 3, d = 16;
  for (bool kt : {false, true}) {
    SCOPED_TRACE(kt ? "k transposed" : "k as rows");
    ir::Graph g;
    auto heads = [&](ir::Value* x, int64_t pieces) {
      ir::Value* r = g.add_op(K::Reshape, {x}, {{"shape", Ints{b, sq, h * pieces, d}}})->result();
      return g.add_op(K::Transpose, {r}, {{"perm", Ints{0, 2, 1, 3}}})->result();
    };
    ir::Value* q = heads(g.add_input("q", f32({b, sq, h * d})), 1);
    ir::Value* kv = g.add_input("kv", f32({b, sq, 2 * h * d}));
    auto half = [&](int64_t i) {
      ir::Value* x = g.add_op(K::Slice, {kv}, {{"starts", Ints{i * h * d}}, {"ends", Ints{(i + 1) * h * d}}, {"axes", Ints{2}}})->result();
      return heads(x, 1);
    };
    ir::Value* k = half(0);
    if (kt) k = g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
    ir::Value* v = half(1);
    ir::Value* o = g.add_op(K::Attention, {q, k, v}, {{"scale", 0.25}, {"k_transposed", kt}})->result();
    g.add_output(o, "out");
    const std::string glsl = emitted_glsl(g, find_target("nvidia").limits, {});
    EXPECT_NE(glsl.find(cat("q_elem(uint base, uint row, uint col) { return q_at(base + row * ", h * d, "u + col * 1u); }")),
              std::string::npos) << glsl;
    EXPECT_NE(glsl.find(cat("k_elem(uint base, uint row, uint col) { return k_at(base + row * ", 2 * h * d, "u + col * 1u); }")),
              std::string::npos) << glsl;
    EXPECT_NE(glsl.find(cat("v_elem(uint base, uint row, uint col) { return v_at(base + row * ", 2 * h * d, "u + col * 1u); }")),
              std::string::npos) << glsl;
    GpuRun run = run_on_gpu(g, random_inputs(g, 61));
    EXPECT_TRUE(outputs_match(run));
  }
}

// torchvision's ViT (nn.MultiheadAttention, sequence first) splits its joined projection
// [S, B, 3E] by moving the 3 to the front (a transpose), squeezing and slicing. The transpose's
// three slices become transposed slices of the projection (ir::slice_before_transpose_pass), and
// attention reads q, k and v in place through the composed views, whose [S, B * H, D] step merges
// dims that are not contiguous (B's stride is 3E): one dispatch, no copy of the transposed tensor.
TEST(Attention, SequenceFirstQkvSplitIsReadInPlace) {
  const int64_t s = 21, b = 2, h = 3, d = 16, e = h * d;
  ir::Graph g;
  ir::Value* p = g.add_input("p", f32({s, b, 3 * e}));
  ir::Value* r = g.add_op(K::Reshape, {p}, {{"shape", Ints{1, s, b, 3, e}}})->result();
  ir::Value* t = g.add_op(K::Transpose, {r}, {{"perm", Ints{3, 1, 2, 0, 4}}})->result();
  ir::Value* sq = g.add_op(K::Reshape, {t}, {{"shape", Ints{3, s, b, e}}})->result();
  auto part = [&](int64_t i) {
    ir::Value* x = g.add_op(K::Slice, {sq}, {{"starts", Ints{i}}, {"ends", Ints{i + 1}}, {"axes", Ints{0}}})->result();
    x = g.add_op(K::Reshape, {x}, {{"shape", Ints{s, b * h, d}}})->result();
    x = g.add_op(K::Transpose, {x}, {{"perm", Ints{1, 0, 2}}})->result();
    return g.add_op(K::Reshape, {x}, {{"shape", Ints{b, h, s, d}}})->result();
  };
  ir::Value* o = g.add_op(K::Attention, {part(0), part(1), part(2)}, {{"scale", 0.25}})->result();
  g.add_output(o, "out");
  ir::Graph rewritten = g.clone();  // as the compiler's pipeline leaves it (run_on_gpu runs that)
  ir::PassManager pm;
  pm.add(ir::slice_before_transpose_pass());
  pm.run(rewritten);
  const std::string glsl = emitted_glsl(rewritten, find_target("nvidia").limits, {});
  for (const char* x : {"q", "k", "v"})
    EXPECT_NE(glsl.find(cat(x, "_elem(uint base, uint row, uint col) { return ", x, "_at(base + row * ", b * 3 * e,
                            "u + col * 1u); }")),
              std::string::npos)
        << glsl;
  GpuRun run = run_on_gpu(g, random_inputs(g, 67));
  EXPECT_TRUE(outputs_match(run));
  if (split_testing()) return;  // beyond the binding: cut into pieces (the numbers still checked)
  EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
}

// Attention's result transposed back to [B, S, H, D] (BERT, ViT): the kernel stores each element
// at its place in the transposed result (an epilogue transpose), so the product after it reads
// contiguous rows; elementwise ops after the transpose index their side operands there (a
// residual of the transposed shape, a broadcast vector). Sequence first (ViT): the transpose back
// to batch first after the output projection moves onto its lhs (ir::transpose_rows_into_product_pass)
// and joins the same store, and the residual add joins the projection: two dispatches.
TEST(Attention, ResultStoredTransposedForTheProductAfterIt) {
  const int64_t b = 2, h = 3, s = 21, d = 16, e = h * d;
  auto attention = [&](ir::Graph& g) {
    return g.add_op(K::Attention, {g.add_input("q", f32({b, h, s, d})), g.add_input("k", f32({b, h, s, d})),
                                   g.add_input("v", f32({b, h, s, d}))},
                    {{"scale", 0.25}})
        ->result();
  };
  {
    SCOPED_TRACE("epilogue: transpose, then side operands");
    ir::Graph g;
    ir::Value* t = g.add_op(K::Transpose, {attention(g)}, {{"perm", Ints{0, 2, 1, 3}}})->result();
    ir::Value* r = g.add_op(K::Add, {t, g.add_input("res", f32({b, s, h, d}))})->result();
    ir::Value* y = g.add_op(K::Mul, {r, g.add_input("scale", f32({d}))})->result();
    g.add_output(y, "y");
    const std::string glsl = emitted_glsl(g, find_target("nvidia").limits, {});
    // [b, h, s, d] -> [b, s, h, d]: d stays in place (i % 16), b is outermost (no modulo).
    EXPECT_NE(glsl.find(cat("uint j = i % 16u + (i / ", h * s * d, "u) * ", h * s * d, "u + ((i / 16u) % ", s,
                            "u) * ", h * d, "u + ((i / ", s * d, "u) % ", h, "u) * 16u;")),
              std::string::npos)
        << glsl;
    GpuRun run = run_on_gpu(g, random_inputs(g, 71));
    EXPECT_TRUE(outputs_match(run));
    if (!split_testing()) {
      EXPECT_EQ(run.module.manifest.dispatches.size(), 1u);
    }
  }
  {
    SCOPED_TRACE("sequence first: the output projection and the transpose back");
    ir::Graph g;
    ir::Value* t6 = g.add_op(K::Transpose, {attention(g)}, {{"perm", Ints{2, 0, 1, 3}}})->result();
    ir::Value* a = g.add_op(K::Reshape, {t6}, {{"shape", Ints{s * b, e}}})->result();
    ir::Value* p = g.add_op(K::Gemm, {a, g.add_input("w", f32({e, e})), g.add_input("bias", f32({e}))},
                            {{"transpose_b", true}})
                       ->result();
    ir::Value* r = g.add_op(K::Reshape, {p}, {{"shape", Ints{s, b, e}}})->result();
    ir::Value* t7 = g.add_op(K::Transpose, {r}, {{"perm", Ints{1, 0, 2}}})->result();
    g.add_output(g.add_op(K::Add, {g.add_input("x", f32({b, s, e})), t7})->result(), "y");
    GpuRunOptions o;
    o.rel_tol = 2e-5;
    GpuRun run = run_on_gpu(g, random_inputs(g, 73), o);
    EXPECT_TRUE(outputs_match(run, o));
    if (split_testing()) return;
    ASSERT_EQ(run.module.manifest.dispatches.size(), 2u);
    int transposes = 0;
    for (const std::string& op : run.module.manifest.dispatches[0].ops) transposes += op.rfind("transpose", 0) == 0;
    EXPECT_EQ(transposes, 2) << "both transposes in the attention's store";
  }
}

// HF BERT's projections: q, k and v are products of one activation with constant weights (+ bias),
// which become one product (ir::fuse_shared_input_matmuls_pass) whose slices the attention kernel
// reads through its loads (Prologue::Slice), with the head split: two dispatches in all.
TEST(Attention, SharedInputProjectionsJoinAndFeedAttentionThroughSlices) {
  const ir::Graph g = bert_self_attention(2, 19, 4, 16);
  GpuRunOptions o;
  o.rel_tol = 2e-5;
  GpuRun run = run_on_gpu(g, random_inputs(g, 43), o);
  EXPECT_TRUE(outputs_match(run, o));
  if (split_testing()) return;  // beyond the binding: cut into pieces (the numbers still checked)
  ASSERT_EQ(run.module.manifest.dispatches.size(), 2u);
  EXPECT_EQ(attention_dispatches(run.module), 1);
  int slices = 0;
  for (const std::string& op : run.module.manifest.dispatches[1].ops) slices += op.rfind("slice", 0) == 0;
  EXPECT_EQ(slices, 3);
}

// Grouped-query attention as LLaMA-style models export it: kv heads repeated for their query
// heads (repeat_kv: unsqueeze, Expand, reshape) before the product. The repeat is an index map in
// the attention kernel's loads (Prologue::Broadcast): one dispatch, no copy of k and v per head.
TEST(Attention, GroupedQueryHeadsRepeatThroughTheLoads) {
  const int64_t b = 2, h = 6, kv = 2, sq = 13, sk = 21, d = 16;
  ir::Graph g;
  ir::Value* q = g.add_input("q", f32({b, h, sq, d}));
  auto repeat_kv = [&](const char* name) {
    ir::Value* x = g.add_input(name, f32({b, kv, sk, d}));
    ir::Value* u = g.add_op(K::Reshape, {x}, {{"shape", Ints{b, kv, 1, sk, d}}})->result();
    ir::Value* e = g.add_op(K::Broadcast, {u}, {{"shape", Ints{b, kv, h / kv, sk, d}}})->result();
    return g.add_op(K::Reshape, {e}, {{"shape", Ints{b, h, sk, d}}})->result();
  };
  ir::Value* k = repeat_kv("k");
  ir::Value* v = repeat_kv("v");
  ir::Value* kt = g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
  ir::Value* s = g.add_op(K::Mul, {g.add_op(K::MatMul, {q, kt})->result(), scalar(g, 0.25)})->result();
  ir::Value* p = g.add_op(K::Softmax, {s}, {{"axis", int64_t(-1)}})->result();
  g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  expect_fused_match(g, 44);
}

// The pieces of a LLaMA-style attention as exporters write them, for heads of d dims over s
// tokens: rotary embeddings (x * cos + rotate_half(x) * sin, the halves as a concat of a negated
// slice and a slice), repeat_kv of kv heads to h (Unsqueeze, Expand, Reshape), and scaled
// attention with the keys transposed.
struct LlamaAttention {
  ir::Graph& g;
  int64_t b, h, kv, s, d;
  ir::Value* cv = nullptr;
  ir::Value* sv = nullptr;

  LlamaAttention(ir::Graph& graph, int64_t b_, int64_t h_, int64_t kv_, int64_t s_, int64_t d_)
      : g(graph), b(b_), h(h_), kv(kv_), s(s_), d(d_) {
    HostTensor cos(DType::f32, {s, d}), sin(DType::f32, {s, d});
    for (int64_t t = 0; t < s; ++t)
      for (int64_t i = 0; i < d; ++i) {
        const double angle = double(t) * std::pow(10000.0, -2.0 * double(i % (d / 2)) / double(d));
        cos.set_f64(t * d + i, std::cos(angle));
        sin.set_f64(t * d + i, std::sin(angle));
      }
    cv = g.add_constant(cos);
    sv = g.add_constant(sin);
  }
  ir::Value* rope(ir::Value* x) {
    ir::Value* x1 = g.add_op(K::Slice, {x}, {{"starts", Ints{0}}, {"ends", Ints{d / 2}}, {"axes", Ints{3}}})->result();
    ir::Value* x2 = g.add_op(K::Slice, {x}, {{"starts", Ints{d / 2}}, {"ends", Ints{d}}, {"axes", Ints{3}}})->result();
    ir::Value* rot = g.add_op(K::Concat, {g.add_op(K::Neg, {x2})->result(), x1}, {{"axis", int64_t(-1)}})->result();
    return g.add_op(K::Add, {g.add_op(K::Mul, {x, cv})->result(), g.add_op(K::Mul, {rot, sv})->result()})->result();
  }
  ir::Value* repeat_kv(ir::Value* x) {
    ir::Value* u = g.add_op(K::Reshape, {x}, {{"shape", Ints{b, kv, 1, s, d}}})->result();
    ir::Value* e = g.add_op(K::Broadcast, {u}, {{"shape", Ints{b, kv, h / kv, s, d}}})->result();
    return g.add_op(K::Reshape, {e}, {{"shape", Ints{b, h, s, d}}})->result();
  }
  // softmax(q k^T / 4) v as the graph's output "out".
  void attend(ir::Value* q, ir::Value* k, ir::Value* v) {
    ir::Value* kt = g.add_op(K::Transpose, {k}, {{"perm", Ints{0, 1, 3, 2}}})->result();
    ir::Value* sc = g.add_op(K::Mul, {g.add_op(K::MatMul, {q, kt})->result(), scalar(g, 0.25)})->result();
    ir::Value* p = g.add_op(K::Softmax, {sc}, {{"axis", int64_t(-1)}})->result();
    g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
  }
};

// LLaMA-style attention: rotary embeddings on q and k (x * cos + rotate_half(x) * sin, the halves
// as a concat of a negated slice and a slice), then k and v repeated for grouped-query heads.
// rotate_half becomes index maps and a sign (ir::rotate_half_pass), so everything joins the
// attention kernel's loads: one dispatch.
TEST(Attention, RotaryEmbeddingsAndGroupedHeadsFuseIntoTheLoads) {
  const int64_t b = 1, h = 4, kv = 2, s = 11, d = 16;
  ir::Graph g;
  LlamaAttention la(g, b, h, kv, s, d);
  ir::Value* q = la.rope(g.add_input("q", f32({b, h, s, d})));
  ir::Value* k = la.repeat_kv(la.rope(g.add_input("k", f32({b, kv, s, d}))));
  ir::Value* v = la.repeat_kv(g.add_input("v", f32({b, kv, s, d})));
  la.attend(q, k, v);
  expect_fused_match(g, 45);
}

// A LLaMA-style attention block from its activation: q (4 heads), k and v (2 heads) projected by
// constant weights, head split, rotary embeddings as exporters write them (slices, a negation, a
// concat), repeat_kv. The three products join into one (fuse-shared-input-matmuls), and the
// attention kernel reads q and k through the slices and head splits twice each (q * cos and
// rotate_half(q) * sin): two dispatches, nothing stored between them. With the head-split q also
// a graph output, q's projection has a reader other than products (nothing joins), and its head
// split a reader outside the kernel: it is stored, and attention reads the stored copy twice.
TEST(Attention, RotaryHeadsReadTheJoinedProjectionTwiceInTheLoads) {
  const int64_t b = 1, h = 4, kv = 2, s = 13, d = 16, model = 48;
  std::mt19937 rng(47);
  for (bool q_out : {false, true}) {
    SCOPED_TRACE(cat("head-split q also an output: ", q_out));
    ir::Graph g;
    LlamaAttention la(g, b, h, kv, s, d);
    ir::Value* x = g.add_input("x", f32({b, s, model}));
    auto heads = [&](int64_t n) {
      ir::Value* w = g.add_constant(random_tensor(DType::f32, {model, n * d}, rng, -0.3, 0.3));
      ir::Value* r = g.add_op(K::Reshape, {g.add_op(K::MatMul, {x, w})->result()}, {{"shape", Ints{b, s, n, d}}})->result();
      return g.add_op(K::Transpose, {r}, {{"perm", Ints{0, 2, 1, 3}}})->result();
    };
    ir::Value* q_split = heads(h);
    ir::Value* q = la.rope(q_split);
    ir::Value* k = la.repeat_kv(la.rope(heads(kv)));
    ir::Value* v = la.repeat_kv(heads(kv));
    la.attend(q, k, v);
    if (q_out) g.add_output(q_split, "q_heads");
    GpuRunOptions o;
    o.rel_tol = 2e-5;
    GpuRun run = run_on_gpu(g, random_inputs(g, 48), o);
    EXPECT_TRUE(outputs_match(run, o));
    std::string kernels;
    for (const DispatchDesc& dd : run.module.manifest.dispatches) kernels += dd.kernel + " ";
    if (!split_testing()) {
      EXPECT_EQ(attention_dispatches(run.module), 1) << kernels;
      if (!q_out) EXPECT_EQ(run.module.manifest.dispatches.size(), 2u) << kernels;
      else EXPECT_NE(kernels.find("transpose"), std::string::npos) << kernels;  // q's head split, stored
    }
  }
}

// Forms that must stay unfused: softmax over another axis, scores used twice, a broadcast batch.
TEST(Attention, OtherGraphsStayUnfused) {
  auto count_attention = [](ir::Graph g) {
    ir::PassManager pm;
    pm.add(ir::fuse_attention_pass());
    pm.run(g);
    int n = 0;
    for (const ir::Op* op : g.ops()) n += op->kind == K::Attention;
    return n;
  };
  EXPECT_EQ(count_attention(pattern(Form::Bert, {1, 2, 8, 8, 16, 16})), 1);  // the positive control
  {
    ir::Graph g;
    ir::Value* q = g.add_input("q", f32({2, 8, 16}));
    ir::Value* k = g.add_input("k", f32({2, 8, 16}));
    ir::Value* v = g.add_input("v", f32({2, 8, 16}));
    ir::Value* s = g.add_op(K::MatMul, {q, k}, {{"transpose_b", true}})->result();
    ir::Value* p = g.add_op(K::Softmax, {s}, {{"axis", int64_t(1)}})->result();
    g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
    EXPECT_EQ(count_attention(std::move(g)), 0) << "softmax over the query axis";
  }
  {
    ir::Graph g;
    ir::Value* q = g.add_input("q", f32({2, 8, 16}));
    ir::Value* k = g.add_input("k", f32({2, 8, 16}));
    ir::Value* v = g.add_input("v", f32({2, 8, 16}));
    ir::Value* s = g.add_op(K::MatMul, {q, k}, {{"transpose_b", true}})->result();
    ir::Value* p = g.add_op(K::Softmax, {s}, {{"axis", int64_t(-1)}})->result();
    g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
    g.add_output(p, "probabilities");
    EXPECT_EQ(count_attention(std::move(g)), 0) << "the probabilities are an output too";
  }
  {
    ir::Graph g;
    ir::Value* q = g.add_input("q", f32({2, 8, 16}));
    ir::Value* k = g.add_input("k", f32({1, 8, 16}));
    ir::Value* v = g.add_input("v", f32({2, 8, 16}));
    ir::Value* s = g.add_op(K::MatMul, {q, k}, {{"transpose_b", true}})->result();
    ir::Value* p = g.add_op(K::Softmax, {s}, {{"axis", int64_t(-1)}})->result();
    g.add_output(g.add_op(K::MatMul, {p, v})->result(), "out");
    EXPECT_EQ(count_attention(std::move(g)), 0) << "k's batch broadcasts";
  }
}

// No tiling fits 4 KiB of workgroup memory: the unfused kernels run instead, never a failure.
TEST(Attention, FallsBackToUnfusedKernelsWhenNoTilingFits) {
  ir::Graph g = pattern(Form::Bert, {1, 2, 24, 24, 64, 64});
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) { t.max_compute_shared_memory_size = 4096; };
  o.rel_tol = 2e-5;
  GpuRun run = run_on_gpu(g, random_inputs(g, 3), o);
  EXPECT_EQ(attention_dispatches(run.module), 0);
  EXPECT_GT(run.module.manifest.dispatches.size(), 1u);
  EXPECT_TRUE(outputs_match(run, o));
  for (const DispatchDesc& d : run.module.manifest.dispatches) EXPECT_LE(d.workgroup_memory_bytes, 4096u) << d.name;
}

// q and the result beyond one binding (a 16 KiB range here; 24 KiB each): the unfused chain runs,
// cut into pieces by the range split, instead of an attention kernel that binds its tensors whole.
TEST(Attention, TensorsBeyondABindingStayUnfusedAndSplit) {
  ir::Graph g = pattern(Form::Bert, {1, 2, 96, 40, 32, 32});
  GpuRunOptions o;
  o.adjust_target = [](TargetLimits& t) { t.max_storage_buffer_range = 16384; };
  o.rel_tol = 2e-5;
  GpuRun run = run_on_gpu(g, random_inputs(g, 9), o);
  EXPECT_EQ(attention_dispatches(run.module), 0);
  EXPECT_TRUE(outputs_match(run, o));
}

TEST(Attention, PlansFitEveryProfile) {
  for (int64_t d : {32, 64, 128}) expect_compiles_everywhere(pattern(Form::Bert, {1, 12, 128, 128, d, d}));
}

}  // namespace
}  // namespace vkc::test
