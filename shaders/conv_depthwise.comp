#version 450
// Depthwise convolution (groups == input channels, with or without a channel multiplier): each
// output channel reads exactly one input channel, so an output is a plain sum over the kernel taps.
// There is no reduction over channels to tile, hence no workgroup memory; neighbouring invocations
// share input rows through the cache instead.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
void main() {
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= ${TOTAL}u) return;
${DECODE}
  // Output channel f belongs to group f / multiplier, whose only input channel is that group.
  uint grp = f / ${FG}u;
  uint fl = f % ${FG}u;
  float acc = bias_of(f);
  for (uint k0 = 0u; k0 < ${K0}u; ++k0)
    for (uint k1 = 0u; k1 < ${K1}u; ++k1)
      for (uint k2 = 0u; k2 < ${K2}u; ++k2) {
        uvec3 k = uvec3(k0, k1, k2);
        acc += gather_x(n, grp, o, k) * load_w(grp, fl, 0u, k);
      }
  store_result(gid, acc);  // gid is the output's physical (C-order) index
}
