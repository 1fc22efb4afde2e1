// Attention as one kernel (shaders/attention.comp): tiles planned against the target's workgroup
// memory, q/k/v read through fused prologues (the head-split transposes and reshapes exporters put
// in front: read in place through their composed strides where they are index maps only,
// operand_access), the result stored through a fused epilogue.
#include <algorithm>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/attention_plan.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/range_split.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {

namespace {

struct Extents {
  int64_t batches = 1, sq = 0, sk = 0, d = 0, dv = 0;
};

Extents extents_of(const ir::Op& op) {
  const Shape& q = op.operand(0)->type.shape;
  const Shape& k = op.operand(1)->type.shape;
  const size_t r = q.size();
  Extents e;
  for (size_t i = 0; i + 2 < r; ++i) e.batches *= q[i];
  e.sq = q[r - 2];
  e.d = q[r - 1];
  e.sk = op.attr_bool("k_transposed") ? k[r - 1] : k[r - 2];
  e.dv = op.operand(2)->type.shape[r - 1];
  return e;
}

// The shader's workgroup arrays (qt, kt, vs, pt, red) for these tiles; strides padded as it pads them.
uint32_t shared_bytes(uint32_t rm, uint32_t kc, uint32_t c4, int64_t d) {
  const uint64_t qs = kAttentionRowGroups + 1, ks = kAttentionLanes + 1;
  const uint64_t rows = rm == 3 ? 4 : rm;  // a vec3 takes a vec4's 16 bytes in an array
  const uint64_t bq = kAttentionRowGroups * rm, bk = kAttentionLanes * kc;
  return uint32_t(4 * (uint64_t(d) * qs * rows + uint64_t(d) * ks * kc + bk * c4 * kAttentionLanes * 4 + bk * qs * rows +
                       bq * kAttentionLanes));
}

// How the kernels read q (operand 0), k (1) or v (2): `NAME_base(b)`, the element offset of batch
// entry b, once per workgroup, and `NAME_elem(base, row, col)` at row `row` (a query, or a key) and
// column `col` (a head dim) from there. Where the operand's fused prologue is index maps only (the
// head-split reshapes and transposes in front of an exported attention), they read the value
// under it in place through its strides: one multiply-add per element where the prologue's index
// function unravelled every element's index over the operand's shape (real divisions at ViT's 197
// tokens and 12 heads).
FusedCode operand_access(const DispatchGroup& group, const ir::Op& op, int i, const std::string& name, uint32_t binding,
                         const KernelContext& ctx) {
  const ir::Value* v = op.operand(i);
  const Shape& s = v->type.shape;
  const size_t r = s.size();
  size_t row = r - 2, col = r - 1;
  if (i == 1 && op.attr_bool("k_transposed")) std::swap(row, col);  // k stored [..., d, keys]
  std::optional<PrologueView> pv = prologue_view(group, v);
  const bool direct = pv && pv->view.forward();
  if (direct) check_32bit(pv->source->type.numel(), op.describe());
  const StridedView view = direct ? pv->view : contiguous_view(s);
  FusedCode code = operand_loader(group, direct ? pv->source : v, name + "_at", binding, ctx);
  std::vector<StridedDim> batch;
  for (size_t d = 0; d + 2 < r; ++d) batch.push_back({s[d], view.strides[d]});
  code.functions += offset_function(name + "_batch", batch) +
                    cat("uint ", name, "_base(uint b) { return ", view.offset, "u + ", name, "_batch(b); }\n",
                        glsl_compute_type(v->type.dtype), " ", name, "_elem(uint base, uint row, uint col) { return ", name,
                        "_at(base + row * ", view.strides[row], "u + col * ", view.strides[col], "u); }\n");
  return code;
}

}  // namespace

bool attention_row_max_by_shuffle(const TargetLimits& target) {
  // One fixed subgroup size that 128 invocations fill exactly, so every subgroup is full; sizes
  // the device may vary (AMD RDNA, Intel) keep the workgroup-memory form.
  const uint32_t s = target.min_subgroup_size;
  return target.subgroup_shuffle && s >= kAttentionLanes && s == target.max_subgroup_size && kAttentionThreads % s == 0;
}

std::optional<AttentionPlan> plan_attention(int64_t batches, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                            const TargetLimits& target, const std::string& forced) {
  if (d < 1 || dv < 1 || sq < 1 || sk < 1 || d > kAttentionMaxHeadDim || dv > kAttentionMaxHeadDim) return std::nullopt;
  if (target.max_compute_work_group_invocations < kAttentionThreads ||
      target.max_compute_work_group_size[0] < kAttentionThreads)
    return std::nullopt;
  struct Tile {
    uint32_t bq, bk;
  };
  // BQ = 16 row groups x RM rows (RM 1 to 4), BK = 8 lanes x KC keys (KC 1, 2 or 4).
  std::vector<Tile> candidates{{64, 32}, {48, 32}, {32, 32}, {64, 16}, {48, 16}, {32, 16}, {16, 16}, {16, 8}};
  if (!forced.empty()) {
    size_t x = forced.find('x');
    check(x != std::string::npos, "attention: strategy '", forced, "' is not BQxBK (e.g. 64x32)");
    candidates = {{uint32_t(std::stoul(forced.substr(0, x))), uint32_t(std::stoul(forced.substr(x + 1)))}};
    check((candidates[0].bq == 16 || candidates[0].bq == 32 || candidates[0].bq == 48 || candidates[0].bq == 64) &&
              (candidates[0].bk == 8 || candidates[0].bk == 16 || candidates[0].bk == 32),
          "attention: strategy '", forced, "': BQ must be 16, 32, 48 or 64 and BK 8, 16 or 32");
  }
  std::vector<AttentionPlan> feasible;
  for (const Tile& t : candidates) {
    AttentionPlan p;
    p.bq = t.bq;
    p.bk = t.bk;
    p.rm = t.bq / kAttentionRowGroups;
    p.kc = t.bk / kAttentionLanes;
    p.c4 = uint32_t(ceil_div(dv, int64_t(4 * kAttentionLanes)));
    // Registers: the output block and the score block, per invocation.
    if (p.rm * p.c4 * 4 > 64 || p.rm * p.kc > 16) continue;
    p.workgroup_memory_bytes = shared_bytes(p.rm, p.kc, p.c4, d);
    if (p.workgroup_memory_bytes > target.max_compute_shared_memory_size) continue;
    int64_t tiles = ceil_div(sq, int64_t(t.bq));
    if (tiles > int64_t(target.max_compute_work_group_count[0]) ||
        batches > int64_t(target.max_compute_work_group_count[1]))
      continue;
    p.workgroups_x = uint32_t(tiles);
    p.workgroups_y = uint32_t(batches);
    feasible.push_back(p);
  }
  if (feasible.empty()) return std::nullopt;
  if (!forced.empty() || target.compute_units == 0) return feasible.front();
  // The busiest compute unit decides the time: it runs ceil(workgroups / units) workgroups of BQ
  // rows each, at a speed per row that grows with the rows and keys an invocation owns (more
  // multiply-adds per workgroup-memory load). Relative speeds per row measured on an H200 at
  // 1x12x1024x64 (RESULTS.md, session 16): RM 4 / 2 / 1 = 1 / 0.66 / 0.36, KC 4 / 2 / 1 =
  // 1 / 0.9 / 0.82; RM 3 interpolated. compute_units is a hint.
  auto cost = [&](const AttentionPlan& p) {
    static constexpr double row_speed[] = {0, 0.36, 0.66, 0.85, 1.0};
    static constexpr double key_speed[] = {0, 0.82, 0.9, 0.9, 1.0};
    const uint64_t groups = uint64_t(p.workgroups_x) * p.workgroups_y;
    const double busiest = double(ceil_div(groups, uint64_t(target.compute_units)));
    return busiest * p.bq / (row_speed[p.rm] * key_speed[p.kc]);
  };
  const AttentionPlan* best = &feasible.front();
  for (const AttentionPlan& p : feasible)
    if (cost(p) < cost(*best) * 0.999) best = &p;
  return *best;
}

std::optional<AttentionPlan> plan_attention(const ir::Op& op, const TargetLimits& target, const std::string& forced) {
  // The kernel binds q, k, v, the mask and the result whole: a tensor beyond one binding stays
  // with the unfused kernels, which the range split can cut (codegen/range_split.h).
  uint64_t binding = target.max_storage_buffer_range;
  if (target.max_memory_allocation_size) binding = std::min(binding, target.max_memory_allocation_size);
  std::vector<const ir::Value*> tensors(op.operands.begin(), op.operands.end());
  tensors.insert(tensors.end(), op.results.begin(), op.results.end());
  for (const ir::Value* v : tensors)
    if (uint64_t(v->type.size_bytes()) > binding || v->type.numel() > kMaxPieceElements) return std::nullopt;
  // One storage buffer per operand and result (q, k, v, the masks, the output, the log-sum-exp):
  // more than the target allows (vulkan-min: 4, so a masked attention) stays unfused too.
  if (tensors.size() > target.max_per_stage_descriptor_storage_buffers) return std::nullopt;
  Extents e = extents_of(op);
  return plan_attention(e.batches, e.sq, e.sk, e.d, e.dv, target, forced);
}

std::vector<EmittedKernel> emit_attention(const DispatchGroup& group, const KernelContext& ctx,
                                          std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  const std::string what = op.describe();
  const Extents e = extents_of(op);
  for (int i = 0; i < op.num_operands(); ++i) check_32bit(op.operand(i)->type.numel(), what);
  check_32bit(op.result()->type.numel(), what);
  const std::string forced = ctx.forced(op);
  const bool force_coop = forced == "coopmat" || forced.rfind("coopmat=", 0) == 0;

  EmittedKernel k;
  KernelIo io;
  const char* mask_names[] = {"mask_at", "added_mask_at"};  // operands 3 and 4; q, k, v: operand_access
  // q, k and v read from float16 tensors only (through their prologues), or the fp16 precision
  // mode's attention (ir/passes/convert_to_fp16.cpp): either way their products may be float16.
  bool f16_qkv = true;
  for (int i = 0; i < op.num_operands(); ++i) {
    FusedCode loader = i < 3 ? operand_access(group, op, i, std::string(1, "qkv"[i]), uint32_t(io.bindings.size()), ctx)
                             : operand_loader(group, op.operand(i), mask_names[i - 3], uint32_t(io.bindings.size()), ctx);
    if (i < 3) f16_qkv = f16_qkv && loader.types == std::set<DType>{DType::f16};
    io.add(loader);
  }
  f16_qkv = f16_qkv || op.attr_bool("fp16_products");
  io.add(result_store(group, uint32_t(io.bindings.size()), ctx));
  const bool with_lse = op.attr_bool("with_lse");
  if (with_lse) {  // the second result: one value per row, stored as it is (no epilogue)
    const ir::Value* lse = op.result(1);
    FusedCode store;
    store.buffers = glsl_buffer(uint32_t(io.bindings.size()), lse->type.dtype, true, "lse_out");
    store.functions = cat("void store_lse(uint i, float x) { lse_out.data[i] = ", glsl_storage_type(lse->type.dtype), "(x); }\n");
    store.bindings = {{ctx.tensor(lse), true}};
    store.types = {lse->type.dtype};
    store.bytes = double(lse->type.size_bytes());
    io.add(store);
  }
  k.bindings = io.bindings;
  k.bytes = io.bytes;
  std::string& functions = io.functions;

  // A mask broadcasts to the scores [batch..., Sq, Sk]: its element read for batch b, query qi and
  // key kj, through loader `name` (its batch offset function `name`_batch).
  auto mask_element = [&](int operand, const std::string& name) {
    const Shape& q = op.operand(0)->type.shape;
    const Shape& ms = op.operand(operand)->type.shape;
    const size_t r = q.size();
    std::vector<int64_t> mstrides = strides_of(ms);
    auto stride_for = [&](size_t score_dim, int64_t extent) -> int64_t {  // 0 where broadcast
      size_t lead = r - ms.size();
      if (score_dim < lead) return 0;
      size_t md = score_dim - lead;
      return ms[md] == 1 && extent != 1 ? 0 : mstrides[md];
    };
    std::vector<StridedDim> batch_dims;
    for (size_t i = 0; i + 2 < r; ++i) batch_dims.push_back({q[i], stride_for(i, q[i])});
    functions += offset_function(name + "_batch", batch_dims);
    return cat(name, "_at(", name, "_batch(b) + qi * ", stride_for(r - 2, e.sq), "u + kj * ", stride_for(r - 1, e.sk), "u)");
  };
  std::string mask_code;
  if (op.num_operands() >= 4) {
    const std::string at = mask_element(3, "mask");
    mask_code = op.attr_bool("mask_fill")  // a bool mask: where true, the score is the fill
                    ? cat("        if (qi < SQ && kj < SK && ", at, " != 0) x = ",
                          glsl_literal(DType::f32, op.attr_float("fill")), ";")
                    : cat("        if (qi < SQ && kj < SK) x += float(", at, ");");
  }
  if (op.num_operands() == 5)  // added after the fill (ir/ops.cpp)
    mask_code += cat("\n        if (qi < SQ && kj < SK) x += float(", mask_element(4, "added_mask"), ");");
  const bool kt = op.attr_bool("k_transposed");
  k.flops = 2.0 * double(e.batches) * double(e.sq) * double(e.sk) * double(e.d + e.dv);
  std::vector<std::pair<std::string, std::string>> values = {
      {"EXTENSIONS", glsl_extensions(io.types)},
      {"BUFFERS", io.buffers},
      {"FUNCTIONS", functions},
      {"HD", cat(e.d)},
      {"DV", cat(e.dv)},
      {"SQ", cat(e.sq)},
      {"SK", cat(e.sk)},
      {"CAUSAL_TILES", op.attr_bool("causal") ? "1" : "0"},
      {"CAUSAL_OFFSET", cat(op.attr_int("causal_offset"))},
      {"WITH_LSE", with_lse ? "1" : "0"},
      {"SCALE", glsl_literal(DType::f32, op.attr_float("scale"))},
      {"MASK", mask_code},
      {"CAUSAL", op.attr_bool("causal") ? " || int(kj) > int(qi) + int(SK) - int(SQ) + CAUSAL_OFFSET" : ""}};

  // Tensor cores for float16 q, k and v (a float16 model, or the fp16 precision mode, whose casts
  // back to float32 are their prologues), unless an FMA tiling is forced. Single query rows
  // (decoding) stay on the FMA kernel: a fragment of 16 rows would be mostly padding.
  if (force_coop || (forced.empty() && f16_qkv && e.sq >= 16)) {
    std::string why = "its q, k and v are not float16 (a float16 model, or the fp16 precision mode)";
    std::optional<AttentionCoopPlan> cp;
    if (f16_qkv)
      cp = plan_attention_coopmat(e.batches, e.sq, e.sk, e.d, e.dv, ctx.target,
                                  forced.rfind("coopmat=", 0) == 0 ? forced.substr(8) : "", why);
    check(cp.has_value() || !force_coop, what, ": strategy '", forced, "' does not apply: ", why);
    if (cp) {
      const AttentionCoopPlan& p = *cp;
      k.kernel = "attention_coopmat";
      k.strategy = cat("coopmat ", p.bq(), "x", p.bk);
      k.cooperative_matrix_khr = coopmat_uses_khr(ctx.target);
      k.subgroup_sizes = {p.subgroup, p.subgroup};  // the fragments' layout assumes this subgroup size
      values.insert(values.end(),
                    {{"B_SCOPE_DECLARATION", k.cooperative_matrix_khr ? "layout(constant_id = 0) const uint B_SCOPE = 3u;" : ""},
                     {"B_SCOPE", k.cooperative_matrix_khr ? "B_SCOPE" : "3"},
                     {"THREADS", cat(p.invocations())},
                     {"SG", cat(p.subgroup)},
                     {"WARPS", cat(p.warps)},
                     {"FRAG_M", cat(p.fm)},
                     {"FRAG_N", cat(p.fn)},
                     {"FRAG_K", cat(p.fk)},
                     {"BK", cat(p.bk)},
                     {"HDP", cat(p.hdp)},
                     {"DVP", cat(p.dvp)},
                     {"KEY_TILES", cat(ceil_div(e.sk, int64_t(p.bk)), "u")}});
      k.glsl = instantiate_shader("attention_coopmat", values);
      k.workgroup_size = {p.invocations(), 1, 1};
      k.workgroup_count = {p.workgroups_x, p.workgroups_y, 1};
      k.workgroup_memory_bytes = p.workgroup_memory_bytes;
      k.tiles = {{"bq", p.bq()}, {"bk", p.bk}, {"head_dim", e.d}, {"subgroups", p.warps}};
      return {k};
    }
  }

  std::optional<AttentionPlan> plan = plan_attention(op, ctx.target, forced);
  check(plan.has_value(), what, ": no attention tiling fits target '", ctx.target.name, "' (",
        ctx.target.max_compute_shared_memory_size, " bytes of workgroup memory)");
  const AttentionPlan& p = *plan;
  k.kernel = "attention";
  k.strategy = cat("tiled ", p.bq, "x", p.bk);
  // K^T is staged down its columns: lanes take 8 adjacent dims of one key (one 32-byte read of k)
  // and the padded stride KS spreads the 8 dims over different banks. Keys stored transposed are
  // read along the keys instead.
  const std::string k_order = kt ? "    const uint d = i / BK, j = i % BK;"
                                 : "    const uint j = (i / 8u) % BK, d = (i / (8u * BK)) * 8u + i % 8u;";
  const int64_t k_total = int64_t(p.bk) * (kt ? e.d : round_up(e.d, int64_t(8)));
  auto vec_of = [](uint32_t n) -> std::string { return n == 1 ? "float" : cat("vec", n); };
  const bool shuffle_max = attention_row_max_by_shuffle(ctx.target);
  if (shuffle_max) {
    for (auto& [key, text] : values)
      if (key == "EXTENSIONS") text += "#extension GL_KHR_shader_subgroup_basic : require\n#extension GL_KHR_shader_subgroup_shuffle : require\n";
    // Any device whose subgroups hold whole aligned runs of 8 lanes runs it.
    k.subgroup_sizes = {kAttentionLanes, kAttentionThreads};
  }
  values.push_back({"SHUFFLE_MAX", shuffle_max ? "1" : "0"});
  values.insert(values.end(), {{"RM", cat(p.rm)},
                               {"KC", cat(p.kc)},
                               {"C4", cat(p.c4)},
                               {"RVEC", vec_of(p.rm)},
                               {"KVEC", vec_of(p.kc)},
                               {"RGET", p.rm == 1 ? "v" : "v[r]"},
                               {"KGET", p.kc == 1 ? "v" : "v[c]"},
                               {"KEY_TILES", cat(ceil_div(e.sk, int64_t(p.bk)), "u")},
                               {"K_ORDER", k_order},
                               {"KTOTAL", cat(k_total)}});
  k.glsl = instantiate_shader("attention", values);
  k.workgroup_size = {kAttentionThreads, 1, 1};
  k.workgroup_count = {p.workgroups_x, p.workgroups_y, 1};
  k.workgroup_memory_bytes = p.workgroup_memory_bytes;
  k.tiles = {{"bq", p.bq}, {"bk", p.bk}, {"head_dim", e.d}};
  return {k};
}

}  // namespace vkc::codegen::kernels
