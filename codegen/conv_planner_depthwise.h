// Tile planning for the tiled depthwise conv kernel (strategy "depthwise_tiled").
//
// A depthwise conv (one input channel per group, any channel multiplier) has no channel reduction
// to tile, so the GEMM planner has nothing to stage. What a tile can still save is re-reading: a
// k-tap window reads each input element k times, and a multiplier of F reads it F times more.
// The tiled kernel stages one output tile's input window (tile plus halo) and the group's filter
// taps in workgroup memory, and each invocation keeps several output positions x all the block's
// output channels in registers, so every staged value is reused from registers and workgroup
// memory instead of global memory.
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
  std::array<uint32_t, 3> out{1, 1, 1};  // output positions per tile (D, H, W)
  std::array<uint32_t, 3> in{1, 1, 1};   // staged input window: (out - 1) * stride + (k - 1) * dil + 1
  std::array<uint32_t, 3> tiles{1, 1, 1};  // tiles per output dim
  uint32_t invocations = 0;
  uint32_t slots = 0;      // output positions per invocation (strided by `invocations`)
  uint32_t channels = 0;   // output channels per workgroup (a block of the group's multiplier)
  uint32_t lanes = 1;      // 4 when `channels` is a multiple of 4: taps and accumulators are vec4
  uint32_t channel_blocks = 0;  // ceil(multiplier / channels)
  uint32_t taps = 0;       // kernel taps (product of kernel dims)
  uint64_t workgroups = 0;  // batch x groups x channel blocks x spatial tiles
  uint64_t spatial_tiles() const { return uint64_t(tiles[0]) * tiles[1] * tiles[2]; }
  uint32_t positions() const { return out[0] * out[1] * out[2]; }
  uint32_t input_elements() const { return in[0] * in[1] * in[2]; }
  // f32 input window plus f32 filter taps for the channel block.
  uint32_t workgroup_memory_bytes() const { return 4 * (input_elements() + taps * channels); }
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

}  // namespace vkc::codegen
