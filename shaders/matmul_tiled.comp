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
// Out-of-range rows / columns / depth read as zero, so partial edge tiles need no special case.
void a_begin(uint m) {}
float a_load(uint m, uint k) {
  return (m < ${M}u && k < ${K}u) ? float(a_at(abase + m * ${A_RS}u + k * ${A_CS}u)) : 0.0;
}
void b_begin(uint n) {}
float b_load(uint n, uint k) {
  return (k < ${K}u && n < ${N}u) ? float(b_at(bbase + k * ${B_RS}u + n * ${B_CS}u)) : 0.0;
}
void store_c(uint m, uint n, float v) {
  if (m < ${M}u && n < ${N}u) store_result((batch * ${M}u + m) * ${N}u + n, epilogue(v, m, n));
}

${GEMM_CORE}

void main() {
  // Linear workgroup index (the grid may be folded into y): tile column fastest, then row, batch.
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= ${GROUPS}u) return;  // whole workgroups leave together: barriers stay uniform
  batch = wg / ${TILES_MN}u;
  abase = a_batch(batch);
  bbase = b_batch(batch);
  gemm_tile(((wg / ${TILES_N}u) % ${TILES_M}u) * TM, (wg % ${TILES_N}u) * TN, 0u, ${K}u);
}
