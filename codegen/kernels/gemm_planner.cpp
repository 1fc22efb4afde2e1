#include "codegen/kernels/gemm_planner.h"

#include <algorithm>

#include "codegen/kernels/gemm_core.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

// Best first: large tiles reuse each staged element most; smaller ones fit stricter targets
// (vulkan-min allows 128 invocations) and small problems. A vendor names the only GPUs a tile is
// offered on ("": all).
struct TileEntry {
  GemmTile tile;
  const char* vendor;
};
constexpr TileEntry kTiles[] = {
    // 16x8 accumulators with two stages: the 4096^3 fp32 matmul took 3.75 ms on the H200 where
    // 128x128 took 3.95 (bench/RESULTS.md, session 9). 222 registers leave one workgroup per SM,
    // and it is the second stage, which saves a barrier per slice, that pays: one stage was 3.91.
    // Not measured elsewhere; 128 accumulators per invocation would spill on smaller register files.
    {{256, 128, 16, 16, 8, 2}, "nvidia"},  // 256 invocations, 48 KiB
    {{256, 128, 8, 16, 8, 2}, "nvidia"},   // 256 invocations, 24 KiB (3.82 ms)
    {{128, 128, 16, 8, 8}, ""},  // 256 invocations, 16 KiB
    {{128, 64, 16, 8, 4}, ""},   // 256 invocations, 12 KiB
    {{64, 128, 16, 4, 8}, ""},   // 256 invocations, 12 KiB
    {{64, 64, 16, 4, 4}, ""},    // 256 invocations, 8 KiB
    {{64, 32, 16, 4, 4}, ""},    // 128 invocations, 6 KiB
    {{32, 64, 16, 4, 4}, ""},    // 128 invocations, 6 KiB
    {{32, 32, 16, 4, 4}, ""},    // 64 invocations, 4 KiB
    {{32, 32, 16, 2, 4}, ""},    // 128 invocations, 4 KiB
    {{16, 16, 16, 2, 2}, ""},    // 64 invocations, 2 KiB
    {{16, 16, 8, 2, 2}, ""},     // 64 invocations, 1 KiB
};

bool fits(const TileEntry& e, const TargetLimits& target) {
  const GemmTile& t = e.tile;
  if (*e.vendor != '\0' && target.vendor != e.vendor) return false;
  // The GEMM loop stages every tile of this list M-/N-fast (K-fast where it also stages evenly).
  GemmCoreShape core{uint32_t(t.tile_m), uint32_t(t.tile_n), uint32_t(t.tile_k), uint32_t(t.reg_m),
                     uint32_t(t.reg_n)};
  core.stages = uint32_t(t.stages);
  if (!gemm_core_supports(core)) return false;
  uint32_t inv = t.invocations();
  return inv <= target.max_compute_work_group_invocations && inv <= target.max_compute_work_group_size[0] &&
         t.workgroup_memory_bytes() <= target.max_compute_shared_memory_size;
}

int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

std::string GemmTile::str() const {
  return cat(tile_m, "x", tile_n, "x", tile_k, " tile, ", reg_m, "x", reg_n, " per invocation",
             stages > 1 ? cat(", ", stages, " stages") : "");
}

std::optional<GemmTile> plan_gemm_tile(int64_t m, int64_t n, const TargetLimits& target, int64_t batches) {
  // Two workgroups per compute unit (as the conv planner): a small output on a large GPU would
  // otherwise leave most of it idle. 0 compute units (unknown): the first tile that fits.
  const int64_t want = 2 * int64_t(target.compute_units);
  std::optional<GemmTile> fallback, most;
  int64_t most_workgroups = 0;
  for (const TileEntry& e : kTiles) {
    if (!fits(e, target)) continue;
    const GemmTile& t = e.tile;
    if (!fallback) fallback = t;
    // A tile twice the problem's (power-of-two rounded) extent would mostly compute padding.
    if (t.tile_m > std::max<int64_t>(16, pow2_at_least(m)) || t.tile_n > std::max<int64_t>(16, pow2_at_least(n)))
      continue;
    int64_t workgroups = std::max<int64_t>(1, batches) * ((m + t.tile_m - 1) / t.tile_m) * ((n + t.tile_n - 1) / t.tile_n);
    if (workgroups >= want) return t;
    if (workgroups > most_workgroups) {
      most_workgroups = workgroups;
      most = t;
    }
  }
  return most ? most : fallback;
}

std::optional<GemmTile> default_gemm_tile(int64_t m, int64_t n, int64_t k, const TargetLimits& target,
                                          int64_t batches) {
  // Below 16 rows or columns most of a tile would be padding; below 8 deep, staging costs more
  // than the products it feeds.
  if (m < 16 || n < 16 || k < 8) return std::nullopt;
  return plan_gemm_tile(m, n, target, batches);
}

}  // namespace vkc::codegen::kernels
