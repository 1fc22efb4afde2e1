// Tile planning for the tiled depthwise conv kernel (strategy "depthwise_tiled").
//
// A depthwise conv (one input channel per group, any channel multiplier) has no channel reduction
// to tile, so the GEMM planner has nothing to stage. What a tile can still save is re-reading: a
// k-tap window reads each input element k times, and a multiplier of F reads it F times more.
// Each invocation keeps a strip of consecutive output rows x all the block's output channels in
// registers and reads each input row of its window once for all of them. Small filters (3x3 of
// one channel, 5x5, 3x3 of four) read the input straight from global memory with the taps in
// registers ("direct"); larger ones stage the tile's input window (tile plus halo) and the taps
// in workgroup memory.
//
// Spatial dims are right-aligned into (D, H, W): a 2-D conv has D = 1, a 1-D conv D = H = 1, so W
// (the innermost dim of NC... layouts) is always component 2 and runs fastest within a tile.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ir/conv_geometry.h"
#include "module/target_limits.h"

namespace vkc::codegen {

struct DepthwiseTile {
  std::array<uint32_t, 3> out{1, 1, 1};  // output positions per tile (D, H, W); D is always 1
  // Staged input window: (out - 1) * stride + (k - 1) * dil + 1, with H counted for whole strips.
  std::array<uint32_t, 3> in{1, 1, 1};
  std::array<uint32_t, 3> tiles{1, 1, 1};  // tiles per output dim
  uint32_t invocations = 0;  // >= strips x out[2]; the rest idle after staging
  uint32_t slots = 0;      // output rows per invocation: consecutive rows of one column (a strip)
  uint32_t strips = 0;     // ceil(out[1] / slots): strips of out[2] invocations each
  uint32_t channels = 0;   // output channels per workgroup (a block of the group's multiplier)
  uint32_t lanes = 1;      // 4 when `channels` is a multiple of 4: taps and accumulators are vec4
  uint32_t channel_blocks = 0;  // ceil(multiplier / channels)
  uint32_t taps = 0;       // kernel taps (product of kernel dims)
  // Direct: the input is read from global memory (through the cache) straight into registers and
  // the taps of one D slice are held in registers, so the kernel needs no workgroup memory and no
  // barrier; chosen when those taps are few (kMaxTapRegisters in the .cpp). Otherwise the input
  // window and taps are staged in workgroup memory.
  bool direct = false;
  uint64_t workgroups = 0;  // batch x groups x channel blocks x spatial tiles
  uint64_t spatial_tiles() const { return uint64_t(tiles[0]) * tiles[1] * tiles[2]; }
  uint32_t positions() const { return out[0] * out[1] * out[2]; }
  uint32_t input_elements() const { return in[0] * in[1] * in[2]; }
  // Staged: the f32 input window plus f32 filter taps for the channel block.
  uint32_t workgroup_memory_bytes() const { return direct ? 0 : 4 * (input_elements() + taps * channels); }
};

// Plans the tiled depthwise kernel of `g` on `t` into `out`. Returns why it does not apply ("" when
// it does): not a forward depthwise conv, or no tile (down to one output row per workgroup and a
// single channel) fits the target's workgroup memory, invocations and grid.
std::string plan_depthwise_tile(const ir::ConvGeometry& g, const TargetLimits& t, DepthwiseTile& out);

// True when W is the innermost physical dim of both input and output, so a tile's rows are
// contiguous in memory and the kernel's loads and stores coalesce. Other layouts still run
// correctly through the tiled kernel, but the one-output-per-invocation kernel, which walks the
// output in physical order, serves them better.
bool depthwise_tile_coalesced(const ir::ConvGeometry& g);

// Channels-last depthwise (strategy "depthwise_channels_last", shaders/conv_depthwise_channels_last.comp):
// when channels are the innermost physical dim of both input and output (N, spatial.., C, as the
// channels-last pass stores fp16 activations), neighbouring invocations take neighbouring output
// channels, so every load and store of a subgroup is one contiguous run. Each invocation computes
// `depthwise_run_w` consecutive W outputs of its channel, reading each input column of their
// window once per kernel row.
bool channels_innermost(const ir::ConvGeometry& g);
// Outputs along W per invocation: 4, fewer where the grid would then hold too few invocations to
// fill a large GPU, balanced over W (a row of 7 runs as 4 + 3).
uint32_t depthwise_run_w(const ir::ConvGeometry& g);

}  // namespace vkc::codegen
