#version 450
// Radix sort, pass 2 of 3 for one digit: an exclusive scan of every (row, digit) segment of
// ${TILES} tile counts in place, so each count becomes the tile's first slot among the row's keys
// of that digit; the segment's sum goes to the row's digit totals after the counts (the scatter
// pass scans those over digits itself: 256 values, cheaper there than another dispatch).
//
// ${LANES} invocations share a segment (${WG_SIZE} / LANES segments per workgroup); each lane sums
// ${ITEMS} consecutive counts serially, the lanes scan their sums in workgroup memory, and ${ROUNDS}
// rounds cover a segment longer than LANES * ITEMS.
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

// Tile counts at [0, TOTALS), the row digit totals after them.
layout(std430, set = 0, binding = 0) restrict buffer Hist { uint data[]; } hist;

shared uint s_scan[${WG_SIZE}];

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= ${GROUPS}u) return;
  uint t = gl_LocalInvocationID.x;
  uint lane = t % ${LANES}u;
  uint segment = group * (${WG_SIZE}u / ${LANES}u) + t / ${LANES}u;
  // Invocations past the last segment still take part in every barrier.
  bool valid = segment < ${SEGMENTS}u;
  uint base = segment * ${TILES}u;
  uint carry = 0u;
  for (uint r = 0u; r < ${ROUNDS}u; ++r) {
    uint first = r * (${LANES}u * ${ITEMS}u) + lane * ${ITEMS}u;
    uint v[${ITEMS}];
    uint sum = 0u;
    for (uint k = 0u; k < ${ITEMS}u; ++k) {
      uint b = first + k;
      v[k] = valid && b < ${TILES}u ? hist.data[base + b] : 0u;
      sum += v[k];
    }
    s_scan[t] = sum;
    barrier();
    for (uint offset = 1u; offset < ${LANES}u; offset <<= 1) {
      uint add = lane >= offset ? s_scan[t - offset] : 0u;
      barrier();
      s_scan[t] += add;
      barrier();
    }
    uint prefix = carry + s_scan[t] - sum;
    carry += s_scan[t - lane + ${LANES}u - 1u];
    barrier();  // s_scan is rewritten by the next round
    for (uint k = 0u; k < ${ITEMS}u; ++k) {
      uint b = first + k;
      if (valid && b < ${TILES}u) hist.data[base + b] = prefix;
      prefix += v[k];
    }
  }
  if (valid && lane == 0u) hist.data[${TOTALS}u + segment] = carry;
}
