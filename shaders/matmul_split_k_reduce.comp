#version 450
// Second dispatch of a split-K matmul (codegen/kernels/contraction.cpp): one invocation per output
// element sums the SPLITS f32 partial sums the GEMM dispatch (matmul_tiled.comp with SPLITS > 1)
// wrote for it, then applies the epilogue (gemm's alpha, beta * C) and the fused store. This is the
// only place the epilogue runs, so each output is stored exactly once.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
  // Slice s holds every output at its row-major offset: consecutive invocations read consecutive
  // words of each slice.
  float acc = 0.0;
  for (uint s = 0u; s < ${SPLITS}u; ++s) acc += partial.data[s * ${TOTAL}u + gid];
  store_result(gid, epilogue(acc, gid / ${N}u % ${M}u, gid % ${N}u));
}
