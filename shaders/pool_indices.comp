#version 450
// Max pooling with the index of each maximum: one invocation per output element walks its window
// in row-major kernel order and keeps the first maximum (or the first NaN). Window extents,
// strides, pads and layout strides are literals, so the loops fully specialize. Indices are
// stored as two 32-bit words (little-endian i64), which needs no shaderInt64.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
${BODY}
}
