#version 450
// Batched matrix product without workgroup memory: one invocation per output element runs the
// whole K loop. The fallback for targets or shapes the tiled kernel does not suit (matrix-vector,
// tiny matrices). a_at / b_at read the operands through their fused prologues.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
  uint n = gid % ${N}u;
  uint m = (gid / ${N}u) % ${M}u;
  uint batch = gid / ${MN}u;
  uint abase = a_batch(batch), bbase = b_batch(batch);
  float acc = 0.0;
  for (uint k = 0u; k < ${K}u; ++k)
    acc += float(a_at(abase + m * ${A_RS}u + k * ${A_CS}u)) * float(b_at(bbase + k * ${B_RS}u + n * ${B_CS}u));
  store_result(gid, epilogue(acc, m, n));
}
