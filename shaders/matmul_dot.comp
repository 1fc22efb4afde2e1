#version 450
// Batched matrix product for thin problems (matrix-vector, a classifier's final Gemm at batch 1):
// one workgroup computes NT outputs, its invocations split K into KS interleaved slices and the
// partial sums meet in workgroup memory. The naive kernel's one invocation per output left a
// 1000-output, K = 512 Gemm with 1000 invocations running 512 dependent loads each (48 us on the
// H200; bench/RESULTS.md). Lanes that neighbour in a subgroup walk the operand's contiguous dim
// (K_FAST: k, else n), so their loads coalesce. a_at / b_at read through the fused prologues.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
const uint NT = ${NT}u, KS = ${KS}u, K_FAST = ${K_FAST}u;
shared float partial[NT * KS];

void main() {
${WG_INDEX}
  if (wg >= ${GROUPS}u) return;  // whole workgroups leave together: the barrier stays uniform
  uint lid = gl_LocalInvocationIndex;
  uint slot = K_FAST == 1u ? lid / KS : lid % NT;  // which of the NT outputs
  uint ks = K_FAST == 1u ? lid % KS : lid / NT;    // which K slice
  uint gid = wg * NT + slot;
  uint n = gid % ${N}u;
  uint m = (gid / ${N}u) % ${M}u;
  float acc = 0.0;
  if (gid < ${TOTAL}u) {
    uint batch = gid / ${MN}u;
    uint abase = a_batch(batch) + m * ${A_RS}u, bbase = b_batch(batch) + n * ${B_CS}u;
    for (uint k = ks; k < ${K}u; k += KS)
      acc = fma(float(a_at(abase + k * ${A_CS}u)), float(b_at(bbase + k * ${B_RS}u)), acc);
  }
  partial[slot * KS + ks] = acc;
  barrier();
  if (ks == 0u && gid < ${TOTAL}u) {
    float sum = 0.0;
    for (uint s = 0u; s < KS; ++s) sum += partial[slot * KS + s];
    store_result(gid, epilogue(sum, m, n));
  }
}
