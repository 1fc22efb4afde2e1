#version 450
// Tiled depthwise convolution (groups == input channels, any channel multiplier; forward conv).
// Each workgroup computes a 1 x T1 x T2 (D, H, W) block of output positions for FB output
// channels of one group of one image. Invocations work in strips: invocation i owns column
// i % T2 and SLOTS consecutive rows starting at (i / T2) * SLOTS, with SLOTS x FB accumulators,
// so neighbouring invocations read neighbouring input words and store neighbouring W outputs.
// Two ways to read the input (codegen/conv_planner_depthwise.h, `direct`):
// - DIRECT (few taps): the taps of a D slice sit in registers and each invocation reads its
//   window straight from global memory, row by row, each value once for every (output row, tap)
//   pair it feeds (a 3x3 conv over 8 rows: 10 x 3 reads for 8 outputs). No workgroup memory and
//   no barrier, so all of an invocation's loads are in flight at once: 1x256x512x512 took 0.227
//   ms against 0.321 ms for the staged kernel on the H200 (bench/RESULTS.md, Run K).
// - staged: the block's input window (block plus halo, zeros in the padding) and the FB
//   channels' taps go to workgroup memory once; then tap by tap, each tap's channel vector is read
//   once for all SLOTS rows.
// Spatial dims are right-aligned (W is component 2); sizes come from
// codegen/conv_planner_depthwise and index math from codegen/kernels/conv_depthwise_tiled.cpp.
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
const uint WG = ${WG_SIZE}u;
const uint T1 = ${T1}u, T2 = ${T2}u;
const uint I0 = ${I0}u, I1 = ${I1}u, I2 = ${I2}u, IN_ELEMS = I0 * I1 * I2;
const uint TILES0 = ${TILES0}u, TILES1 = ${TILES1}u, TILES2 = ${TILES2}u;
const uint SPATIAL_TILES = TILES0 * TILES1 * TILES2;
const uint K0 = ${K0}u, K1 = ${K1}u, K2 = ${K2}u, TAPS = K0 * K1 * K2, PLANE_TAPS = K1 * K2;
const uint S1 = ${S1}u, S2 = ${S2}u;  // strides (D's only moves the tile origin)
const uint D0 = ${D0}u, D1 = ${D1}u, D2 = ${D2}u;  // dilations
const uint SLOTS = ${SLOTS}u, STRIPS = ${STRIPS}u;
// Input rows one strip reads: its SLOTS output rows and their kernel halo.
const uint WINDOW_ROWS = (SLOTS - 1u) * S1 + (K1 - 1u) * D1 + 1u;
const uint FB = ${FB}u, LANES = ${LANES}u, FBV = FB / LANES;  // channels, as FBV vectors of LANES
const uint CHANNEL_BLOCKS = ${CHANNEL_BLOCKS}u, GROUPS = ${GROUPS}u, WORKGROUPS = ${WORKGROUPS}u;
// Staging rounds: every invocation loads ceil(elements / WG) values, unrolled when there are few
// enough rounds (the emitter decides) so that all its global loads are in flight before the
// first workgroup-memory store.
const uint X_ROUNDS = (IN_ELEMS + WG - 1u) / WG, W_ROUNDS = (TAPS * FBV + WG - 1u) / WG;
#define DIRECT ${DIRECT}

#if !DIRECT
shared float x_tile[IN_ELEMS];
shared ${WVEC} w_tile[TAPS * FBV];  // [tap][channel vector]: one broadcast read per tap and vector
#endif

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
  uvec3 o0 = uvec3(tile / (TILES2 * TILES1), tile / TILES2 % TILES1 * T1, tile % TILES2 * T2);
  ivec3 base = input_origin(o0);
  uint lid = gl_LocalInvocationIndex;

  // Element lid + r * WG of the window is (row, column) = (q, m); both advance by constants, so
  // the loop needs no division per element. q counts rows over all D slices.
#if !DIRECT
  uint q = lid / I2, m = lid % I2;
  ${X_UNROLL} for (uint r = 0u; r < X_ROUNDS; ++r) {
    if (q < I0 * I1) x_tile[q * I2 + m] = stage_x(n, grp, base, I0 == 1u ? uvec3(0u, q, m) : uvec3(q / I1, q % I1, m));
    m += WG % I2;
    q += WG / I2;
    if (m >= I2) {
      m -= I2;
      ++q;
    }
  }
  ${W_UNROLL} for (uint r = 0u; r < W_ROUNDS; ++r) {
    uint e = lid + r * WG;
    if (e < TAPS * FBV) w_tile[e] = stage_w(grp, fb * FB + (e % FBV) * LANES, e / FBV);
  }
  barrier();
#endif

  // Invocations past the last strip (the workgroup is rounded up to whole subgroups) compute the
  // last strip again and store nothing.
  uint col = lid % T2, strip = min(lid / T2, STRIPS - 1u);
  bool stores = lid < STRIPS * T2;
  uint xcol = col * S2;
  ${WVEC} acc[SLOTS][FBV];
  [[unroll]] for (uint j = 0u; j < SLOTS; ++j)
    [[unroll]] for (uint v = 0u; v < FBV; ++v) acc[j][v] = ${WVEC}(0.0);
  for (uint k0 = 0u; k0 < K0; ++k0) {
    uint row0 = strip * SLOTS * S1;  // the strip's first window row within the D slice
#if DIRECT
    ${WVEC} w[PLANE_TAPS][FBV];
    [[unroll]] for (uint t = 0u; t < PLANE_TAPS; ++t)
      [[unroll]] for (uint v = 0u; v < FBV; ++v) w[t][v] = stage_w(grp, fb * FB + v * LANES, k0 * PLANE_TAPS + t);
    // Row by row: each input value is read once and feeds every (output row, tap) pair whose
    // window covers it; the pairing is decided at compile time after unrolling.
    [[unroll]] for (uint ir = 0u; ir < WINDOW_ROWS; ++ir) {
      float xv[K2];
      [[unroll]] for (uint k2 = 0u; k2 < K2; ++k2)
        xv[k2] = stage_x(n, grp, base, uvec3(k0 * D0, row0 + ir, xcol + k2 * D2));
      [[unroll]] for (uint j = 0u; j < SLOTS; ++j)
        [[unroll]] for (uint k1 = 0u; k1 < K1; ++k1)
          if (j * S1 + k1 * D1 == ir)
            [[unroll]] for (uint k2 = 0u; k2 < K2; ++k2)
              [[unroll]] for (uint v = 0u; v < FBV; ++v)
                acc[j][v] = fma(${WVEC}(xv[k2]), w[k1 * K2 + k2][v], acc[j][v]);
    }
#else
    // Tap by tap: each tap's channel vectors are read once and feed all SLOTS rows.
    for (uint k1 = 0u; k1 < K1; ++k1)
      for (uint k2 = 0u; k2 < K2; ++k2) {
        uint tap = k0 * PLANE_TAPS + k1 * K2 + k2;
        float xv[SLOTS];
        [[unroll]] for (uint j = 0u; j < SLOTS; ++j)
          xv[j] = x_tile[(k0 * D0 * I1 + row0 + j * S1 + k1 * D1) * I2 + xcol + k2 * D2];
        [[unroll]] for (uint v = 0u; v < FBV; ++v) {
          ${WVEC} wv = w_tile[tap * FBV + v];
          [[unroll]] for (uint j = 0u; j < SLOTS; ++j) acc[j][v] = fma(${WVEC}(xv[j]), wv, acc[j][v]);
        }
      }
#endif
  }

  // One store instruction per (slot, channel): consecutive invocations write consecutive W.
  [[unroll]] for (uint j = 0u; j < SLOTS; ++j) {
    uint h = strip * SLOTS + j;
    uvec3 o = o0 + uvec3(0u, h, col);
    if (stores && h < T1 && in_output(o)) {
      [[unroll]] for (uint c = 0u; c < FB; ++c) {
        uint fl = fb * FB + c;
        if (fl < ${FG}u) store_out(n, grp * ${FG}u + fl, o, ${ACC_LANE});
      }
    }
  }
}
