#version 450
// Tiled depthwise convolution (groups == input channels, any channel multiplier; forward conv).
// Each workgroup computes a T0 x T1 x T2 (D, H, W) block of output positions for FB output
// channels of one group of one image. It stages the block's input window (block plus halo, zeros
// in the padding) and the FB channels' filter taps in workgroup memory once, then every
// invocation accumulates SLOTS positions x FB channels in registers: each staged input value is
// read once per tap for all FB channels, instead of once per output from global memory.
// Positions are strided by the workgroup size (slot j of invocation i is position i + j * WG) so
// that neighbouring invocations read neighbouring workgroup-memory words and store neighbouring W
// outputs. Spatial dims are right-aligned (W is component 2); sizes come from
// codegen/conv_planner_depthwise and index math from codegen/kernels/conv_depthwise_tiled.cpp.
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
const uint WG = ${WG_SIZE}u;
const uint T0 = ${T0}u, T1 = ${T1}u, T2 = ${T2}u, TP = T0 * T1 * T2;
const uint I0 = ${I0}u, I1 = ${I1}u, I2 = ${I2}u, IN_ELEMS = I0 * I1 * I2;
const uint TILES0 = ${TILES0}u, TILES1 = ${TILES1}u, TILES2 = ${TILES2}u;
const uint SPATIAL_TILES = TILES0 * TILES1 * TILES2;
const uint K0 = ${K0}u, K1 = ${K1}u, K2 = ${K2}u, TAPS = K0 * K1 * K2;
const uint S0 = ${S0}u, S1 = ${S1}u, S2 = ${S2}u;  // strides
const uint D0 = ${D0}u, D1 = ${D1}u, D2 = ${D2}u;  // dilations
const uint SLOTS = ${SLOTS}u;
const uint FB = ${FB}u, LANES = ${LANES}u, FBV = FB / LANES;  // channels, as FBV vectors of LANES
const uint CHANNEL_BLOCKS = ${CHANNEL_BLOCKS}u, GROUPS = ${GROUPS}u, WORKGROUPS = ${WORKGROUPS}u;
// Staging rounds: every invocation loads ceil(elements / WG) values, unrolled when there are few
// enough rounds (the emitter decides) so that all its global loads are in flight before the
// first workgroup-memory store.
const uint X_ROUNDS = (IN_ELEMS + WG - 1u) / WG, W_ROUNDS = (TAPS * FBV + WG - 1u) / WG;

shared float x_tile[IN_ELEMS];
shared ${WVEC} w_tile[TAPS * FBV];  // [tap][channel vector]: one broadcast read per tap and vector

void main() {
  // Folded grid (codegen/grid.h); leaving is uniform per workgroup, so the barrier stays legal.
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= WORKGROUPS) return;
  // Spatial tiles vary fastest so that consecutive workgroups share halo rows in the cache.
  uint tile = wg % SPATIAL_TILES;
  uint rest = wg / SPATIAL_TILES;
  uint fb = rest % CHANNEL_BLOCKS;
  rest /= CHANNEL_BLOCKS;
  uint grp = rest % GROUPS;
  uint n = rest / GROUPS;
  uvec3 o0 = uvec3(tile / (TILES2 * TILES1) * T0, tile / TILES2 % TILES1 * T1, tile % TILES2 * T2);
  ivec3 base = input_origin(o0);
  uint lid = gl_LocalInvocationIndex;

  ${X_UNROLL} for (uint r = 0u; r < X_ROUNDS; ++r) {
    uint e = lid + r * WG;
    if (e < IN_ELEMS) x_tile[e] = stage_x(n, grp, base, uvec3(e / (I2 * I1), e / I2 % I1, e % I2));
  }
  ${W_UNROLL} for (uint r = 0u; r < W_ROUNDS; ++r) {
    uint e = lid + r * WG;
    if (e < TAPS * FBV) w_tile[e] = stage_w(grp, fb * FB + (e % FBV) * LANES, e / FBV);
  }
  barrier();

  // Where each slot's window starts in x_tile. Slots past the tile read position TP - 1 (always
  // staged) and are not stored.
  uint xb[SLOTS];
  ${WVEC} acc[SLOTS][FBV];
  [[unroll]] for (uint j = 0u; j < SLOTS; ++j) {
    uint e = min(lid + j * WG, TP - 1u);
    xb[j] = (e / (T2 * T1) * S0 * I1 + e / T2 % T1 * S1) * I2 + e % T2 * S2;
    [[unroll]] for (uint v = 0u; v < FBV; ++v) acc[j][v] = ${WVEC}(0.0);
  }
  for (uint k0 = 0u; k0 < K0; ++k0)
    for (uint k1 = 0u; k1 < K1; ++k1)
      for (uint k2 = 0u; k2 < K2; ++k2) {
        uint off = (k0 * D0 * I1 + k1 * D1) * I2 + k2 * D2;
        uint tap = (k0 * K1 + k1) * K2 + k2;
        float xv[SLOTS];
        [[unroll]] for (uint j = 0u; j < SLOTS; ++j) xv[j] = x_tile[xb[j] + off];
        [[unroll]] for (uint v = 0u; v < FBV; ++v) {
          ${WVEC} w = w_tile[tap * FBV + v];
          [[unroll]] for (uint j = 0u; j < SLOTS; ++j) acc[j][v] = fma(${WVEC}(xv[j]), w, acc[j][v]);
        }
      }

  // One store instruction per (slot, channel): consecutive invocations write consecutive W.
  [[unroll]] for (uint j = 0u; j < SLOTS; ++j) {
    uint e = lid + j * WG;
    uvec3 o = o0 + uvec3(e / (T2 * T1), e / T2 % T1, e % T2);
    if (e < TP && in_output(o)) {
      [[unroll]] for (uint c = 0u; c < FB; ++c) {
        uint fl = fb * FB + c;
        if (fl < ${FG}u) store_out(n, grp * ${FG}u + fl, o, ${ACC_LANE});
      }
    }
  }
}
