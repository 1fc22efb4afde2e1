#version 450
// One bitonic network pass in workgroup memory over chunks of ${CHUNK} (key, index) pairs.
//
// The chunk is a window of a "virtual" array in which every row is padded to ${IN_PAD} slots;
// padding slots hold the sentinel (0xFFFFFFFF, 0xFFFFFFFF), which sorts after every real pair.
// Stages k = ${K_LO}..${K_HI} run with strides j <= CHUNK/2 (larger strides were done by global
// passes). A pair sorts ascending when bit k of its position masked by ${ROW_MASK} is clear, so
// the last stage of a segment of ROW_MASK+1 slots always sorts it ascending.
// Results go to row-compacted outputs: slot q < ${OUT_LEN} of every ${OUT_PERIOD} slots.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${KEYS}

shared uint s_key[${CHUNK}];
shared uint s_index[${CHUNK}];

void main() {
  // Workgroups beyond the last chunk exist only when the grid was folded into y (codegen/grid.h).
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= ${GROUPS}u) return;
  uint chunk_base = group * ${CHUNK}u;
  uint lid = gl_LocalInvocationID.x;

  for (uint t = lid; t < ${CHUNK}u; t += ${WG_SIZE}u) {
    uint g = chunk_base + t;
    uint row = g / ${IN_PAD}u, i = g % ${IN_PAD}u;
    uint key = 0xFFFFFFFFu, index = 0xFFFFFFFFu;
    if (row < ${ROWS}u && i < ${IN_LEN}u) {
${LOAD}
    }
    s_key[t] = key;
    s_index[t] = index;
  }
  barrier();

  for (uint k = ${K_LO}u; k <= ${K_HI}u; k <<= 1) {
    for (uint j = min(k >> 1, ${CHUNK}u >> 1); j > 0u; j >>= 1) {
      for (uint p = lid; p < ${CHUNK}u / 2u; p += ${WG_SIZE}u) {
        uint lo = ((p & ~(j - 1u)) << 1) | (p & (j - 1u));
        uint hi = lo | j;
        bool ascending = (((chunk_base + lo) & ${ROW_MASK}u) & k) == 0u;
        uint key_lo = s_key[lo], key_hi = s_key[hi];
        uint index_lo = s_index[lo], index_hi = s_index[hi];
        if (vkc_sort_after(key_lo, index_lo, key_hi, index_hi) == ascending) {
          s_key[lo] = key_hi;
          s_key[hi] = key_lo;
          s_index[lo] = index_hi;
          s_index[hi] = index_lo;
        }
      }
      barrier();
    }
  }

  for (uint t = lid; t < ${CHUNK}u; t += ${WG_SIZE}u) {
    uint g = chunk_base + t;
    uint row = g / ${OUT_PERIOD}u, q = g % ${OUT_PERIOD}u;
    if (row < ${OUT_ROWS}u && q < ${OUT_LEN}u) {
      uint o = row * ${OUT_LEN}u + q;
${STORE}
    }
  }
}
