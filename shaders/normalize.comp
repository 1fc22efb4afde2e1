#version 450
// Normalizations (layer_norm, group_norm) and cumsum (codegen/kernels/normalization.cpp): one
// invocation or one workgroup per row, with the row's offsets generated from the static shape.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${SHARED}
${FUNCTIONS}
void main() {
${BODY}
}
