#version 450
// Reductions, arg reductions and softmax over arbitrary axes. Either one invocation per output
// row (short rows), or one workgroup per row with a workgroup-memory tree reduction (long rows).
// Row and element offsets are generated from the static shape (slot_base, element_offset).
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${SHARED}
${FUNCTIONS}
void main() {
${BODY}
}
