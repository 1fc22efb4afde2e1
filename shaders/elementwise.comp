#version 450
// Fused elementwise kernel: one invocation per output element. Inputs that broadcast are indexed
// from the output coordinates; intermediate values of the fused chain stay in registers.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
layout(push_constant) uniform Params {
  uint total;  // output elements
} params;

${MATH}

void main() {
  // The grid may be folded into y when x exceeds maxComputeWorkGroupCount[0] (codegen/grid.h).
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= params.total) return;
${BODY}
}
