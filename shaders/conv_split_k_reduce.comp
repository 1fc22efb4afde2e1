#version 450
// Second dispatch of the split-K conv (codegen/conv_planner.h: "split_k"): one invocation per
// output element, in the output's physical order, sums the SPLITS f32 partial sums the GEMM
// dispatch (conv_gemm.comp) wrote for it, adds the bias and stores through the fused epilogue.
// This is the only place the epilogue runs, so each output is stored exactly once.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
void main() {
  // The grid may be folded into y when x exceeds maxComputeWorkGroupCount[0] (codegen/grid.h).
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= ${TOTAL}u) return;
  // Slice s of the partial tensor holds every output at its physical offset: consecutive
  // invocations read consecutive words of each slice.
  float acc = 0.0;
  for (uint s = 0u; s < ${SPLITS}u; ++s) acc += partial.data[s * ${TOTAL}u + gid];
${DECODE}
  store_result(gid, acc + bias_of(f));  // gid is the output's physical (C-order) index
}
