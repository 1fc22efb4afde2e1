#version 450
// Direct convolution (conv and conv_transpose): one invocation per output element, reading input
// and filter straight from global memory. It uses no workgroup memory, so it fits every target
// and is the planner's fallback of last resort. Index math comes from codegen/kernels/conv_common.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
void main() {
  // The grid may be folded into y when x exceeds maxComputeWorkGroupCount[0] (codegen/grid.h).
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= ${TOTAL}u) return;
${DECODE}
  uint grp = f / ${FG}u;
  uint fl = f % ${FG}u;
  float acc = bias_of(f);
  for (uint c = 0u; c < ${CG}u; ++c) {
    uint cin = grp * ${CG}u + c;
    for (uint k0 = 0u; k0 < ${K0}u; ++k0)
      for (uint k1 = 0u; k1 < ${K1}u; ++k1)
        for (uint k2 = 0u; k2 < ${K2}u; ++k2) {
          uvec3 k = uvec3(k0, k1, k2);
          acc += gather_x(n, cin, o, k) * load_w(grp, fl, c, k);
        }
  }
  store_result(gid, acc);  // gid is the output's physical (C-order) index
}
