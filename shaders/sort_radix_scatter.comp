#version 450
// Radix sort, pass 3 of 3 for one digit: every tile of ${TILE} keys of a row is sorted stably by
// the digit (key bits ${SHIFT}..${SHIFT}+7) in workgroup memory, then each key goes to
//   (keys of smaller digits in the row) + (keys of this digit in earlier tiles) + (rank in tile),
// so equal digits keep their order across the whole row, which is what makes LSD radix sort work.
//
// Stable ranking inside the tile needs no subgroup features: invocation t holds the ${ITEMS}
// consecutive keys t*ITEMS.. (a "blocked" arrangement), and two 4-bit counting steps sort the
// tile by the digit's low, then high nibble. A step counts each nibble per invocation in
// workgroup memory (16 counters of 16 bits, two per uint, owned by one invocation), scans all
// counters in (nibble, invocation) order, and so ranks every key after all keys with smaller
// nibbles and after its equals in earlier invocations and earlier items. Targets with subgroup
// ballots rank with far fewer barriers instead (shaders/sort_radix_scatter_subgroup.comp).
//
// Pairs are (word, index): the word is the key image, or the key tensor's own bits whose image
// pair_key() derives; the index is the position along the axis, or a payload word carried along.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${KEYS}

// Words at [0, PADDED), indices at [PADDED, 2 * PADDED); the rank counters (8 words per
// invocation, at most PADDED since ITEMS >= 8) reuse the word array while the words are held in
// registers. Addresses are padded by one word per 32 so the blocked accesses (stride ITEMS) and
// the counter raking (stride 8) hit distinct banks.
const uint PADDED = ${TILE}u + ${TILE}u / 32u;
shared uint s_mem[2u * PADDED];
shared uint s_bins[256];              // tile digit counts, then each digit's output base
shared uvec2 s_scan[${WG_SIZE}];

uint pad(uint x) { return x + (x >> 5); }

// Slots past the row's end get digit 255, so they rank after every real key; they also come after
// them in tile order, so they remain the tile's last slots after each ranking step.
uint digit_at(uint word, uint p, uint tile_len) {
  return p < tile_len ? (pair_key(word) >> ${SHIFT}u) & 255u : 255u;
}

// Exclusive scan of one uvec2 per invocation (two independent sums); `total` gets the full sums.
uvec2 workgroup_exclusive_scan(uvec2 value, out uvec2 total) {
  uint t = gl_LocalInvocationID.x;
  s_scan[t] = value;
  barrier();
  for (uint offset = 1u; offset < ${WG_SIZE}u; offset <<= 1) {
    uvec2 add = t >= offset ? s_scan[t - offset] : uvec2(0u);
    barrier();
    s_scan[t] += add;
    barrier();
  }
  uvec2 inclusive = s_scan[t];
  total = s_scan[${WG_SIZE}u - 1u];
  barrier();  // s_scan is reused by the next scan
  return inclusive - value;
}

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= ${GROUPS}u) return;
  uint row = group / ${TILES}u, tile = group % ${TILES}u;
  uint t = gl_LocalInvocationID.x;
  uint tile_start = tile * ${TILE}u;
  uint tile_len = min(${TILE}u, ${N}u - tile_start);

  // Striped, coalesced load into workgroup memory.
  for (uint d = t; d < 256u; d += ${WG_SIZE}u) s_bins[d] = 0u;
  barrier();
  for (uint p = t; p < ${TILE}u; p += ${WG_SIZE}u) {
    uint word = 0u, index = 0u;
    if (p < tile_len) {
      uint i = tile_start + p;
${LOAD_PAIR}
      atomicAdd(s_bins[digit_at(word, p, tile_len)], 1u);
    }
    s_mem[pad(p)] = word;
    s_mem[PADDED + pad(p)] = index;
  }
  barrier();

  // Each digit's output base minus its first slot in the sorted tile: the row's offset of the
  // digit (scan of the row's digit totals), plus the digit's keys in earlier tiles.
  {
    const uint per = (256u + ${WG_SIZE}u - 1u) / ${WG_SIZE}u;
    uvec2 mine[per];
    uvec2 sum = uvec2(0u);
    for (uint j = 0u; j < per; ++j) {
      uint d = t * per + j;
      mine[j] = d < 256u ? uvec2(s_bins[d], hist.data[${TOTALS}u + row * 256u + d]) : uvec2(0u);
      sum += mine[j];
    }
    uvec2 total;
    uvec2 start = workgroup_exclusive_scan(sum, total);
    for (uint j = 0u; j < per; ++j) {
      uint d = t * per + j;
      if (d < 256u)
        s_bins[d] = start.y + hist.data[(row * 256u + d) * ${TILES}u + tile] - start.x;
      start += mine[j];
    }
  }

  // Words and digits stay in registers while the counters reuse their array; indices stay in
  // workgroup memory until the reorder (fewer live registers during the scans).
  uint words[${ITEMS}], digits[${ITEMS}], indices[${ITEMS}], ranks[${ITEMS}];
  for (uint i = 0u; i < ${ITEMS}u; ++i) {
    words[i] = s_mem[pad(t * ${ITEMS}u + i)];
    digits[i] = digit_at(words[i], t * ${ITEMS}u + i, tile_len);
  }
  for (uint nibble = 0u; nibble < 2u; ++nibble) {
    uint shift = 4u * nibble;
    barrier();  // every invocation has its words: the counters may overwrite them
    for (uint lane = 0u; lane < 8u; ++lane) s_mem[pad(lane * ${WG_SIZE}u + t)] = 0u;
    // Nibble b counts in the half (b >> 3) of counter word (b & 7) of this invocation.
    for (uint i = 0u; i < ${ITEMS}u; ++i) {
      uint b = (digits[i] >> shift) & 15u;
      uint a = pad((b & 7u) * ${WG_SIZE}u + t);
      uint half_shift = (b >> 3) * 16u;
      uint counter = s_mem[a];
      ranks[i] = (counter >> half_shift) & 0xFFFFu;
      s_mem[a] = counter + (1u << half_shift);
    }
    barrier();
    // Scan the 8 * WG_SIZE counter words in address order; invocation t rakes words 8t..8t+7.
    // Each half sums at most TILE <= 65535, so no carry crosses into the high half.
    uint counters[8];
    uint sum = 0u;
    for (uint j = 0u; j < 8u; ++j) {
      counters[j] = s_mem[pad(8u * t + j)];
      sum += counters[j];
    }
    uvec2 total;
    uint prefix = workgroup_exclusive_scan(uvec2(sum, 0u), total).x;
    for (uint j = 0u; j < 8u; ++j) {
      s_mem[pad(8u * t + j)] = prefix;
      prefix += counters[j];
    }
    barrier();
    // Nibbles 8..15 (high halves) come after all keys with nibbles 0..7 (the low halves' sum).
    uint low_total = total.x & 0xFFFFu;
    for (uint i = 0u; i < ${ITEMS}u; ++i) {
      uint b = (digits[i] >> shift) & 15u;
      uint half_shift = (b >> 3) * 16u;
      uint counter = s_mem[pad((b & 7u) * ${WG_SIZE}u + t)];
      ranks[i] += ((counter >> half_shift) & 0xFFFFu) + (b >> 3) * low_total;
      indices[i] = s_mem[PADDED + pad(t * ${ITEMS}u + i)];
    }
    barrier();
    for (uint i = 0u; i < ${ITEMS}u; ++i) {
      s_mem[pad(ranks[i])] = words[i];
      s_mem[PADDED + pad(ranks[i])] = indices[i];
    }
    barrier();
    if (nibble == 0u)
      for (uint i = 0u; i < ${ITEMS}u; ++i) {
        words[i] = s_mem[pad(t * ${ITEMS}u + i)];
        digits[i] = digit_at(words[i], t * ${ITEMS}u + i, tile_len);
      }
  }

  // Striped writes: neighbouring invocations hold neighbouring keys, which mostly share a digit
  // and so land next to each other.
  for (uint p = t; p < tile_len; p += ${WG_SIZE}u) {
    uint word = s_mem[pad(p)], index = s_mem[PADDED + pad(p)];
    uint slot = s_bins[digit_at(word, p, tile_len)] + p;
${STORE}
  }
}
