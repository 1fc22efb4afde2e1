#version 450
// Max / average pooling: one invocation per output element looping over its window ("direct"),
// or one workgroup per output element striding over it ("workgroup"; codegen/kernels/pool.cpp).
// Window extents, strides, pads and layout strides are literals, so the loops fully specialize.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
// The input loader x_at (through a fused prologue) and, for float results, store_result (through
// a fused epilogue): codegen/fusion.h.
${FUNCTIONS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
${BODY}
}
