// LSD radix sort of long rows through global memory (strategy "radix"): keys become
// order-preserving uints (shaders/sort_keys.glsl; descending complements them), then one pass per
// 8-bit digit, least significant first, sorts (key, index) pairs stably by that digit. Stability
// across passes is what makes the whole sort correct, and also what keeps equal keys in input
// order (lower index first) in both directions.
//
// A pass is three dispatches: per-tile digit counts, a scan of the counts over each row's tiles,
// and a scatter that ranks each tile stably in workgroup memory and writes every pair to its place
// in the row. Pairs ping-pong between two scratch buffers; the last pass writes only `order`.
// Compared with the global bitonic sort (O(log^2 n) dispatches over all keys) this reads and
// writes every key a fixed four times for 32-bit keys.
#include <algorithm>
#include <optional>

#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

constexpr uint32_t kMaxItems = 16;  // keys per invocation: more costs registers, less pays more
                                    // histogram traffic per key
constexpr uint32_t kMinItems = 8;   // the rank counters (8 words per invocation) reuse the key
                                    // array while the indices still sit in theirs

uint32_t scatter_bytes(uint32_t workgroup, uint32_t items) {
  uint32_t tile = workgroup * items;
  return 2 * (tile + tile / 32) * 4 + 256 * 4 + workgroup * 8;
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

std::optional<RadixTile> radix_tile(const TargetLimits& target, bool small) {
  uint32_t budget = target.max_compute_shared_memory_size;
  if (small) {
    RadixTile tile{fit_workgroup_size_x(16, target), kMinItems};
    if (scatter_bytes(tile.workgroup, tile.items) <= budget) return tile;
  }
  for (uint32_t wg = fit_workgroup_size_x(256, target); wg >= 8; wg /= 2)
    for (uint32_t items = kMaxItems; items >= kMinItems; items /= 2)
      if (scatter_bytes(wg, items) <= budget) return RadixTile{wg, items};
  return std::nullopt;
}

bool radix_sort_fits(const SortRows& rows, const TargetLimits& target) {
  std::optional<RadixTile> tile = radix_tile(target, false);
  if (!tile) return false;
  // Pair buffers (every key and its index) and histograms, each one storage buffer with 32-bit
  // indexing.
  uint64_t pair_words = uint64_t(rows.rows()) * rows.n * 2;
  uint64_t hist_words = uint64_t(rows.rows()) * 256 * ((rows.n + tile->keys() - 1) / tile->keys() + 1);
  uint64_t words = std::max(pair_words, hist_words);
  return words <= UINT32_MAX && words * 4 <= target.max_storage_buffer_range;
}

std::vector<EmittedKernel> emit_sort_radix(const KeySource& keys, const std::string& order, int64_t out_len,
                                           bool small_tiles, const AddScratch& add_scratch,
                                           const KernelContext& ctx, const std::string& what) {
  RadixPass pass;
  pass.rows = keys.rows.rows();
  pass.n = keys.rows.n;
  std::optional<RadixTile> tile = radix_tile(ctx.target, small_tiles);
  check(tile.has_value(), what, ": strategy 'radix' needs more than ", ctx.target.max_compute_shared_memory_size,
        " bytes of workgroup memory (target '", ctx.target.name, "')");
  pass.tile = *tile;
  check(uint64_t(pass.rows) * pass.n * 2 <= UINT32_MAX, what, ": ", pass.rows, " rows of ", pass.n,
        " keys exceed 32-bit indexing");
  pass.hist = add_scratch("_radix_hist", pass.rows * 256 * (pass.tiles() + 1));
  std::vector<uint32_t> shifts = digit_shifts(keys.value->type.dtype);
  // Pairs ping-pong between two buffers; a sort of one or two passes needs fewer.
  std::vector<std::string> pairs;
  for (size_t p = 0; p + 1 < shifts.size() && p < 2; ++p)
    pairs.push_back(add_scratch(cat("_radix_pairs", p), pass.rows * pass.n * 2));

  std::vector<EmittedKernel> kernels;
  for (size_t p = 0; p < shifts.size(); ++p) {
    pass.keys = p == 0 ? &keys : nullptr;
    pass.in_pairs = p == 0 ? "" : pairs[(p - 1) % 2];
    pass.shift = shifts[p];
    bool last = p + 1 == shifts.size();
    pass.out_pairs = last ? "" : pairs[p % 2];
    pass.order = last ? order : "";
    pass.out_len = out_len;
    kernels.push_back(emit_sort_radix_count(pass, ctx, what));
    kernels.push_back(emit_sort_radix_scan(pass, ctx, what));
    kernels.push_back(emit_sort_radix_scatter(pass, ctx, what));
  }
  return kernels;
}

}  // namespace vkc::codegen::kernels
