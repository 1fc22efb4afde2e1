#version 450
// im2col: one invocation per element of the column matrix [N, G, P, K] (G omitted when 1): row p
// is an output position, column k decodes into (input channel in the group, kernel tap) in the
// filter layout's letter order (ir/conv_geometry.h), padding reads as zero. Serves the im2col op
// and the first dispatch of the conv "im2col" strategy (which also gathers conv_transpose).
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
void main() {
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= ${TOTAL}u) return;
  uint k = gid % ${K}u;
  uint row = gid / ${K}u;
  uint p = row % ${P}u;
  uint grp = row / ${P}u % ${G}u;
  uint n = row / ${P}u / ${G}u;
  uint c;
  uvec3 kk;
  decode_k(k, c, kk);
  cols.data[gid] = gather_x(n, grp * ${CG}u + c, decode_out(p), kk);
}
