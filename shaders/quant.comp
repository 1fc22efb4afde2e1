#version 450
// Quantize / dequantize, elementwise. When the target lacks 8-bit storage, 8-bit tensors are read
// and written as packed 32-bit words; a quantize invocation then produces 4 consecutive elements
// (one whole word), so no two invocations write the same word.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
${BODY}
}
