#version 450
// One compare-exchange step (stage k, stride j) of a bitonic sort through global memory, for
// strides too large for one workgroup's chunk. One invocation per pair; rows of ${ROW_MASK}+1
// padded slots lie back to back, and each row's last stage sorts it ascending.
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) restrict buffer Keys { uint data[]; } keys;
layout(std430, set = 0, binding = 1) restrict buffer Indices { uint data[]; } indices;

layout(push_constant) uniform Params {
  uint k;  // stage: size of the bitonic sequences being merged
  uint j;  // stride of this step
} params;

${KEYS}

void main() {
  uint p = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (p >= ${PAIRS}u) return;
  uint j = params.j;
  uint lo = ((p & ~(j - 1u)) << 1) | (p & (j - 1u));
  uint hi = lo | j;
  bool ascending = ((lo & ${ROW_MASK}u) & params.k) == 0u;
  uint key_lo = keys.data[lo], key_hi = keys.data[hi];
  uint index_lo = indices.data[lo], index_hi = indices.data[hi];
  if (vkc_sort_after(key_lo, index_lo, key_hi, index_hi) == ascending) {
    keys.data[lo] = key_hi;
    keys.data[hi] = key_lo;
    indices.data[lo] = index_hi;
    indices.data[hi] = index_lo;
  }
}
