#version 450
// Tiled GEMM for convolution: each workgroup computes a TM x TN tile of one group's
// C[M, N] = A[M, K] x B[K, N] (M: batch x output positions, N: output channels in the group,
// K: input channels in the group x kernel taps). A is gathered from the input by load_a, either
// with the im2col index math folded in (implicit GEMM) or from an explicit im2col matrix; B from
// the filter by load_b. TK-deep slices of both are staged in workgroup memory and each invocation
// accumulates an RM x RN register block. Sizes come from codegen/conv_planner.
// Split-K (SPLITS > 1): SPLITS workgroups share each output tile, each summing a balanced slice of
// the K steps; store_c then writes f32 partial sums for the reduce dispatch
// (conv_split_k_reduce.comp) instead of the final result. SPLITS = 1 is the plain GEMM.
${EXTENSIONS}
layout(local_size_x = ${THREADS}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
const uint TM = ${TM}u, TN = ${TN}u, TK = ${TK}u, RM = ${RM}u, RN = ${RN}u;
const uint THREADS = ${THREADS}u;
const uint M_TILES = ${M_TILES}u, N_TILES = ${N_TILES}u, TILES = ${TILES}u;
const uint SPLITS = ${SPLITS}u, K_STEPS = ${K_STEPS}u;

// Column-major in K so the inner product loop reads both tiles with unit stride across threads.
shared float a_tile[TK * TM];
shared float b_tile[TK * TN];

void main() {
  // Folded grid (codegen/grid.h): the linear workgroup index walks K slices x groups x M tiles x
  // N tiles. The test is uniform across the workgroup, so leaving before the barriers is allowed.
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= TILES * SPLITS) return;
  uint split = tile / TILES;
  tile %= TILES;
  // Balanced slices: slice s covers steps [s * K_STEPS / SPLITS, (s + 1) * K_STEPS / SPLITS), so
  // their lengths differ by at most one step whatever K_STEPS % SPLITS is.
  uint k_begin = split * K_STEPS / SPLITS * TK;
  uint k_end = (split + 1u) * K_STEPS / SPLITS * TK;
  uint n_tile = tile % N_TILES;
  uint grp = tile / N_TILES / M_TILES;
  uint m0 = (tile / N_TILES % M_TILES) * TM;
  uint n0 = n_tile * TN;
  uint lid = gl_LocalInvocationIndex;
  // Invocation (tx, ty) owns rows ty + i * TM/RM and columns tx + j * TN/RN: strided blocks keep
  // neighbouring invocations on neighbouring workgroup-memory words.
  uint tx = lid % (TN / RN);
  uint ty = lid / (TN / RN);

  float acc[RM][RN];
  for (uint i = 0u; i < RM; ++i)
    for (uint j = 0u; j < RN; ++j) acc[i][j] = 0.0;

  for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
    for (uint e = lid; e < TM * TK; e += THREADS) {
      uint mm = e % TM, kk = e / TM;
      a_tile[kk * TM + mm] = load_a(grp, m0 + mm, k0 + kk);
    }
    for (uint e = lid; e < TK * TN; e += THREADS) {
      uint nn = e % TN, kk = e / TN;
      b_tile[kk * TN + nn] = load_b(grp, k0 + kk, n0 + nn);
    }
    barrier();
    for (uint kk = 0u; kk < TK; ++kk) {
      float a[RM];
      float b[RN];
      for (uint i = 0u; i < RM; ++i) a[i] = a_tile[kk * TM + ty + i * (TM / RM)];
      for (uint j = 0u; j < RN; ++j) b[j] = b_tile[kk * TN + tx + j * (TN / RN)];
      for (uint i = 0u; i < RM; ++i)
        for (uint j = 0u; j < RN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  for (uint i = 0u; i < RM; ++i)
    for (uint j = 0u; j < RN; ++j) store_c(split, grp, m0 + ty + i * (TM / RM), n0 + tx + j * (TN / RN), acc[i][j]);
}
