// LSD radix sort of long rows through global memory (strategy "radix"): keys become
// order-preserving uints (shaders/sort_keys.glsl; descending complements them), then one pass per
// 8-bit digit, least significant first, sorts (key, index) pairs stably by that digit. Stability
// across passes is what makes the whole sort correct, and also what keeps equal keys in input
// order (lower index first) in both directions.
//
// A pass is three dispatches: per-tile digit counts, a scan of the counts over each row's tiles,
// and a scatter that ranks each tile stably in workgroup memory (with subgroup ballots where the
// target has them) and writes every pair to its place in the row. Pairs ping-pong between two
// scratch buffers. For 4-byte keys the pairs carry the key's own bits (and a 4-byte payload's bits
// instead of the index), so the last pass writes the sorted values (and payload) itself: no
// gather, which on long rows costs as much as a scatter pass. Otherwise the last pass writes
// `order` for the gathers.
// Compared with the global bitonic sort (O(log^2 n) dispatches over all keys) this reads and
// writes every key a fixed four times for 32-bit keys.
#include <algorithm>
#include <optional>

#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

constexpr uint32_t kMaxItems = 16;  // keys per invocation: more costs registers, less pays more
                                    // histogram traffic per key
constexpr uint32_t kMinItems = 8;   // the rank counters (8 words per invocation) reuse the key
                                    // array while the indices still sit in theirs

// Workgroup size of the count and scatter passes. The ballot scatter with 16 keys per invocation
// takes 139 registers on the H200 (NVIDIA's pipeline statistics, 2026-11-24): at 256 invocations
// an SM of 64K registers holds one workgroup, which idles at each of its barriers; at 128 it
// holds three. Measured in one call (bench/RESULTS.md, Run G): 2^24 keys sort in 1.123 ms at 128
// against 1.179 ms at 256.
constexpr uint32_t kWorkgroup = 128;

uint32_t scatter_bytes(uint32_t workgroup, uint32_t items) {
  uint32_t tile = workgroup * items;
  return 2 * (tile + tile / 32) * 4 + 256 * 4 + workgroup * 8;
}

// The subgroup-ranking scatter: its counters ([subgroup][digit]) share the pair arrays' space.
uint32_t subgroup_scatter_words(uint32_t workgroup, uint32_t items, uint32_t max_subgroups) {
  uint32_t tile = workgroup * items;
  return std::max(2 * (tile + tile / 32), 256 * max_subgroups);
}
uint32_t subgroup_scatter_bytes(uint32_t workgroup, uint32_t items, uint32_t max_subgroups) {
  return subgroup_scatter_words(workgroup, items, max_subgroups) * 4 + 256 * 4 + max_subgroups * 8;
}

// The digits a key type needs sorted, least significant first. A digit can be skipped when its
// value is a function of the more significant bits, since equal higher bits then mean equal keys:
// f16 keys are exact f32 images whose low 13 bits are all zeros or all ones depending on the sign
// (NaN is all ones); 8-bit keys are int images whose bits 8..30 copy the sign (clear for u8).
std::vector<uint32_t> digit_shifts(DType t) {
  switch (t) {
    case DType::f16: return {8, 16, 24};
    case DType::i8: return {0, 24};
    case DType::u8: return {0};
    default: return {0, 8, 16, 24};
  }
}

}  // namespace

bool radix_subgroup_ranking_possible(const TargetLimits& target) {
  return target.subgroup_ballot && target.subgroup_arithmetic && target.min_subgroup_size > 0 &&
         target.max_subgroup_size >= target.min_subgroup_size && target.max_subgroup_size <= 128;
}

std::optional<RadixTile> radix_tile(const TargetLimits& target, bool small, bool no_subgroups) {
  uint32_t budget = target.max_compute_shared_memory_size;
  bool subgroups = !no_subgroups && radix_subgroup_ranking_possible(target);
  // Full subgroups need a workgroup that is a multiple of the largest subgroup size.
  auto fits = [&](uint32_t wg, uint32_t items) -> std::optional<RadixTile> {
    if (subgroups && wg % target.max_subgroup_size == 0) {
      uint32_t most = wg / target.min_subgroup_size;
      if (subgroup_scatter_bytes(wg, items, most) <= budget) return RadixTile{wg, items, true, most};
    }
    if (!subgroups && scatter_bytes(wg, items) <= budget) return RadixTile{wg, items};
    return std::nullopt;
  };
  if (small)
    if (auto tile = fits(fit_workgroup_size_x(std::max<uint32_t>(16, subgroups ? target.max_subgroup_size : 16), target), kMinItems))
      return tile;
  for (uint32_t wg = fit_workgroup_size_x(kWorkgroup, target); wg >= 8; wg /= 2)
    for (uint32_t items = kMaxItems; items >= kMinItems; items /= 2)
      if (auto tile = fits(wg, items)) return tile;
  // A target whose subgroups do not fit keeps the portable ranking.
  if (subgroups) return radix_tile(target, small, true);
  return std::nullopt;
}

bool radix_writes_values(DType key_type) { return dtype_size(key_type) == 4; }
bool radix_carries_payload(DType key_type, DType payload_type) {
  return radix_writes_values(key_type) && dtype_size(payload_type) == 4;
}

bool radix_sort_fits(const SortRows& rows, const TargetLimits& target) {
  std::optional<RadixTile> tile = radix_tile(target, false);
  if (!tile) return false;
  // Pair buffers (every key and its index) and histograms, each one storage buffer with 32-bit
  // indexing.
  uint64_t pair_words = uint64_t(rows.rows()) * rows.n * 2;
  uint64_t hist_words = uint64_t(rows.rows()) * 256 * (ceil_div(rows.n, tile->keys()) + 1);
  uint64_t words = std::max(pair_words, hist_words);
  return words <= UINT32_MAX && words * 4 <= target.max_storage_buffer_range;
}

std::vector<EmittedKernel> emit_sort_radix(const KeySource& keys, const SortDirect& direct, int64_t out_len,
                                           bool small_tiles, bool portable_ranking,
                                           const AddScratch& add_scratch, const KernelContext& ctx,
                                           const std::string& what) {
  RadixPass pass;
  pass.rows = keys.rows.rows();
  pass.n = keys.rows.n;
  pass.layout = keys.rows;
  pass.key_type = keys.value->type.dtype;
  pass.descending = keys.descending;
  std::optional<RadixTile> tile =
      radix_tile(ctx.target, small_tiles, portable_ranking);
  check(tile.has_value(), what, ": strategy 'radix' needs more than ", ctx.target.max_compute_shared_memory_size,
        " bytes of workgroup memory (target '", ctx.target.name, "')");
  pass.tile = *tile;
  check(uint64_t(pass.rows) * pass.n * 2 <= UINT32_MAX, what, ": ", pass.rows, " rows of ", pass.n,
        " keys exceed 32-bit indexing");
  bool direct_values = direct.values != nullptr || direct.payload != nullptr;
  check(!direct_values || radix_writes_values(pass.key_type), "internal: ", what,
        ": radix writes values only for 4-byte keys");
  check(direct.payload == nullptr || radix_carries_payload(pass.key_type, direct.payload->type.dtype),
        "internal: ", what, ": radix carries only a 4-byte payload");
  check(direct.payload == nullptr || direct.order.empty(), "internal: ", what,
        ": a carried payload replaces the indices `order` needs");
  pass.raw_words = radix_writes_values(pass.key_type);
  pass.hist = add_scratch("_radix_hist", pass.rows * 256 * (pass.tiles() + 1));
  std::vector<uint32_t> shifts = digit_shifts(pass.key_type);
  // Pairs ping-pong between two buffers; a sort of one or two passes needs fewer.
  std::vector<std::string> pairs;
  for (size_t p = 0; p + 1 < shifts.size() && p < 2; ++p)
    pairs.push_back(add_scratch(cat("_radix_pairs", p), pass.rows * pass.n * 2));

  std::vector<EmittedKernel> kernels;
  for (size_t p = 0; p < shifts.size(); ++p) {
    pass.keys = p == 0 ? &keys : nullptr;
    pass.payload = p == 0 && direct.payload ? ctx.tensor(direct.payload_source) : "";
    pass.in_pairs = p == 0 ? "" : pairs[(p - 1) % 2];
    pass.shift = shifts[p];
    bool last = p + 1 == shifts.size();
    check(!last || p > 0 || direct.payload == nullptr, "internal: ", what, ": one-pass radix carries no payload");
    pass.out_pairs = last ? "" : pairs[p % 2];
    pass.order = last ? direct.order : "";
    pass.values = last && direct.values ? ctx.tensor(direct.values) : "";
    pass.payload_out = last && direct.payload ? ctx.tensor(direct.payload) : "";
    pass.out_len = out_len;
    kernels.push_back(emit_sort_radix_count(pass, ctx, what));
    kernels.push_back(emit_sort_radix_scan(pass, ctx, what));
    kernels.push_back(emit_sort_radix_scatter(pass, ctx, what));
  }
  return kernels;
}

}  // namespace vkc::codegen::kernels
