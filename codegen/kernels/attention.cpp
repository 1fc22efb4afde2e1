// Attention as one kernel (shaders/attention.comp): tiles planned against the target's workgroup
// memory, q/k/v read through fused prologues (the head-split transposes and reshapes exporters put
// in front), the result stored through a fused epilogue.
#include <algorithm>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/attention_plan.h"
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

uint32_t shared_bytes(uint32_t bq, uint32_t bk, int64_t d, int64_t dv) {
  return uint32_t(4 * (uint64_t(d) * bq + uint64_t(d) * bk + uint64_t(bk) * uint64_t(dv) + uint64_t(bk) * bq +
                       uint64_t(bq) * 8));
}

}  // namespace

std::optional<AttentionPlan> plan_attention(int64_t batches, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                            const TargetLimits& target, const std::string& forced) {
  if (d < 1 || dv < 1 || sq < 1 || sk < 1 || d > kAttentionMaxHeadDim || dv > kAttentionMaxHeadDim) return std::nullopt;
  if (target.max_compute_work_group_invocations < kAttentionThreads ||
      target.max_compute_work_group_size[0] < kAttentionThreads)
    return std::nullopt;
  struct Tile {
    uint32_t bq, bk;
  };
  // Larger tiles read K and V fewer times; the occupancy rule below trades that for workgroups.
  // 32x16 before 32x32: on an H200 at 1x12x1024x64 it ran 0.248 ms against 0.284 ms (RESULTS.md,
  // session 13), the smaller score block leaving more workgroups resident.
  std::vector<Tile> candidates{{64, 64}, {64, 32}, {32, 16}, {32, 32}, {16, 16}};
  if (!forced.empty()) {
    size_t x = forced.find('x');
    check(x != std::string::npos, "attention: strategy '", forced, "' is not BQxBK (e.g. 64x32)");
    candidates = {{uint32_t(std::stoul(forced.substr(0, x))), uint32_t(std::stoul(forced.substr(x + 1)))}};
    check((candidates[0].bq == 16 || candidates[0].bq == 32 || candidates[0].bq == 64) && candidates[0].bk % 8 == 0 &&
              candidates[0].bk >= 8 && candidates[0].bk <= 64,
          "attention: strategy '", forced, "': BQ must be 16, 32 or 64 and BK a multiple of 8 up to 64");
  }
  std::vector<AttentionPlan> feasible;
  for (const Tile& t : candidates) {
    AttentionPlan p;
    p.bq = t.bq;
    p.bk = t.bk;
    p.rm = t.bq / 16;
    p.kc = t.bk / 8;
    p.dc = uint32_t(ceil_div(dv, int64_t(8)));
    // Registers: the output block and the score block, per invocation.
    if (p.rm * p.dc > 64 || p.rm * p.kc > 32) continue;
    p.workgroup_memory_bytes = shared_bytes(t.bq, t.bk, d, dv);
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
  // The largest tiles that still give two workgroups per compute unit (fewer leaves the GPU idle);
  // else the most workgroups there are. compute_units is a hint.
  for (const AttentionPlan& p : feasible)
    if (uint64_t(p.workgroups_x) * p.workgroups_y >= 2ull * target.compute_units) return p;
  return feasible.back();
}

std::optional<AttentionPlan> plan_attention(const ir::Op& op, const TargetLimits& target, const std::string& forced) {
  // The kernel binds q, k, v, the mask and the result whole: a tensor beyond one binding stays
  // with the unfused kernels, which the range split can cut (codegen/range_split.h).
  uint64_t binding = target.max_storage_buffer_range;
  if (target.max_memory_allocation_size) binding = std::min(binding, target.max_memory_allocation_size);
  std::vector<const ir::Value*> tensors(op.operands.begin(), op.operands.end());
  tensors.push_back(op.result());
  for (const ir::Value* v : tensors)
    if (uint64_t(v->type.size_bytes()) > binding || v->type.numel() > kMaxPieceElements) return std::nullopt;
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
  std::optional<AttentionPlan> plan = plan_attention(op, ctx.target, ctx.forced(op));
  check(plan.has_value(), what, ": no attention tiling fits target '", ctx.target.name, "' (",
        ctx.target.max_compute_shared_memory_size, " bytes of workgroup memory)");
  const AttentionPlan& p = *plan;

  EmittedKernel k;
  k.kernel = "attention";
  k.strategy = cat("tiled ", p.bq, "x", p.bk);
  KernelIo io;
  const char* names[] = {"q_at", "k_at", "v_at", "mask_at"};
  for (int i = 0; i < op.num_operands(); ++i)
    io.add(operand_loader(group, op.operand(i), names[i], uint32_t(io.bindings.size()), ctx));
  io.add(result_store(group, uint32_t(io.bindings.size()), ctx));
  k.bindings = io.bindings;
  k.bytes = io.bytes;
  std::string& functions = io.functions;

  // The mask broadcasts to the scores [batch..., Sq, Sk]: its element offset per batch, query, key.
  std::string mask_code;
  if (op.num_operands() == 4) {
    const Shape& q = op.operand(0)->type.shape;
    const Shape& ms = op.operand(3)->type.shape;
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
    functions += offset_function("mask_batch", batch_dims);
    mask_code = cat("        if (qi < SQ && kj < SK) x += float(mask_at(mask_batch(b) + qi * ", stride_for(r - 2, e.sq),
                    "u + kj * ", stride_for(r - 1, e.sk), "u));");
  }
  std::string load_k =
      op.attr_bool("k_transposed")
          ? "    for (uint i = tid; i < BK * HD; i += 128u) {\n      uint d = i / BK, j = i % BK;\n"
            "      kt[i] = k0 + j < SK ? float(k_at((b * HD + d) * SK + k0 + j)) : 0.0;\n    }"
          : "    for (uint i = tid; i < BK * HD; i += 128u) {\n      uint j = i / HD, d = i % HD;\n"
            "      kt[d * BK + j] = k0 + j < SK ? float(k_at((b * SK + k0 + j) * HD + d)) : 0.0;\n    }";
  k.glsl = instantiate_shader(
      "attention", {{"EXTENSIONS", glsl_extensions(io.types)},
                    {"BUFFERS", io.buffers},
                    {"FUNCTIONS", functions},
                    {"BQ", cat(p.bq)},
                    {"BK", cat(p.bk)},
                    {"HD", cat(e.d)},
                    {"DV", cat(e.dv)},
                    {"RM", cat(p.rm)},
                    {"KC", cat(p.kc)},
                    {"DC", cat(p.dc)},
                    {"SQ", cat(e.sq)},
                    {"SK", cat(e.sk)},
                    {"KEY_TILES", cat(ceil_div(e.sk, int64_t(p.bk)), "u")},
                    {"LOAD_K", load_k},
                    {"SCALE", glsl_literal(DType::f32, op.attr_float("scale"))},
                    {"MASK", mask_code},
                    {"CAUSAL", op.attr_bool("causal") ? " || int(kj) > int(qi) + int(SK) - int(SQ)" : ""}});
  k.workgroup_size = {kAttentionThreads, 1, 1};
  k.workgroup_count = {p.workgroups_x, p.workgroups_y, 1};
  k.workgroup_memory_bytes = p.workgroup_memory_bytes;
  k.tiles = {{"bq", p.bq}, {"bk", p.bk}, {"head_dim", e.d}};
  k.flops = 2.0 * double(e.batches) * double(e.sq) * double(e.sk) * double(e.d + e.dv);
  return {k};
}

}  // namespace vkc::codegen::kernels
