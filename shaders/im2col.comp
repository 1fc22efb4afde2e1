#version 450
// im2col: the column matrix [N, G, P, K] (G omitted when 1): row p is an output position, column
// k decodes into (input channel in the group, kernel tap) in the filter layout's letter order
// (ir/conv_geometry.h), padding reads as zero. Serves the im2col op and the first dispatch of the
// conv "im2col" strategy (which also gathers conv_transpose).
//
// The one-pass "gather" kernel: runs where no workgroup-memory tile of im2col_tiled.comp (the
// default, 2.4x as fast on the H200) fits, or when forced. Each invocation writes ${RUN}
// consecutive columns of one row, so the row's decode (three divisions and the tap-0 input
// position) is paid once per run rather than per element, and with K a multiple of 4 the run is
// stored as one vector. Measured on the H200 (bench/RESULTS.md, Runs H and K): 0.175 ms for
// 1x64x256x256 k3, 22% of the copy bandwidth; its loads are the limit (each warp's spread over
// ~14 channels and ~3 image rows), which the tiled kernel fixes.
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
void main() {
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= ${INVOCATIONS}u) return;
  uint chunk = gid % ${CHUNKS}u;
  uint row = gid / ${CHUNKS}u;
  uint p = row % ${P}u;
  uint grp = row / ${P}u % ${G}u;
  uint n = row / ${P}u / ${G}u;
  XRow r = x_row(n, decode_out(p));
  uint k0 = chunk * ${RUN}u;
  ${TYPE} v[${RUN}];
  [[unroll]] for (uint j = 0u; j < ${RUN}u; ++j) {
    uint c;
    uvec3 kk;
    decode_k(min(k0 + j, ${K}u - 1u), c, kk);
    v[j] = gather_row(r, grp * ${CG}u + c, kk);
  }
${STORE}
}
