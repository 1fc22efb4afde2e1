#version 450
// Second dispatch of a split-K GEMM (the conv's "split_k" strategy, codegen/conv_planner.h, and a
// split matmul, codegen/kernels/contraction.cpp): one invocation per output element, in the
// output's physical order, sums the SPLITS f32 partial sums the GEMM dispatch (conv_gemm.comp or
// matmul_tiled.comp) wrote for it; FINISH then stores `acc` (with the conv's bias, or gemm's alpha
// and beta * C) through the fused epilogue. This is the only place the epilogue runs, so each
// output is stored exactly once.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
void main() {
  // The grid may be folded into y when x exceeds maxComputeWorkGroupCount[0] (codegen/grid.h).
${INDEX}
  if (gid >= ${TOTAL}u) return;
  // Slice s of the partial tensor holds every output at its physical offset: consecutive
  // invocations read consecutive words of each slice.
  float acc = 0.0;
  for (uint s = 0u; s < ${SPLITS}u; ++s) acc += partial.data[s * ${TOTAL}u + gid];
${FINISH}
}
