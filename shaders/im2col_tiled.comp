#version 450
// im2col through a workgroup-memory tile: the column matrix [N, G, P, K] (G omitted when 1), row
// p an output position, column k decoded into (input channel in the group, kernel tap) in the
// filter layout's letter order (ir/conv_geometry.h), padding read as zero.
//
// Why a tile: in the column matrix K is contiguous, but in the input the neighbours of one
// column are neighbouring output positions (one image row). The one-pass kernel (im2col.comp)
// writes rows, so each warp's loads touched ~32 image rows of ~14 channels: 22% of the copy
// bandwidth on the H200 (bench/RESULTS.md, Run H). Here each workgroup owns TP positions x TK
// columns: it gathers them position-fastest (a warp reads 32 neighbouring input elements of one
// channel and tap), keeps them in workgroup memory, then writes them column-fastest (a warp
// stores 32 neighbouring elements of one row). The tile's row stride is odd, so both phases are
// free of bank conflicts. Sizes come from codegen/kernels/im2col.cpp (plan_im2col_tile).
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
const uint WG = ${WG_SIZE}u, TP = ${TP}u, TK = ${TK}u, STRIDE = ${STRIDE}u;
const uint P = ${P}u, K = ${K}u, G = ${G}u, CG = ${CG}u;
const uint K_TILES = ${K_TILES}u, P_TILES = ${P_TILES}u, WORKGROUPS = ${WORKGROUPS}u;
const uint COLS_PER_ROUND = WG / TP, GATHER_ROUNDS = (TK + COLS_PER_ROUND - 1u) / COLS_PER_ROUND;
const uint STORE_ROUNDS = (TP * TK + WG - 1u) / WG;

shared ${VALUE} tile[TP * STRIDE];

void main() {
  // Folded grid (codegen/grid.h); leaving is uniform per workgroup, so the barrier stays legal.
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= WORKGROUPS) return;
  uint k0 = wg % K_TILES * TK;
  uint p0 = wg / K_TILES % P_TILES * TP;
  uint image_group = wg / K_TILES / P_TILES;  // n * G + grp: the matrix's row block
  uint grp = image_group % G, n = image_group / G;
  uint lid = gl_LocalInvocationIndex;

  // Gather: invocation lid owns one position (decoded once) and every COLS_PER_ROUND-th column.
  // Positions and columns past the matrix are clamped to real ones (never stored), so every load
  // is unconditional and all of them are in flight before the first workgroup-memory store: with
  // each load guarded and stored in turn, the kernel took 0.091 ms instead of 0.078 ms on the
  // H200 (bench/RESULTS.md, Run M).
  uint pl = lid % TP;
  XRow r = x_row(n, decode_out(min(p0 + pl, P - 1u)));
  ${VALUE} v[GATHER_ROUNDS];
  [[unroll]] for (uint j = 0u; j < GATHER_ROUNDS; ++j) {
    uint c;
    uvec3 kk;
    decode_k(min(k0 + lid / TP + j * COLS_PER_ROUND, K - 1u), c, kk);
    v[j] = gather_row(r, grp * CG + c, kk);
  }
  [[unroll]] for (uint j = 0u; j < GATHER_ROUNDS; ++j) {
    uint kl = lid / TP + j * COLS_PER_ROUND;
    if (kl < TK) tile[pl * STRIDE + kl] = v[j];
  }
  barrier();

  // Store: consecutive invocations write consecutive columns of a row.
  [[unroll]] for (uint j = 0u; j < STORE_ROUNDS; ++j) {
    uint e = lid + j * WG;
    uint kl = e % TK, p = p0 + e / TK;
    if (e < TP * TK && p < P && k0 + kl < K)
      cols.data[(image_group * P + p) * K + k0 + kl] = ${STORE_TYPE}(tile[e / TK * STRIDE + kl]);
  }
}
