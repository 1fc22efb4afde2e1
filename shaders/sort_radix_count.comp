#version 450
// Radix sort, pass 1 of 3 for one digit: the digit histogram of every tile of ${TILE} keys.
// Tiles never span rows (${TILES} per row); counts are stored [row][digit][tile] so the scan pass
// reads each (row, digit) run of tiles contiguously.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${KEYS}

shared uint s_bins[256];

void main() {
  // Workgroups beyond the last tile exist only when the grid was folded into y (codegen/grid.h).
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= ${GROUPS}u) return;
  uint row = group / ${TILES}u, tile = group % ${TILES}u;
  uint t = gl_LocalInvocationID.x;
  uint tile_start = tile * ${TILE}u;
  uint tile_len = min(${TILE}u, ${N}u - tile_start);

  for (uint d = t; d < 256u; d += ${WG_SIZE}u) s_bins[d] = 0u;
  barrier();
  // Striped: neighbouring invocations read neighbouring keys. Only counts are needed, and their
  // order does not matter, so atomics are enough here.
  for (uint p = t; p < tile_len; p += ${WG_SIZE}u) {
    uint i = tile_start + p;
    uint word;
${LOAD_WORD}
    atomicAdd(s_bins[(pair_key(word) >> ${SHIFT}u) & 255u], 1u);
  }
  barrier();
  for (uint d = t; d < 256u; d += ${WG_SIZE}u)
    hist.data[(row * 256u + d) * ${TILES}u + tile] = s_bins[d];
}
