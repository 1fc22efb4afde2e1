#version 450
// conv_integer / matmul_integer on the SIMT cores: each invocation sums a TM x TN tile of the
// result in exact 32-bit integers, rows (matmul rows, conv output pixels) along x, columns (matmul
// columns, output channels of one group) along y, the matmul batch or conv group along z.
// (a - a_zero_point) * (b - b_zero_point) per term; out-of-range rows, columns and conv padding
// contribute 0. codegen/kernels/integer_product.cpp writes LOADS, the loop over K.
${EXTENSIONS}
layout(local_size_x = ${WG_X}, local_size_y = ${WG_Y}, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
void main() {
  const uint row0 = gl_GlobalInvocationID.x * ${TM}u;
  const uint col0 = gl_GlobalInvocationID.y * ${TN}u;
  const uint z = gl_WorkGroupID.z;
  int acc[${TM}][${TN}];
  for (uint i = 0u; i < ${TM}u; ++i)
    for (uint j = 0u; j < ${TN}u; ++j) acc[i][j] = 0;
${SETUP}
${LOOP}
${STORE}
}
