#version 450
// Final pass of sort / topk: one invocation per output element. `order` holds, for every row, the
// input positions of its first ${LEN} sorted elements; the output writes either the element at
// that position (sorted values, payloads) or the position itself (indices).
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}

void main() {
  uint e = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (e >= ${TOTAL}u) return;
  // Output element e = (outer o, sorted position j, inner c); its row is o * INNER + c.
  uint c = e % ${INNER}u;
  uint rest = e / ${INNER}u;
  uint j = rest % ${LEN}u;
  uint o = rest / ${LEN}u;
  uint position = order.data[(o * ${INNER}u + c) * ${LEN}u + j];
${STORE}
}
