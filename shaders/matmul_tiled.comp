#version 450
// Tiled batched matrix product: a workgroup owns a TM x TN output tile of one batch entry; the main
// loop (workgroup-memory tiles, register blocks, register double buffering) is gemm_core.glsl.
// a_at / b_at read the operands through their fused prologues (dequantize, elementwise math): each
// staged element is computed once per workgroup and staged as f32, so the tiles' size is the same
// with or without a prologue.
${EXTENSIONS}
layout(local_size_x = ${INVOCATIONS}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
// The workgroup's batch entry and the operands' offsets for it.
uint batch, abase, bbase;
// The operand functions the GEMM loop stages through (gemm_core.glsl's a_load and b_load or
// 16-byte b_load4, or the tensor-core loop's 16-byte a_load8 / b_load8), written by
// codegen/kernels/contraction.cpp.
// Out-of-range rows / columns / depth read as zero, so partial edge tiles need no special case.
${OPERANDS}
// The workgroup's K slice (SPLITS > 1: split K, the slices' partial sums go to `partial` and the
// reduce dispatch, split_k_reduce.comp, adds them and runs the epilogue).
uint split;
void store_c(uint m, uint n, float v) {
  uint i = (batch * ${M}u + m) * ${N}u + n;
  if (m < ${M}u && n < ${N}u) ${STORE};
}
// Columns n..n+3 of row m at once (gemm_core.glsl's STORE_QUADS 2; N % 4 == 0), where used.
${STORE_C4}

${GEMM_CORE}

void main() {
  // Linear workgroup index (the grid may be folded into y): tile column fastest, then row, batch.
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= ${GROUPS}u * ${SPLITS}u) return;  // whole workgroups leave together: barriers stay uniform
  split = wg / ${GROUPS}u;
  wg %= ${GROUPS}u;
  batch = wg / ${TILES_MN}u;
  abase = a_batch(batch);
  bbase = b_batch(batch);
  // Balanced slices: slice s covers K steps [s * K_STEPS / SPLITS, (s + 1) * K_STEPS / SPLITS).
  uint k_begin = split * ${K_STEPS}u / ${SPLITS}u * TK;
  uint k_end = min((split + 1u) * ${K_STEPS}u / ${SPLITS}u * TK, ${K}u);
  gemm_tile(((wg / ${TILES_N}u) % ${TILES_M}u) * TM, (wg % ${TILES_N}u) * TN, k_begin, k_end);
}
