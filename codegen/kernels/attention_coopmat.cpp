// Attention on tensor cores (shaders/attention_coopmat.comp): the tile plan against the target's
// cooperative-matrix shape, subgroup size and workgroup memory. emit_attention
// (codegen/kernels/attention.cpp) takes this form for float16 q, k and v where it fits and keeps
// the FMA kernel elsewhere.
#include <algorithm>
#include <cstdio>

#include "codegen/kernels/attention_plan.h"
#include "codegen/kernels/gemm_coopmat.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {

namespace {

// The shader's workgroup arrays (k_tile, v_tile, scratch, red) for this plan, as it sizes them.
uint32_t coop_shared_bytes(const AttentionCoopPlan& p) {
  const uint64_t ks = p.hdp + 8, vs = p.dvp + 8, ss = p.bk + 4, lpr = p.subgroup / p.fm;
  const uint64_t qk_rows = std::max(p.bq(), p.bk);
  return uint32_t(2 * qk_rows * ks + 2 * uint64_t(p.bk) * vs + 4 * uint64_t(p.warps) * p.fm * ss +
                  4 * uint64_t(p.warps) * p.fm * lpr);
}

}  // namespace

std::optional<AttentionCoopPlan> plan_attention_coopmat(int64_t batches, int64_t sq, int64_t sk, int64_t d, int64_t dv,
                                                        const TargetLimits& target, const std::string& tiles,
                                                        std::string& why) {
  why = coopmat_misfit(target);
  if (!why.empty()) return std::nullopt;
  if (d > kAttentionCoopMaxHeadDim || dv > kAttentionCoopMaxHeadDim || d < 1 || dv < 1 || sq < 1 || sk < 1) {
    why = cat("head dims ", d, " and ", dv, " are not within 1..", kAttentionCoopMaxHeadDim);
    return std::nullopt;
  }
  const std::array<uint32_t, 3> frag = coopmat_fragment(target);
  const uint32_t sg = coopmat_subgroup_size(target);
  AttentionCoopPlan base;
  base.subgroup = sg;
  base.fm = frag[0], base.fn = frag[1], base.fk = frag[2];
  // Each lane of a row takes whole 16-byte runs: 8 probabilities (halves), 4 output columns.
  if (sg % base.fm != 0 || (base.fn / (sg / base.fm)) % 4 != 0) {
    why = cat("its ", base.fm, "-row fragments do not split over a subgroup of ", sg, " in 16-byte runs");
    return std::nullopt;
  }
  base.hdp = uint32_t(round_up(d, int64_t(std::max<uint32_t>(base.fk, 8))));
  base.dvp = uint32_t(round_up(dv, int64_t(std::max<uint32_t>(base.fn, 8))));
  // Candidates, the planner's order: 4 subgroups (64 rows on 16-row fragments) before 2, the
  // longest key tile that fits (fewer barriers and softmax passes per key).
  struct Tile {
    uint32_t warps, bk;
  };
  std::vector<Tile> candidates{{4, 64}, {4, 32}, {2, 64}, {2, 32}, {4, 16}, {2, 16}};
  if (!tiles.empty()) {
    unsigned bq = 0, bk = 0;
    char tail = 0;
    check(std::sscanf(tiles.c_str(), "%ux%u%c", &bq, &bk, &tail) == 2 && bq % base.fm == 0 && bq > 0 && bk > 0,
          "attention: tensor-core tiles '", tiles, "' are not BQxBK with BQ a multiple of ", base.fm);
    candidates = {{bq / base.fm, bk}};
  }
  std::optional<AttentionCoopPlan> best;
  for (const Tile& t : candidates) {
    AttentionCoopPlan p = base;
    p.warps = t.warps;
    p.bk = t.bk;
    const uint32_t lpr = sg / p.fm;
    if (p.bk % p.fn != 0 || p.bk % p.fk != 0 || (p.bk / lpr) % 8 != 0) {
      why = cat("a key tile of ", p.bk, " is not whole fragments with 8 keys per lane");
      continue;
    }
    if (p.invocations() > target.max_compute_work_group_invocations ||
        p.invocations() > target.max_compute_work_group_size[0]) {
      why = cat(p.invocations(), " invocations are above the target's limit");
      continue;
    }
    p.workgroup_memory_bytes = coop_shared_bytes(p);
    if (p.workgroup_memory_bytes > target.max_compute_shared_memory_size) {
      why = cat("tiles ", p.bq(), "x", p.bk, " take ", p.workgroup_memory_bytes, " bytes of workgroup memory, the target has ",
                target.max_compute_shared_memory_size);
      continue;
    }
    const int64_t query_tiles = ceil_div(sq, int64_t(p.bq()));
    if (query_tiles > int64_t(target.max_compute_work_group_count[0]) ||
        batches > int64_t(target.max_compute_work_group_count[1])) {
      why = "the grid is above the target's workgroup counts";
      continue;
    }
    p.workgroups_x = uint32_t(query_tiles);
    p.workgroups_y = uint32_t(batches);
    best = p;
    break;
  }
  if (best) why.clear();
  return best;
}

}  // namespace vkc::codegen::kernels
