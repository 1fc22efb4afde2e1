#version 450
// Tiled GEMM for convolution: each workgroup computes a TM x TN tile of one group's
// C[M, N] = A[M, K] x B[K, N] (M: batch x output positions, N: output channels in the group,
// K: input channels in the group x kernel taps). A is gathered from the input by a_load, either
// with the im2col index math folded in (implicit GEMM) or from an explicit im2col matrix; B from
// the filter by b_load. The main loop is gemm_core.glsl; sizes come from codegen/conv_planner.
// Split-K (SPLITS > 1): SPLITS workgroups share each output tile, each summing a balanced slice of
// the K steps; store_c then writes f32 partial sums for the reduce dispatch
// (split_k_reduce.comp) instead of the final result. SPLITS = 1 is the plain GEMM.
${EXTENSIONS}
layout(local_size_x = ${THREADS}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
// The workgroup's group and K slice, for the operand and result functions in HELPERS.
uint grp, split;
${HELPERS}
const uint M_TILES = ${M_TILES}u, N_TILES = ${N_TILES}u, TILES = ${TILES}u;
const uint SPLITS = ${SPLITS}u, K_STEPS = ${K_STEPS}u;

${GEMM_CORE}

void main() {
  // Folded grid (codegen/grid.h): the linear workgroup index walks K slices x groups x M tiles x
  // N tiles. The test is uniform across the workgroup, so leaving before the barriers is allowed.
  uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (tile >= TILES * SPLITS) return;
  split = tile / TILES;
  tile %= TILES;
  // Balanced slices: slice s covers steps [s * K_STEPS / SPLITS, (s + 1) * K_STEPS / SPLITS), so
  // their lengths differ by at most one step whatever K_STEPS % SPLITS is.
  uint k_begin = split * K_STEPS / SPLITS * TK;
  uint k_end = (split + 1u) * K_STEPS / SPLITS * TK;
  grp = tile / N_TILES / M_TILES;
  gemm_tile((tile / N_TILES % M_TILES) * TM, (tile % N_TILES) * TN, k_begin, k_end);
}
