// MatMul, BatchMatMul, Gemm: a tiled GEMM with workgroup-memory tiles (planned against the target
// by codegen/gemm_planner.h), a dot kernel for thin problems (K split over a workgroup, matmul_dot.comp) and
// a naive fallback without workgroup memory.
//
// All three ops normalize to one batched problem: out[b, m, n] = epilogue(sum_k A[b][m, k] B[b][k, n])
// where each operand's batch offset follows numpy broadcasting and its (row, col) strides absorb
// the transpose flags and 1-D promotion (as in the reference, ir/interpreter_contraction.cpp).
//
// A and B are read through the group's fused prologues (a_at / b_at, codegen/fusion.h): the tiled
// kernel evaluates a prologue once per element it stages in workgroup memory, so the tiles keep
// their f32 size whatever the operand's source type (a dequantized u8 weight stages as f32). The
// operand functions the loops call, and which forms an operand can take, are gemm_operands.h's.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/contraction_plan.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "codegen/kernels/gemm_core.h"
#include "codegen/kernels/gemm_operands.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "ir/matmul_geometry.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

using Operand = ir::MatrixView;

// The dot kernel splits K over a workgroup's invocations; below this depth one invocation per
// output (naive) has as little to do and no barrier.
constexpr int64_t kDotMinK = 64;
// Workgroups per compute unit above which an unsplit product with a constant B keeps the lhs in
// one-element loads rather than 4x4 blocks: the 3 workgroups of 128 invocations that the 8x8 loop's
// 147 registers leave an NVIDIA SM (see the FMA tiles' notes below).
constexpr uint64_t kA4x4MaxWorkgroupsPerUnit = 3;

using S = ContractionStrategy;

// The problem for the GEMM planner: FMA tiles, or with `coop_vec` 1 or 8 tensor-core tiles only.
GemmProblem gemm_problem(int64_t M, int64_t N, int64_t K, int64_t batches, const Operand& a, const Operand& b,
                         uint32_t coop_vec, bool pieces = false) {
  GemmProblem p{M, N, K, batches};
  p.matrix_operands = true;
  if (coop_vec != 0) {
    p.simt = false;
    p.coop_vec = coop_vec;
    p.coop_split = pieces;
    // float32 pieces may split K (only the NVIDIA tiles measured with them do: gemm_planner.cpp).
    p.allow_split = pieces;
    p.a_kfast = a.col_stride == 1;
    p.b_kfast = b.col_stride != 1;
  }
  return p;
}

// Batch offset of an operand as a walk over the output batch dims (stride 0 where it broadcasts).
std::vector<StridedDim> batch_walk(const Operand& v, const Shape& batch) {
  std::vector<StridedDim> dims;
  int64_t stride = v.matrix_size;
  std::vector<int64_t> strides(batch.size(), 0);
  for (size_t d = v.batch.size(); d-- > 0;) {
    size_t o = d + batch.size() - v.batch.size();
    strides[o] = v.batch[d] == 1 ? 0 : stride;
    stride *= v.batch[d];
  }
  for (size_t d = 0; d < batch.size(); ++d) dims.push_back({batch[d], strides[d]});
  return dims;
}

// "128x64x16 tile, 8x8 per invocation" and, split, ", K in 4 slices"; tensor-core tiles likewise
// after "coopmat ".
std::string choice_str(const GemmChoice& c) {
  std::string s = std::holds_alternative<SimtTile>(c.tile) ? std::get<SimtTile>(c.tile).str()
                                                           : "coopmat " + std::get<CoopTile>(c.tile).str();
  return c.split > 1 ? cat(s, ", K in ", c.split, " slices") : s;
}

// store_c4 for the GEMM loops' quads (4 columns of row m from n): split K's raw partial sums
// (`partial_binding` again, as vec4s), else the epilogue and the fused store, 4 at a time.
std::string store_c4_fn(int64_t M, int64_t N, int64_t total, uint64_t split, uint32_t partial_binding) {
  const std::string i = cat("(batch * ", M, "u + m) * ", N, "u + n");
  std::string s;
  if (split > 1)
    s = cat("layout(std430, set = 0, binding = ", partial_binding,
            ") restrict writeonly buffer PartialQuads { vec4 data[]; } partial_quad;\n");
  return s + cat("void store_c4(uint m, uint n, vec4 v) {\n  if (m < ", M, "u && n < ", N, "u)\n    ",
                 split > 1 ? cat("partial_quad.data[(split * ", total, "u + ", i, ") >> 2u] = v;\n}\n")
                           : cat("store_result4(", i, ", vec4(epilogue(v.x, m, n), epilogue(v.y, m, n + 1u), "
                                 "epilogue(v.z, m, n + 2u), epilogue(v.w, m, n + 3u)));\n}\n"));
}

}  // namespace

std::vector<EmittedKernel> emit_contraction(const DispatchGroup& group, const KernelContext& ctx,
                                            std::vector<ScratchTensor>& scratch) {
  const ir::Op& op = *group.anchor;
  const std::string what = op.describe();
  const ir::Value* av = op.operand(0);
  const ir::Value* bv = op.operand(1);
  const ir::Value* cv = op.kind == ir::OpKind::Gemm && op.num_operands() > 2 ? op.operand(2) : nullptr;
  const ir::Value* out = op.result();
  const DType t = out->type.dtype;
  require_storable(t, ctx.target, what);
  Operand a = ir::matrix_view(av->type.shape, true, op.attr_bool("transpose_a"));
  Operand b = ir::matrix_view(bv->type.shape, false, op.attr_bool("transpose_b"));
  ir::fold_batches_into_rows(a, b);
  const int64_t M = a.rows, N = b.cols, K = a.cols;
  Shape batch(std::max(a.batch.size(), b.batch.size()), 1);
  for (size_t d = 0; d < batch.size(); ++d) {
    auto dim = [&](const Shape& s) { return d + s.size() < batch.size() ? int64_t(1) : s[d + s.size() - batch.size()]; };
    batch[d] = std::max(dim(a.batch), dim(b.batch));
  }
  const int64_t batches = shape_numel(batch);
  const int64_t total = batches * M * N;
  check_32bit(std::max({total, shape_numel(av->type.shape), shape_numel(bv->type.shape)}), what);

  const std::string forced_text = ctx.forced(op);
  std::optional<S> forced;
  // "tiled=TMxTNxTK/RMxRN/STAGES" forces one FMA tile (to measure tiles against each other, e.g.
  // bench/bench_cases.cpp); it must fit the target and the loop like any planned tile.
  std::optional<GemmChoice> forced_tile;
  // "coopmat=TMxTNxTK/WMxWN[/sSTAGES][/kSPLIT]" forces one tensor-core tile the same way.
  std::optional<GemmChoice> forced_coop;
  if (forced_text.rfind("coopmat=", 0) == 0) {
    forced_coop = parse_coop_choice(forced_text.substr(8), what);
    forced = S::coopmat;
  } else if (forced_text.rfind("tiled=", 0) == 0) {
    forced_tile = parse_simt_tile(forced_text.substr(6), what);
    std::string why = tile_misfit(forced_tile->tile, ctx.target);
    if (why.empty() && forced_tile->split > 1)
      why = split_misfit(forced_tile->tile, gemm_problem(M, N, K, batches, a, b, 0), ctx.target, forced_tile->split);
    check(why.empty(), what, ": tile ", choice_str(*forced_tile), " does not fit target '", ctx.target.name, "': ", why);
    forced = S::tiled;
  } else if (!forced_text.empty()) {
    forced = parse_contraction_strategy(forced_text, what);
  }
  // The tensor-core loop stages both operands 16 bytes at a time where it can (staging8);
  // unforced, float16 products that would be tiled take it then (3-5x the FMA loop on the H200,
  // bench/RESULTS.md, Run N); one-element staging is only used when forced (it was no faster).
  // float32 operands run there as float16 pieces (CoopTile::split) when forced to it or where the
  // module's precision asks for it (Precision::fp16x3).
  const bool f16_operands = av->type.dtype == DType::f16 && bv->type.dtype == DType::f16;
  const bool pieces = av->type.dtype == DType::f32 && bv->type.dtype == DType::f32 &&
                      (forced == S::coopmat || ctx.fp32_products_in_fp16_pieces);
  const Staging8 a8 = staging8(group, a, av), b8 = staging8(group, b, bv);
  const bool vec8_fits = coopmat_misfit(ctx.target).empty() && a8 != Staging8::none && b8 != Staging8::none &&
                         (f16_operands || pieces);
  const std::optional<GemmChoice> planned = contraction_choice(M, N, K, ctx.target, batches);
  const bool coop_default = !forced && vec8_fits && planned &&
                            choose_gemm(gemm_problem(M, N, K, batches, a, b, 8, pieces), ctx.target) &&
                            (!pieces || pieces_planned_unforced(gemm_problem(M, N, K, batches, a, b, 8, pieces), ctx.target));
  const std::optional<S> chosen = coop_default ? std::optional<S>(S::coopmat) : forced;  // nullopt: the shape decides
  const bool vec8 = chosen == S::coopmat && vec8_fits;

  std::optional<GemmChoice> tile;  // an FMA tile and its K split
  if (!chosen) {
    tile = planned;
  } else if (forced_tile) {
    tile = forced_tile;
  } else if (chosen == S::tiled) {
    if (std::optional<GemmChoice> c = choose_gemm(gemm_problem(M, N, K, batches, a, b, 0), ctx.target))
      tile = GemmChoice{std::get<SimtTile>(c->tile), 1};
    check(tile.has_value(), what, ": no GEMM tile fits target '", ctx.target.name, "'");
  }
  // Unforced: tiles when the problem is wide enough for them; else the dot kernel when K is deep
  // enough to split over a workgroup; else one invocation per output.
  const S strategy = chosen ? *chosen : tile ? S::tiled : K >= kDotMinK ? S::dot : S::naive;
  // The tensor-core tile (and, for float32 pieces, its K split).
  std::optional<GemmChoice> coop;
  if (strategy == S::coopmat) {
    std::string why = coopmat_misfit(ctx.target);
    if (why.empty() && !f16_operands && !pieces) why = "its operands are neither both float16 nor both float32";
    if (why.empty() && pieces && !vec8)
      why = "float32 operands need runs of 8 along their contiguous dim (its size, row and batch strides multiples of 8)";
    if (why.empty() && forced_coop) {
      CoopTile& shape = std::get<CoopTile>(forced_coop->tile);
      shape.vec = vec8 ? 8 : 1;
      const GemmProblem problem = gemm_problem(M, N, K, batches, a, b, shape.vec, pieces);
      CoopTile tile = coop_tile_for(shape, problem, ctx.target);
      std::string misfit = tile_misfit(tile, ctx.target);
      if (misfit.empty() && forced_coop->split > 1)
        misfit = !pieces ? "only float32 pieces split K on tensor cores" : split_misfit(tile, problem, ctx.target, forced_coop->split);
      check(misfit.empty(), what, ": tile ", forced_text.substr(8), " does not fit target '", ctx.target.name, "': ", misfit);
      coop = GemmChoice{tile, forced_coop->split};
    } else if (why.empty()) {
      coop = choose_gemm(gemm_problem(M, N, K, batches, a, b, vec8 ? 8 : 1, pieces), ctx.target);
    }
    if (why.empty() && !coop) why = cat("no ", pieces ? "fp16x3" : "fp16", " tile fits target '", ctx.target.name, "'");
    check(why.empty(), what, ": strategy 'coopmat' does not apply: ", why);
  }
  // Split K (tiled, and float32 pieces on tensor cores): the GEMM dispatch writes each slice's f32
  // partial sums, [split][total], and a reduce dispatch adds them and runs the epilogue and the
  // fused store (its own bindings).
  const uint64_t split = strategy == S::tiled ? tile->split : strategy == S::coopmat ? coop->split : 1;
  const std::string partial = split > 1 ? ctx.tensor(out) + ".split_k" : "";
  if (split > 1) scratch.push_back({partial, DType::f32, Shape{int64_t(split), total}});

  std::set<DType> types{t};
  std::string buffers, fns;
  std::vector<KernelBinding> bindings;
  double bytes = 0;
  auto add = [&](const FusedCode& f) {
    buffers += f.buffers;
    fns += f.functions;
    bindings.insert(bindings.end(), f.bindings.begin(), f.bindings.end());
    types.insert(f.types.begin(), f.types.end());
    bytes += f.bytes;
  };
  // FMA tiles: the order each operand is staged in (its contiguous dim fastest, so that global
  // reads coalesce), and 16-byte loads where the strides allow (staging4), each measured on the
  // H200 (bench/RESULTS.md, sessions 26 and 27):
  // - An N-contiguous B (a [K, N] weight) in quads of 4 columns: one 16-byte load and one 16-byte
  //   workgroup-memory store per quad instead of four. 3-7% off every ViT-B/16 and BERT batch-8
  //   product shape.
  // - A K-contiguous A (activations) in blocks of 4 rows x 4 k: four 16-byte loads, transposed in
  //   registers into four 16-byte stores down the K-major tile (a quad of k alone had to be stored
  //   one element at a time, 4-way bank conflicts). With B's quads, 4-8% off the same shapes again
  //   and BERT b8 -7%. It needs the tile's blocks to spread evenly over the invocations (128x64x16
  //   over 128). Alone, 16-byte loads of A's quads (four scalar stores each) measured within 2%
  //   either way.
  //   Not for an unsplit product whose grid holds more workgroups than kA4x4MaxWorkgroupsPerUnit
  //   per compute unit while its B is a constant of the model (session 28): ViT-B/16 b8's first MLP
  //   product (624 workgroups) took 0.285-0.294 ms with the blocks and 0.262 without when its
  //   weight was a constant, 0.247 with them when the same weight came in as an input (vk-run,
  //   same call), and the in-projection (468) lost the same way. An input is copied into its
  //   buffer just before the run and so is read from L2; a constant comes from memory (neither
  //   its offset in the constants buffer, 256 B to 2 MiB aligned, nor the bias beside it
  //   mattered). With B from memory the blocks lose only where the grid takes more than one round:
  //   BERT b8's unsplit products (288 and 384 workgroups, one round of the 3 per SM that 147
  //   registers leave) and every split product in both models (ViT's second MLP product: 624)
  //   gain with them. ViT-B/16 b8 11.46 ms with this rule against 12.16 with the blocks
  //   everywhere, BERT b8 unchanged.
  // - A transposed B ([N, K], K-fast quads like A's) keeps one-element loads: not measured.
  // Register blocks above 64 accumulators (16x8, 222 of NVIDIA's 255 registers already) spilled with
  // 16-byte loads (matmul 4096^3 +14%) and keep one-element loads.
  GemmCoreShape core;
  std::optional<LhsView> lv;  // the FMA loop's lhs read in place under its index maps (lhs_view)
  if (strategy == S::tiled) {
    const SimtTile& g = std::get<SimtTile>(tile->tile);
    core.tile = g;
    core.a_kfast = a.col_stride == 1 && core.stages_evenly(g.tm, true);
    core.b_kfast = b.col_stride != 1 && core.stages_evenly(g.tn, true);
    core.b_vec = !core.b_kfast && g.rm * g.rn <= 64 && staging4(group, b, bv) &&
                 core.stages_evenly(g.tn, false, true);
    lv = lhs_view(group, a, av);
    const uint64_t workgroups = uint64_t(std::max<int64_t>(1, batches)) * ceil_div(uint64_t(M), g.tm) *
                                ceil_div(uint64_t(N), g.tn);
    const bool b_constant = bv->producer != nullptr && bv->producer->kind == ir::OpKind::Constant;
    const bool many_rounds = split == 1 && b_constant &&
                             workgroups > kA4x4MaxWorkgroupsPerUnit * uint64_t(ctx.target.compute_units);
    core.a_4x4 = core.a_kfast && g.rm * g.rn <= 64 && (lv ? lv->quads(K) : staging4(group, a, av)) &&
                 core.stages_in_4x4_blocks() && !many_rounds;
  }
  for (const auto& [v, st, name, at, vec4] : {std::tuple{av, a8, "a8", "a_at", core.a_4x4},
                                              std::tuple{bv, b8, "b8", "b_at", core.b_vec}}) {
    const bool viewed = name[0] == 'a' && lv;  // read in place under its index maps
    if (vec4) {
      buffers += glsl_uvec4_buffer(uint32_t(bindings.size()), name[0] == 'a' ? "a4" : "b4");
      bindings.push_back({ctx.tensor(viewed ? lv->source : v), false});
      bytes += double((viewed ? lv->source : v)->type.size_bytes());
    } else if (viewed) {
      add(operand_loader(group, lv->source, "a_src", uint32_t(bindings.size()), ctx));
    } else if (vec8 && st == Staging8::in_place) {
      buffers += glsl_uvec4_buffer(uint32_t(bindings.size()), name);
      bindings.push_back({ctx.tensor(v), false});
      bytes += double(v->type.size_bytes());
    } else {
      add(operand_loader(group, v, at, uint32_t(bindings.size()), ctx));
    }
  }
  fns += offset_function("a_batch", batch_walk(a, batch)) + offset_function("b_batch", batch_walk(b, batch));
  EmittedKernel reduce;  // the split-K reduce dispatch; with split 1 its parts join the one dispatch
  uint32_t partial_binding = 0;
  std::set<DType> out_types{t};
  std::string out_buffers, out_fns;
  std::vector<KernelBinding> out_bindings;
  double out_bytes = 0;
  if (split > 1) {
    partial_binding = uint32_t(bindings.size());
    buffers += glsl_buffer(partial_binding, DType::f32, true, "partial");
    bindings.push_back({partial, true});
    types.insert(DType::f32);
    bytes += 4.0 * double(split) * double(total);
    out_buffers += glsl_buffer(0, DType::f32, false, "partial");
    out_bindings.push_back({partial, false});
    out_types.insert(DType::f32);
    out_bytes += 4.0 * double(split) * double(total);
  }
  // Epilogue: gemm's alpha * acc + beta * C (C broadcast to [M, N]); plain acc for matmul.
  std::string epi = "acc";
  if (op.kind == ir::OpKind::Gemm) {
    double alpha = op.attr_float("alpha"), beta = op.attr_float("beta");
    epi = cat(glsl_literal(DType::f32, alpha), " * acc");
    if (cv != nullptr) {
      require_storable(cv->type.dtype, ctx.target, what);
      out_types.insert(cv->type.dtype);
      out_buffers += glsl_buffer(uint32_t(split > 1 ? out_bindings.size() : bindings.size()), cv->type.dtype, false, "c");
      out_bindings.push_back({ctx.tensor(cv), false});
      out_bytes += double(cv->type.size_bytes());
      Shape cs = cv->type.shape;
      while (cs.size() < 2) cs.insert(cs.begin(), 1);
      int64_t c_rs = cs[0] == 1 ? 0 : cs[1], c_cs = cs[1] == 1 ? 0 : 1;
      epi += cat(" + ", glsl_literal(DType::f32, beta), " * float(c.data[m * ", c_rs, "u + n * ", c_cs, "u])");
    }
  }
  out_fns += cat("float epilogue(float acc, uint m, uint n) { return ", epi, "; }\n");
  // The result goes through the fused epilogue (codegen/fusion.h): store_result(index, value).
  // Whether results may leave in 16-byte stores of four columns (the FMA loop's register blocks
  // hold 4 columns; N % 4 == 0, so a quad never leaves its row); then also whether the epilogue
  // takes them (st.quads). Split-K's raw partial sums always do (unlike a conv's, whose stores
  // otherwise coalesce through workgroup memory, a matrix's went one element at a time: ViT-B/16
  // b8 10.88 ms with quads for its split products against 11.08 without, H200, session 30).
  const bool quads_fit = strategy == S::tiled && std::get<SimtTile>(tile->tile).rn % 4 == 0 && N % 4 == 0;
  // The tensor-core loop hands a lane 4 consecutive columns where its tile allows
  // (coop_quads_supported, known once the tile is chosen below).
  const bool coop_quads_fit = strategy == S::coopmat && N % 4 == 0;
  FusedCode st = result_store(group, uint32_t(split > 1 ? out_bindings.size() : bindings.size() + out_bindings.size()), ctx,
                              (quads_fit && split == 1) || coop_quads_fit);
  out_buffers += st.buffers;
  out_fns += st.functions;
  out_bindings.insert(out_bindings.end(), st.bindings.begin(), st.bindings.end());
  out_types.insert(st.types.begin(), st.types.end());
  out_bytes += st.bytes;
  if (split > 1) {
    reduce.kernel = "matmul_split_k_reduce";
    // As the slices' dispatch (conv's split_k does the same).
    reduce.strategy = strategy == S::coopmat ? choice_str(*coop) : cat("tiled ", choice_str(*tile));
    reduce.bindings = out_bindings;
    plan_linear(reduce, uint64_t(total), 256, ctx.target, what);
    reduce.glsl = instantiate_shader(
        "split_k_reduce", {{"EXTENSIONS", glsl_extensions(out_types)}, {"BUFFERS", out_buffers},
                           {"HELPERS", out_fns}, {"WG_SIZE", cat(reduce.workgroup_size[0])},
                           {"INDEX", folded_global_index(reduce.workgroup_size[0])},
                           {"TOTAL", cat(total)}, {"SPLITS", cat(split)},
                           {"FINISH", cat("  store_result(gid, epilogue(acc, gid / ", N, "u % ", M, "u, gid % ", N, "u));")}});
    reduce.tiles = {{"split_k", int64_t(split)}};
    reduce.flops = double(split) * double(total);
    reduce.bytes = out_bytes;
  } else {
    buffers += out_buffers;
    fns += out_fns;
    bindings.insert(bindings.end(), out_bindings.begin(), out_bindings.end());
    types.insert(out_types.begin(), out_types.end());
    bytes += out_bytes;
  }

  EmittedKernel k;
  // A target with cooperative matrices but not the loop's shape (Intel's M = 8): the report says why
  // float16 products stay on the FMA loop.
  if (strategy != S::coopmat && av->type.dtype == DType::f16 && bv->type.dtype == DType::f16 &&
      !ctx.target.cooperative_matrix_shapes.empty())
    if (std::string why = coopmat_misfit(ctx.target); !why.empty()) k.notes = "no tensor cores: " + why;
  k.bindings = bindings;
  k.flops = 2.0 * double(total) * double(K);
  k.bytes = bytes;
  std::vector<std::pair<std::string, std::string>> values = {
      {"EXTENSIONS", glsl_extensions(types)}, {"BUFFERS", buffers}, {"FUNCTIONS", fns},
      {"M", cat(M)}, {"N", cat(N)}, {"K", cat(K)}};
  const std::vector<std::pair<std::string, std::string>> strides = {
      {"A_RS", cat(a.row_stride)}, {"A_CS", cat(a.col_stride)}, {"B_RS", cat(b.row_stride)}, {"B_CS", cat(b.col_stride)}};
  // float16 operands on tensor cores, float32 sums (gemm_coopmat.h).
  if (strategy == S::coopmat) {
    const CoopTile& c = std::get<CoopTile>(coop->tile);
    int64_t tiles_m = ceil_div(M, int64_t(c.tm)), tiles_n = ceil_div(N, int64_t(c.tn));
    int64_t groups = std::max<int64_t>(1, tiles_m * tiles_n * batches);
    k.kernel = split > 1 ? "matmul_coopmat_split_k" : "matmul_coopmat";
    k.strategy = choice_str(*coop);
    k.workgroup_size = {c.invocations(), 1, 1};
    check_32bit_elements(uint64_t(groups) * split, "the tile grid", what);
    k.workgroup_count = linear_grid(uint64_t(groups) * split * c.invocations(), c.invocations(), ctx.target, what);
    k.workgroup_memory_bytes = c.workgroup_memory_bytes();
    k.subgroup_sizes = {c.subgroup, c.subgroup};  // the fragments' layout assumes this subgroup size
    k.cooperative_matrix_khr = coopmat_uses_khr(ctx.target);
    // Split K's raw partial sums always leave in quads where the tile hands them out (as the FMA
    // loop's do, below).
    const bool quads = coop_quads_fit && (split > 1 || st.quads) && coop_quads_supported(c);
    const uint32_t sets = coop_register_sets(c, ctx.target);
    const std::string store_c4 = quads ? store_c4_fn(M, N, total, split, partial_binding) : "";
    values.insert(values.end(), {{"INVOCATIONS", cat(c.invocations())}, {"GROUPS", cat(groups)},
                                 {"TILES_N", cat(tiles_n)}, {"TILES_M", cat(tiles_m)},
                                 {"TILES_MN", cat(tiles_m * tiles_n)},
                                 {"GEMM_CORE", gemm_coopmat_glsl(c, false, k.cooperative_matrix_khr, false, quads, sets,
                                                                         coop_lagged(c, ctx.target))},
                                 {"SPLITS", cat(split)}, {"K_STEPS", cat(ceil_div(K, int64_t(c.tk)))},
                                 {"STORE", split > 1 ? cat("partial.data[split * ", total, "u + i] = v")
                                                     : "store_result(i, epilogue(v, m, n))"},
                                 {"STORE_C4", store_c4},
                                 {"OPERANDS", pieces ? split_operand_fns(M, N, K, a, b, a8, b8)
                                              : vec8  ? vec8_operand_fns(M, N, K, a, b, a8, b8)
                                                      : scalar_operand_fns(M, N, K, a, b)}});
    k.glsl = instantiate_shader("matmul_tiled", values);
    k.tiles = {{"tile_m", c.tm}, {"tile_n", c.tn}, {"tile_k", c.tk}, {"subgroups_m", c.wm},
               {"subgroups_n", c.wn}, {"staging_load_halves", c.vec}, {"workgroups", groups}};
    if (!c.default_fragment()) k.tiles["fragment_m"] = c.fm, k.tiles["fragment_n"] = c.fn, k.tiles["fragment_k"] = c.fk;
    if (quads) k.tiles["quad_stores"] = 1;
    if (sets > 1) k.tiles["register_sets"] = sets;
    if (c.split) k.tiles["fp16_pieces"] = 1;
    if (split == 1) return {k};
    k.tiles["split_k"] = int64_t(split);
    k.tiles["workgroups"] = groups * int64_t(split);
    return {k, reduce};
  }
  if (strategy == S::naive) {
    k.kernel = "matmul_naive";
    k.strategy = "naive";
    plan_linear(k, uint64_t(total), 128, ctx.target, what);
    values.insert(values.end(), strides.begin(), strides.end());
    values.insert(values.end(), {{"WG_SIZE", cat(k.workgroup_size[0])},
                                 {"INDEX", folded_global_index(k.workgroup_size[0])},
                                 {"TOTAL", cat(total)},
                                 {"MN", cat(M * N)}});
    k.glsl = instantiate_shader("matmul_naive", values);
    k.tiles["invocation_outputs"] = 1;
    return {k};
  }
  if (strategy == S::dot) {
    // Subgroup-sized runs of lanes walk B's contiguous dim: k for a [N, K]-laid-out B (a
    // transposed Gemm weight, a vector), else n, sharing each A element.
    bool k_fast = b.row_stride == 1 || (b.col_stride != 1 && a.col_stride == 1);
    uint32_t wg = fit_workgroup_size_x(256, ctx.target);
    uint32_t run = std::min<uint32_t>(32, wg);
    uint32_t nt = k_fast ? wg / run : run, ks = wg / nt;
    uint64_t groups = ceil_div(uint64_t(total), nt);
    k.kernel = "matmul_dot";
    k.strategy = cat("dot: ", nt, " outputs per workgroup, K in ", ks, " slices");
    k.workgroup_size = {wg, 1, 1};
    k.workgroup_count = linear_grid(std::max<uint64_t>(1, groups) * wg, wg, ctx.target, what);
    k.workgroup_memory_bytes = 4 * wg;
    values.insert(values.end(), strides.begin(), strides.end());
    values.insert(values.end(), {{"WG_SIZE", cat(wg)},
                                 {"WG_INDEX", folded_workgroup_index()},
                                 {"GROUPS", cat(groups)},
                                 {"NT", cat(nt)},
                                 {"KS", cat(ks)},
                                 {"K_FAST", k_fast ? "1" : "0"},
                                 {"TOTAL", cat(total)},
                                 {"MN", cat(M * N)}});
    k.glsl = instantiate_shader("matmul_dot", values);
    k.tiles = {{"outputs_per_workgroup", nt}, {"k_slices", ks}, {"workgroups", int64_t(groups)}};
    return {k};
  }

  const SimtTile& g = std::get<SimtTile>(tile->tile);
  int64_t tiles_m = ceil_div(M, int64_t(g.tm)), tiles_n = ceil_div(N, int64_t(g.tn));
  int64_t groups = std::max<int64_t>(1, tiles_m * tiles_n * batches);
  uint32_t inv = g.invocations();
  k.kernel = split > 1 ? "matmul_split_k" : "matmul_tiled";
  k.strategy = cat("tiled ", choice_str(*tile));
  k.workgroup_size = {inv, 1, 1};
  check_32bit_elements(uint64_t(groups) * split, "the tile grid", what);
  check_32bit_elements(uint64_t(ceil_div(K, int64_t(g.tk))) * split, "the split-K step range", what);
  k.workgroup_count = linear_grid(uint64_t(groups) * split * inv, inv, ctx.target, what);
  k.workgroup_memory_bytes = g.workgroup_memory_bytes();
  std::string store_c4;
  if (quads_fit && (split > 1 || st.quads)) {
    core.store_quads = GemmCoreShape::Quads::columns;
    store_c4 = store_c4_fn(M, N, total, split, partial_binding);
  }
  values.insert(values.end(), {{"INVOCATIONS", cat(inv)},
                               {"GROUPS", cat(groups)}, {"TILES_N", cat(tiles_n)}, {"TILES_M", cat(tiles_m)},
                               {"TILES_MN", cat(tiles_m * tiles_n)},
                               {"GEMM_CORE", gemm_core_glsl(core)},
                               {"SPLITS", cat(split)}, {"K_STEPS", cat(ceil_div(K, int64_t(g.tk)))},
                               {"STORE", split > 1 ? cat("partial.data[split * ", total, "u + i] = v") :
                                                     "store_result(i, epilogue(v, m, n))"},
                               {"STORE_C4", store_c4},
                               {"OPERANDS", operand_fns(M, N, K, a, b, core.a_4x4, core.b_vec, lv)}});
  k.glsl = instantiate_shader("matmul_tiled", values);
  k.optimize_spirv = core.spirv_opt();
  k.tiles = {{"tile_m", g.tm}, {"tile_n", g.tn}, {"tile_k", g.tk}, {"reg_m", g.rm}, {"reg_n", g.rn},
             {"stages", g.stages}, {"workgroups", groups * int64_t(split)}};
  if (core.a_4x4) k.tiles["a_4x4"] = 1;
  if (core.store_quads != GemmCoreShape::Quads::off) k.tiles["quad_stores"] = 1;
  if (core.b_vec) k.tiles["b_vec"] = 1;
  if (split == 1) return {k};
  k.tiles["split_k"] = int64_t(split);
  return {k, reduce};
}

std::string_view contraction_strategy_name(ContractionStrategy s) {
  switch (s) {
    case S::tiled: return "tiled";
    case S::coopmat: return "coopmat";
    case S::dot: return "dot";
    case S::naive: return "naive";
  }
  return "";
}

ContractionStrategy parse_contraction_strategy(const std::string& text, const std::string& what) {
  for (S s : {S::tiled, S::coopmat, S::dot, S::naive})
    if (text == contraction_strategy_name(s)) return s;
  throw Error(cat(what, ": unknown strategy '", text, "' (contractions have: tiled, tiled=TMxTNxTK/RMxRN/STAGES, coopmat, coopmat=TMxTNxTK/WMxWN[/sSTAGES][/kSPLIT], dot, naive)"));
}

std::optional<GemmChoice> contraction_choice(int64_t m, int64_t n, int64_t k, const TargetLimits& target,
                                             int64_t batches) {
  // Below 16 rows or columns most of a tile would be padding; below 8 deep, staging costs more
  // than the products it feeds.
  if (m < 16 || n < 16 || k < 8) return std::nullopt;
  GemmProblem p{m, n, k, batches};
  p.matrix_operands = true;
  // K split over workgroups where the output's tiles do not fill the device (a 128-row projection
  // with K = 3072: 12 to 48 tiles on 132 SMs). Measured on NVIDIA only (gemm_planner.cpp): other
  // vendors keep unsplit tiles until a measurement says otherwise.
  p.allow_split = target.vendor == Vendor::nvidia;
  std::optional<GemmChoice> c = choose_gemm(p, target);
  if (!c) return std::nullopt;
  return GemmChoice{std::get<SimtTile>(c->tile), c->split};
}

std::optional<SimtTile> contraction_tile(int64_t m, int64_t n, int64_t k, const TargetLimits& target, int64_t batches) {
  // Below 16 rows or columns most of a tile would be padding; below 8 deep, staging costs more
  // than the products it feeds.
  std::optional<GemmChoice> c = contraction_choice(m, n, k, target, batches);
  if (!c) return std::nullopt;
  return std::get<SimtTile>(c->tile);
}

}  // namespace vkc::codegen::kernels
