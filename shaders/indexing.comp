#version 450
// Indexing (gather, gather_elements, gather_nd, scatter_nd, scatter_elements): one invocation per
// output element. Indices are read as 32-bit words (i64 as low/high pairs, so no shaderInt64 is
// needed) and resolved by vkc_resolve: a value v addresses v in [0, n) or v + n in [-n, 0); any
// other value gives -1, which the kernel turns into the documented defined result (a gather
// writes zero, a scatter skips the update) instead of an out-of-bounds access.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
int vkc_resolve(uint lo, uint hi, uint n) {
  if (hi == 0u && lo < n) return int(lo);
  if (hi == 0xFFFFFFFFu && n != 0u && lo >= 0u - n) return int(lo + n);
  return -1;
}

${FUNCTIONS}
void main() {
${INDEX}
  if (gid >= ${TOTAL}u) return;
${BODY}
}
