#include "codegen/conv_planner_depthwise.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace {

// Each staged input value feeds up to this many output channels from registers; 16 covers the
// usual channel multipliers (and the Cin = 1 convs that fan one image out to F filters).
constexpr uint32_t kMaxChannels = 16;
// Accumulators per invocation (slots x channels): enough to amortize each workgroup-memory read
// over many FMAs while staying far below the register file of any desktop GPU.
constexpr uint32_t kMaxAccumulators = 32;
// Widest tile row: rows up to 64 outputs cover typical feature maps in one piece, so the staged
// window is whole rows, contiguous in NC... layouts, with no halo along W.
constexpr int64_t kMaxRow = 64;
// Fewer workgroups than this leaves compute units idle on large GPUs (an H200 has 132 SMs), so
// the planner shrinks the tile until the grid reaches it, when the output allows.
constexpr uint64_t kMinWorkgroups = 128;
// Invocations are rounded up to whole 32-wide subgroups (NVIDIA warps; half an AMD wave).
constexpr uint32_t kSubgroupRound = 32;
// Filter values (taps of one D slice x channels) an invocation may hold in registers for the
// direct kernel: a 5x5 conv of one channel, or 3x3 of four. With no staging and no barrier, each
// invocation's loads are all in flight at once: 1x256x512x512 3x3 took 0.227 ms against 0.321 ms
// staged on the H200 (bench/RESULTS.md, Run K).
constexpr int64_t kMaxTapRegisters = 36;

// The largest part <= limit that splits n into equal-sized pieces (the last may be shorter by
// less than the number of pieces): 56 with limit 32 gives 28, not 32 + 24.
int64_t balanced(int64_t n, int64_t limit) {
  limit = std::clamp<int64_t>(limit, 1, n);
  return int64_t(ceil_div(uint64_t(n), ceil_div(uint64_t(n), uint64_t(limit))));
}

// Canonical (D, H, W) values of a per-spatial-dim vector, right-aligned; missing dims get `fill`.
std::array<int64_t, 3> right_aligned(const std::vector<int64_t>& v, int64_t fill) {
  std::array<int64_t, 3> a{fill, fill, fill};
  for (size_t i = 0; i < v.size(); ++i) a[3 - v.size() + i] = v[i];
  return a;
}

// The tile for up to `slots` rows on each of `workgroup` invocations with `channels` per
// workgroup. Invocations form strips: a tile row of T2 columns is covered by T2 neighbouring
// invocations, and each invocation owns `slots` consecutive rows of its column, so the kernel
// reads each staged input row once for all the rows it feeds (shaders/conv_depthwise_tiled.comp).
// A tile is one D slice (T0 = 1): a strip never crosses slices.
DepthwiseTile shape_tile(const ir::ConvGeometry& g, uint32_t channels, uint32_t workgroup, uint32_t slots,
                         uint32_t cap) {
  std::array<int64_t, 3> out = right_aligned(g.out_spatial, 1), k = right_aligned(g.kernel, 1),
                         s = right_aligned(g.strides, 1), d = right_aligned(g.dilations, 1);
  DepthwiseTile tile;
  int64_t t2 = balanced(out[2], std::min<int64_t>(kMaxRow, workgroup));
  int64_t strips_max = std::max<int64_t>(1, workgroup / t2);
  int64_t t1 = balanced(out[1], strips_max * slots);
  // Fewer rows than strips x slots: spread them over more strips with fewer rows each.
  int64_t strips = std::min(strips_max, t1);
  tile.slots = uint32_t(ceil_div(uint64_t(t1), uint64_t(strips)));
  tile.strips = uint32_t(ceil_div(uint64_t(t1), tile.slots));
  tile.out = {1, uint32_t(t1), uint32_t(t2)};
  for (size_t i = 0; i < 3; ++i) {
    // Rows are staged for whole strips (the last strip's rows past the tile are read, not stored).
    int64_t staged = i == 1 ? int64_t(tile.strips) * tile.slots : int64_t(tile.out[i]);
    tile.in[i] = uint32_t((staged - 1) * s[i] + (k[i] - 1) * d[i] + 1);
    tile.tiles[i] = uint32_t(ceil_div(uint64_t(out[i]), tile.out[i]));
  }
  // strips x T2 <= workgroup <= cap, and workgroup is a multiple of 32 unless cap is smaller.
  tile.invocations = std::min(cap, uint32_t(ceil_div(uint64_t(tile.strips) * t2, kSubgroupRound) * kSubgroupRound));
  tile.channels = channels;
  tile.lanes = channels % 4 == 0 ? 4 : 1;
  tile.channel_blocks = uint32_t(ceil_div(uint64_t(g.out_channels_per_group()), channels));
  tile.taps = uint32_t(k[0] * k[1] * k[2]);
  tile.direct = k[1] * k[2] * int64_t(channels) <= kMaxTapRegisters;
  tile.workgroups = uint64_t(g.batch) * uint64_t(g.groups) * tile.channel_blocks * tile.spatial_tiles();
  return tile;
}

bool fits(const DepthwiseTile& tile, const TargetLimits& t) {
  uint64_t grid = uint64_t(t.max_compute_work_group_count[0]) * t.max_compute_work_group_count[1];
  return tile.workgroup_memory_bytes() <= t.max_compute_shared_memory_size && tile.workgroups <= grid &&
         tile.workgroups <= UINT32_MAX;
}

}  // namespace

std::string plan_depthwise_tile(const ir::ConvGeometry& g, const TargetLimits& t, DepthwiseTile& out) {
  if (g.in_channels_per_group() != 1 || g.groups != g.in_channels)
    return cat("groups ", g.groups, " != input channels ", g.in_channels);
  if (g.transposed)  // its taps skip the zeros of the strided upsampling: no fixed input window
    return "conv_transpose has no fixed input window per output tile";
  uint32_t cap = std::min(t.max_compute_work_group_size[0], t.max_compute_work_group_invocations);
  // (invocations, slots) from the largest tile down; at equal size, more invocations share the
  // staging loads.
  std::vector<std::pair<uint32_t, uint32_t>> shapes;
  for (uint32_t wg : {256u, 128u, 64u, 32u})
    for (uint32_t slots : {8u, 4u, 2u, 1u})
      if (wg <= cap) shapes.push_back({wg, slots});
  if (shapes.empty()) shapes.push_back({cap, 1});
  std::stable_sort(shapes.begin(), shapes.end(), [](auto a, auto b) { return a.first * a.second > b.first * b.second; });

  uint32_t smallest_bytes = UINT32_MAX;
  // Equal blocks of at most kMaxChannels: a multiplier of 24 runs as 2 x 12, not 16 + 8.
  uint32_t channels = uint32_t(balanced(g.out_channels_per_group(), kMaxChannels));
  // Fewer channels per workgroup only when no tile fits with the full block: each block re-stages
  // the same input window.
  for (; channels >= 1; channels /= 2) {
    bool found = false;
    DepthwiseTile best;
    for (auto [wg, slots] : shapes) {
      if (slots * channels > kMaxAccumulators && slots > 1) continue;
      DepthwiseTile tile = shape_tile(g, channels, wg, slots, cap);
      smallest_bytes = std::min(smallest_bytes, tile.workgroup_memory_bytes());
      if (!fits(tile, t)) continue;
      if (tile.workgroups >= kMinWorkgroups) {
        out = tile;
        return "";
      }
      if (!found || tile.workgroups > best.workgroups) best = tile;
      found = true;
    }
    if (found) {  // the output is too small for kMinWorkgroups: take the most parallel tile
      out = best;
      return "";
    }
  }
  return cat("no depthwise tile fits target '", t.name, "' (the smallest needs ", smallest_bytes,
             " bytes of workgroup memory, above ", t.max_compute_shared_memory_size, ")");
}

bool channels_innermost(const ir::ConvGeometry& g) {
  const int last = g.spatial_rank + 1;
  return g.input_pos[1] == last && g.output_pos[1] == last;
}

uint32_t depthwise_run_w(const ir::ConvGeometry& g) {
  // Outputs per invocation at most: a 3x3 stride-1 run of 4 reads 6 input columns per kernel row
  // instead of 12, and holds 4 accumulators.
  constexpr int64_t kMaxRun = 4;
  // Shorter runs below this many invocations: about 4 per FP32 lane of an H200 (132 SMs x 128).
  constexpr int64_t kMinInvocations = 65536;
  const int64_t outputs = g.batch * g.out_channels * product(g.out_spatial);
  int64_t run = kMaxRun;
  while (run > 1 && outputs / run < kMinInvocations) run /= 2;
  return uint32_t(balanced(g.out_spatial.back(), run));
}

bool depthwise_tile_coalesced(const ir::ConvGeometry& g) {
  int last = g.spatial_rank + 1;  // physical position of the innermost dim
  return g.input_pos[size_t(last)] == last && g.output_pos[size_t(last)] == last;
}

}  // namespace vkc::codegen
