#version 450
// Radix sort, pass 3 of 3 for one digit, on targets with subgroup ballots: the same result as
// shaders/sort_radix_scatter.comp (each key of a tile of ${TILE} goes to (keys of smaller digits
// in the row) + (keys of its digit in earlier tiles) + (its stable rank in the tile)), with the
// ranking done by subgroup multisplit instead of two workgroup-wide counting sorts: a handful of
// workgroup barriers per tile instead of ~66.
//
// Subgroup s owns ${ITEMS} x (subgroup size) consecutive keys of the tile and walks them in tile
// order, one key per invocation per step; eight ballots on the digit's bits find the invocations
// holding the same digit, and the subgroup's own counter of that digit (in workgroup memory,
// [subgroup][digit]) gives the keys of that digit it has seen before. After a scan of the counters
// over the subgroups (per digit) and over the digits, every key knows its slot in the tile.
// Register arrays are indexed by unrolled loops only (constant indices keep them in registers).
// Keys are owned by (gl_SubgroupID, gl_SubgroupInvocationID), so the workgroup must consist of
// full subgroups: the planner makes it a multiple of the target's largest subgroup size.
//
// Pairs are (word, index) as in the fallback shader.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${KEYS}

// Words at [0, PADDED), indices at [PADDED, 2 * PADDED), addresses padded by one word per 32 (the
// striped reads of the reorder then hit distinct banks). The digit counters of up to
// ${MAX_SUBGROUPS} subgroups use the same space before the reorder writes it.
const uint PADDED = ${TILE}u + ${TILE}u / 32u;
shared uint s_mem[${MEM_WORDS}];
shared uint s_bins[256];              // each digit's output base minus its first slot in the tile
shared uvec2 s_scan[${MAX_SUBGROUPS}];

uint pad(uint x) { return x + (x >> 5); }
uint digit_of(uint word) { return (pair_key(word) >> ${SHIFT}u) & 255u; }

// Exclusive scan of one uvec2 per invocation (two independent sums); `total` gets the full sums.
uvec2 workgroup_exclusive_scan(uvec2 value, out uvec2 total) {
  uvec2 inclusive = subgroupInclusiveAdd(value);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) s_scan[gl_SubgroupID] = inclusive;
  barrier();
  uvec2 before = uvec2(0u);
  total = uvec2(0u);
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    uvec2 x = s_scan[s];
    if (s < gl_SubgroupID) before += x;
    total += x;
  }
  return before + inclusive - value;
}

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= ${GROUPS}u) return;
  uint row = group / ${TILES}u, tile = group % ${TILES}u;
  uint t = gl_LocalInvocationID.x;
  uint tile_start = tile * ${TILE}u;
  uint tile_len = min(${TILE}u, ${N}u - tile_start);
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID, width = gl_SubgroupSize;
  uint counters = sg * 256u;
  uint first = sg * ${ITEMS}u * width;

  for (uint d = lane; d < 256u; d += width) s_mem[counters + d] = 0u;
  subgroupMemoryBarrierShared();
  subgroupBarrier();

  // This invocation's digits' row totals and tile bases, loaded now so that their latency hides
  // behind the ranking instead of adding to the tile's time after it.
  const uint per = (256u + ${WG_SIZE}u - 1u) / ${WG_SIZE}u;
  uint digit_total[per], digit_base[per];
  [[unroll]] for (uint j = 0u; j < per; ++j) {
    uint d = t * per + j;
    digit_total[j] = d < 256u ? hist.data[${TOTALS}u + row * 256u + d] : 0u;
    digit_base[j] = d < 256u ? hist.data[(row * 256u + d) * ${TILES}u + tile] : 0u;
  }

  // Rank every key among its subgroup's keys of the same digit; slots past the row's end take no
  // part (they are the tile's last, so no real key ranks after them).
  // All of the invocation's pairs are loaded before any is ranked: the ranking steps are chained
  // by subgroup barriers, and a load inside a step put one global-memory latency on every step
  // (H200, 2^24 keys: 0.50 -> 0.42 ms per scatter pass).
  uint words[${ITEMS}], indices[${ITEMS}], ranks[${ITEMS}];
  [[unroll]] for (uint k = 0u; k < ${ITEMS}u; ++k) {
    uint p = first + k * width + lane;
    uint word = 0u, index = 0u;
    if (p < tile_len) {
      uint i = tile_start + p;
${LOAD_PAIR}
    }
    words[k] = word;
    indices[k] = index;
  }
  [[unroll]] for (uint k = 0u; k < ${ITEMS}u; ++k) {
    bool valid = first + k * width + lane < tile_len;
    uint d = digit_of(words[k]);
    uvec4 peers = subgroupBallot(valid);
    [[unroll]] for (uint b = 0u; b < 8u; ++b) {
      bool set = ((d >> b) & 1u) != 0u;
      uvec4 bits = subgroupBallot(set);
      peers &= set ? bits : ~bits;
    }
    uint below = subgroupBallotExclusiveBitCount(peers);
    uint count = subgroupBallotBitCount(peers);
    uint seen = valid ? s_mem[counters + d] : 0u;
    // Every peer has read the counter before the last of them advances it.
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    if (valid && below + 1u == count) s_mem[counters + d] = seen + count;
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    ranks[k] = seen + below;
  }
  barrier();

  // Per digit: the counters become exclusive prefixes over the subgroups (tile order), then the
  // digit's first slot in the tile is added; s_bins gets the digit's output base minus that slot.
  {
    uvec2 mine[per];
    uvec2 sum = uvec2(0u);
    [[unroll]] for (uint j = 0u; j < per; ++j) {
      uint d = t * per + j;
      uint running = 0u;
      if (d < 256u)
        for (uint s = 0u; s < gl_NumSubgroups; ++s) {
          uint c = s_mem[s * 256u + d];
          s_mem[s * 256u + d] = running;
          running += c;
        }
      mine[j] = uvec2(running, digit_total[j]);
      sum += mine[j];
    }
    uvec2 total;
    uvec2 start = workgroup_exclusive_scan(sum, total);
    [[unroll]] for (uint j = 0u; j < per; ++j) {
      uint d = t * per + j;
      if (d < 256u) {
        s_bins[d] = start.y + digit_base[j] - start.x;
        for (uint s = 0u; s < gl_NumSubgroups; ++s) s_mem[s * 256u + d] += start.x;
      }
      start += mine[j];
    }
  }
  barrier();
  [[unroll]] for (uint k = 0u; k < ${ITEMS}u; ++k) ranks[k] += s_mem[counters + digit_of(words[k])];
  barrier();  // the counters are dead: the reorder overwrites their space
  [[unroll]] for (uint k = 0u; k < ${ITEMS}u; ++k) {
    if (first + k * width + lane < tile_len) {
      s_mem[pad(ranks[k])] = words[k];
      s_mem[PADDED + pad(ranks[k])] = indices[k];
    }
  }
  barrier();

  // Striped writes: neighbouring invocations hold neighbouring keys, which mostly share a digit
  // and so land next to each other.
  for (uint p = t; p < tile_len; p += ${WG_SIZE}u) {
    uint word = s_mem[pad(p)], index = s_mem[PADDED + pad(p)];
    uint slot = s_bins[digit_of(word)] + p;
${STORE}
  }
}
