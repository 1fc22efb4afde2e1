#version 450
// Resize (nearest, linear, cubic): one invocation per output element. Per dim the body computes
// the source coordinate (f32, `precise` so no fused multiply-add changes its rounding), the taps
// and their weights; nearest copies one element as raw words, linear / cubic sum every
// combination of taps. Extents, strides and transform constants are literals.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${TABLES}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
${BODY}
}
