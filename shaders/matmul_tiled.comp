#version 450
// Tiled batched matrix product. A workgroup owns a TM x TN output tile; per K step it stages a
// TK-deep slice of A (TK x TM) and of B (TK x TN) in workgroup memory, k-major so the inner loop
// reads consecutive words. Invocation (tx, ty) accumulates a RM x RN block whose rows and columns
// are TY and TX apart, so neighbouring invocations store neighbouring output elements.
// a_at / b_at read the operands through their fused prologues (dequantize, elementwise math): each
// staged element is computed once per workgroup and staged as f32, so the tiles' size is the same
// with or without a prologue.
${EXTENSIONS}
layout(local_size_x = ${INVOCATIONS}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
shared float tile_a[${TK} * ${TM}];
shared float tile_b[${TK} * ${TN}];

${FUNCTIONS}
// Out-of-range rows / columns / depth read as zero, so partial edge tiles need no special case.
float load_a(uint base, uint m, uint k) {
  return (m < ${M}u && k < ${K}u) ? float(a_at(base + m * ${A_RS}u + k * ${A_CS}u)) : 0.0;
}
float load_b(uint base, uint k, uint n) {
  return (k < ${K}u && n < ${N}u) ? float(b_at(base + k * ${B_RS}u + n * ${B_CS}u)) : 0.0;
}

void main() {
  // Linear workgroup index (the grid may be folded into y): tile column fastest, then row, batch.
  uint wg = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (wg >= ${GROUPS}u) return;  // whole workgroups leave together: barriers stay uniform
  uint m0 = ((wg / ${TILES_N}u) % ${TILES_M}u) * ${TM}u;
  uint n0 = (wg % ${TILES_N}u) * ${TN}u;
  uint batch = wg / ${TILES_MN}u;
  uint abase = a_batch(batch), bbase = b_batch(batch);
  uint tid = gl_LocalInvocationID.x;
  uint tx = tid % ${TX}u, ty = tid / ${TX}u;

  float acc[${RM}][${RN}];
  for (uint i = 0u; i < ${RM}u; ++i)
    for (uint j = 0u; j < ${RN}u; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < ${K}u; k0 += ${TK}u) {
    for (uint e = tid; e < ${TK}u * ${TM}u; e += ${INVOCATIONS}u) {
${A_COORDS}
      tile_a[kk * ${TM}u + mm] = load_a(abase, m0 + mm, k0 + kk);
    }
    for (uint e = tid; e < ${TK}u * ${TN}u; e += ${INVOCATIONS}u) {
${B_COORDS}
      tile_b[kk * ${TN}u + nn] = load_b(bbase, k0 + kk, n0 + nn);
    }
    barrier();
    for (uint kk = 0u; kk < ${TK}u; ++kk) {
      float av[${RM}], bv[${RN}];
      for (uint i = 0u; i < ${RM}u; ++i) av[i] = tile_a[kk * ${TM}u + ty + i * ${TY}u];
      for (uint j = 0u; j < ${RN}u; ++j) bv[j] = tile_b[kk * ${TN}u + tx + j * ${TX}u];
      for (uint i = 0u; i < ${RM}u; ++i)
        for (uint j = 0u; j < ${RN}u; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  for (uint i = 0u; i < ${RM}u; ++i) {
    uint m = m0 + ty + i * ${TY}u;
    if (m >= ${M}u) continue;
    for (uint j = 0u; j < ${RN}u; ++j) {
      uint n = n0 + tx + j * ${TX}u;
      if (n < ${N}u) store_result((batch * ${M}u + m) * ${N}u + n, epilogue(acc[i][j], m, n));
    }
  }
}
