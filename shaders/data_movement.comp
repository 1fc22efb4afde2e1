#version 450
// Data movement (transpose, pad, reverse, slice, concat, broadcast): one invocation per output
// element. Elements are moved as raw words of their size (uint, uvec2, or the 8/16-bit storage
// type), so every dtype is copied bit-exactly without converting through float.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
${BODY}
}
