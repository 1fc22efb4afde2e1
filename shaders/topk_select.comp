#version 450
#extension GL_EXT_control_flow_attributes : require
// Topk by radix selection: every workgroup keeps the best ${K} (key, index) pairs of one segment
// of a row without sorting the segment (codegen/kernels/sort_select.cpp plans the passes).
//
// Pairs compare as the composite (key, index); indices are distinct, so composites are too. The
// select walks 8-bit digits from the key's top byte down, then through the index bytes: each
// digit pass histograms the pairs that match the prefix chosen so far, and the bin holding the
// rank-th best of them extends the prefix. When that bin holds exactly the pairs still wanted,
// "prefix <= chosen prefix" is exactly the best K: key ties are settled by the lower index, as
// the reference does, and most rows stop after the key digits. The segment sits in registers
// (${PER} elements per invocation, consecutive invocations on consecutive positions so loads
// coalesce), so it is read from memory once however many digit passes it takes. Every loop over
// the PER elements is unrolled, so each element is a named register, never a dynamically indexed
// array (which would spill to local memory).
//
// RESOLVE > 0 (candidate levels): a chosen bin that holds more pairs than are still wanted, but at
// most RESOLVE of them, is settled at once instead of by further digit passes: its pairs go to
// workgroup memory and each counts the ones that beat it. For distinct keys that is usually after
// the second key digit, which saves the last two passes and their barriers. Levels that read the
// tensor leave it out (RESOLVE 0): its registers cost them more (codegen/kernels/sort_select.cpp).
//
// FINAL: one segment per row; the K picks are bitonic-sorted in workgroup memory and the row's
// results written (STORE_RESULT: the values, read back from the source at the picked positions so
// their bits are the input's, and/or the positions). Otherwise the picks go, unordered, to K
// candidate pairs per segment (unused slots get the sentinel pair 0xFFFFFFFF, 0xFFFFFFFF) for
// the next level.
${EXTENSIONS}
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${KEYS}

#define FINAL ${FINAL}
// 1: picks take their slots with one atomic per subgroup (subgroup prefix sums within it);
// 0: one atomic per invocation. Either way every invocation's picks land in consecutive slots.
#define SUBGROUP_SLOTS ${SUBGROUP_SLOTS}
// 1: the digit passes rank the 256 bins with subgroup scans (a fixed subgroup size SGS that
// divides WG); 0: with two more barriers and loops over workgroup memory.
#define SCAN_BINS ${SCAN_BINS}
const uint SGS = ${SGS}u;
const uint WG = ${WG_SIZE}u;
const uint PER = ${PER}u;
const uint BINS_PER = (256u + WG - 1u) / WG;  // histogram bins per invocation
const uint SEG = WG * PER;
const uint SEGMENTS = ${SEGMENTS}u;   // segments per row
const uint GROUPS = ${GROUPS}u;       // rows * SEGMENTS
const uint LEN = ${IN_LEN}u;          // row length at this level
const uint K = ${K}u;                 // pairs kept per segment
const uint DIGITS = ${DIGITS}u;       // 4 key digits, then INDEX_TOP / 8 index digits
const uint INDEX_TOP = ${INDEX_TOP}u;
// Copies of the histogram, one per invocation mod COPIES: hot bins (float exponents cluster)
// would otherwise serialize the atomics of a whole subgroup on one address. The copy stride of
// 257 words puts the copies of one bin in different banks.
const uint COPIES = ${COPIES}u;
const uint STRIDE = 257u;
const uint NONE = 0xFFFFFFFFu;
// Largest chosen bin settled by ranking its pairs directly (at most WG: one invocation ranks each
// pair); its (key, index) pairs reuse s_hist, which no digit pass needs any more once the loop
// ends (2 * RESOLVE <= STRIDE words).
#define RESOLVE ${RESOLVE}

shared uint s_hist[COPIES * STRIDE];
shared uint s_group[32];  // bin counts summed by 16s (by SGS with SCAN_BINS), for a two-level search of the rank
shared uint s_state[6];   // chosen bin, rank within it, its count, picks, slots taken, bin pairs gathered
#if FINAL
const uint KP = ${KEEP_PAD}u;  // K rounded up to a power of two for the network
shared uint s_key[KP];
shared uint s_index[KP];
#endif

void main() {
  // Workgroups beyond the last segment exist only when the grid was folded into y (codegen/grid.h).
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group >= GROUPS) return;
  uint row = group / SEGMENTS;
  uint seg_base = (group % SEGMENTS) * SEG;
  uint lid = gl_LocalInvocationID.x;

  uint keys[PER];
  ${INDEX_DECL}
  uint valid = 0u;  // bit e: element e is a real pair (not past the row end, not a sentinel)
  [[unroll]] for (uint e = 0u; e < PER; ++e) {
    uint i = seg_base + e * WG + lid;
    uint key = NONE, index = NONE;
    if (i < LEN) {
${LOAD}
    }
    keys[e] = key;
    ${INDEX_KEEP}
    if (i < LEN && index != NONE) valid |= 1u << e;
  }
#if FINAL
  for (uint t = lid; t < KP; t += WG) {
    s_key[t] = NONE;
    s_index[t] = NONE;
  }
#endif

  uint key_mask = 0u, key_prefix = 0u, index_mask = 0u, index_prefix = 0u;
  uint rank = K;  // the best `rank` pairs matching the prefix are still to be picked
  uint picks = K;
  // Once the chosen bin is settled, its picks come from the invocations that ranked its pairs
  // (settled_pick: this invocation's pair settled_key, settled_index), not from their owners.
  bool settled = false, settled_pick = false;
  uint settled_key = 0u, settled_index = 0u;
#if SCAN_BINS
  // Three barriers per digit pass: each bin's owner sums and clears its copies (so the next pass
  // needs no clearing step) and its subgroup scans the counts; subgroup totals go to s_group.
  for (uint b = lid; b < COPIES * STRIDE; b += WG) s_hist[b] = 0u;
  barrier();
#endif
  for (uint d = 0u; d < DIGITS; ++d) {
#if !SCAN_BINS
    for (uint b = lid; b < COPIES * STRIDE; b += WG) s_hist[b] = 0u;
    barrier();
#endif
    uint copy = (lid % COPIES) * STRIDE;
    if (d < 4u) {
      // Key digits test keys only (index_mask is still 0), so these common passes compute no
      // positions: on the H200 the candidate level went from 64 to 52 registers (Run T).
      uint shift = 24u - 8u * d;
      [[unroll]] for (uint e = 0u; e < PER; ++e) {
        uint key = keys[e];
        if ((valid & (1u << e)) != 0u && (key & key_mask) == key_prefix)
          atomicAdd(s_hist[copy + ((key >> shift) & 255u)], 1u);
      }
    } else {
      // Index digits: only pairs whose key ties with the chosen one are left (many equal keys).
      uint shift = INDEX_TOP - 8u * (d - 3u);
      [[unroll]] for (uint e = 0u; e < PER; ++e) {
        uint key = keys[e], index = ${INDEX_OF};
        if ((valid & (1u << e)) != 0u && key == key_prefix && (index & index_mask) == index_prefix)
          atomicAdd(s_hist[copy + ((index >> shift) & 255u)], 1u);
      }
    }
    barrier();
#if SCAN_BINS
    // Bin i * WG + (subgroup, lane): every bin has one owner (WG is a multiple of the fixed
    // subgroup size), and a subgroup's bins are one run of SGS, so a subgroup scan ranks them.
    uint counts[BINS_PER], below[BINS_PER];
    [[unroll]] for (uint i = 0u; i < BINS_PER; ++i) {
      uint b = i * WG + gl_SubgroupID * SGS + gl_SubgroupInvocationID;
      uint c = 0u;
      if (b < 256u) {
        [[unroll]] for (uint j = 0u; j < COPIES; ++j) {
          c += s_hist[j * STRIDE + b];
          s_hist[j * STRIDE + b] = 0u;  // cleared for the next pass; no other invocation reads it
        }
      }
      counts[i] = c;
      below[i] = subgroupExclusiveAdd(c);
      uint run = subgroupAdd(c);
      if (subgroupElect() && b - gl_SubgroupInvocationID < 256u) s_group[(b - gl_SubgroupInvocationID) / SGS] = run;
    }
    barrier();
    uint total = 0u;
    for (uint g = 0u; g < 256u / SGS; ++g) total += s_group[g];
    [[unroll]] for (uint i = 0u; i < BINS_PER; ++i) {
      uint b = i * WG + gl_SubgroupID * SGS + gl_SubgroupInvocationID;
      if (b < 256u) {
        uint before = below[i];
        for (uint g = 0u; g < b / SGS; ++g) before += s_group[g];
        uint r = min(rank, total);  // a segment with fewer than K real pairs keeps them all
        uint c = counts[i];
        if (before < r && r <= before + c) {
          s_state[0] = b;
          s_state[1] = r - before;
          s_state[2] = c;
        }
        if (b == 0u && d == 0u) {
          s_state[3] = r;
          s_state[4] = 0u;
          s_state[5] = 0u;
          if (r == 0u) {  // no real pair at all: pick nothing
            s_state[1] = 0u;
            s_state[2] = 0u;
          }
        }
      }
    }
#else
    for (uint b = lid; b < 256u; b += WG) {
      uint c = 0u;
      for (uint j = 0u; j < COPIES; ++j) c += s_hist[j * STRIDE + b];
      s_hist[b] = c;  // only this invocation reads bin b's copies
    }
    barrier();
    for (uint g = lid; g < 16u; g += WG) {
      uint c = 0u;
      for (uint j = 0u; j < 16u; ++j) c += s_hist[g * 16u + j];
      s_group[g] = c;
    }
    barrier();
    for (uint b = lid; b < 256u; b += WG) {
      uint before = 0u, total = 0u;
      for (uint g = 0u; g < 16u; ++g) {
        uint c = s_group[g];
        total += c;
        if (g < b / 16u) before += c;
      }
      for (uint j = b & ~15u; j < b; ++j) before += s_hist[j];
      uint r = min(rank, total);  // a segment with fewer than K real pairs keeps them all
      uint c = s_hist[b];
      if (before < r && r <= before + c) {
        s_state[0] = b;
        s_state[1] = r - before;
        s_state[2] = c;
      }
      if (b == 0u && d == 0u) {
        s_state[3] = r;
        s_state[4] = 0u;
        s_state[5] = 0u;
        if (r == 0u) {  // no real pair at all: pick nothing
          s_state[1] = 0u;
          s_state[2] = 0u;
        }
      }
    }
#endif
    barrier();
    uint bin = s_state[0];
    if (d == 0u) picks = s_state[3];
    if (d < 4u) {
      key_mask |= 255u << (24u - 8u * d);
      key_prefix |= bin << (24u - 8u * d);
    } else {
      index_mask |= 255u << (INDEX_TOP - 8u * (d - 3u));
      index_prefix |= bin << (INDEX_TOP - 8u * (d - 3u));
    }
    rank = s_state[1];
    uint in_bin = s_state[2];
    if (in_bin == rank) break;  // uniform: every invocation read the same state
#if RESOLVE > 0
    if (in_bin <= RESOLVE) {
      // Settle the bin: gather its pairs; invocation t ranks pair t against the others and picks
      // it when fewer than `rank` come before it (composites are distinct: exactly `rank` do).
      [[unroll]] for (uint e = 0u; e < PER; ++e) {
        uint key = keys[e], index = ${INDEX_OF};
        if ((valid & (1u << e)) != 0u && (key & key_mask) == key_prefix && (index & index_mask) == index_prefix) {
          uint at = atomicAdd(s_state[5], 1u);
          s_hist[2u * at] = key;
          s_hist[2u * at + 1u] = index;
        }
      }
      barrier();
      if (lid < in_bin) {
        uint key = s_hist[2u * lid], index = s_hist[2u * lid + 1u];
        uint before = 0u;
        for (uint j = 0u; j < in_bin; ++j) {
          uint other_key = s_hist[2u * j], other_index = s_hist[2u * j + 1u];
          before += (other_key < key || (other_key == key && other_index < index)) ? 1u : 0u;
        }
        settled_pick = before < rank;
        settled_key = key;
        settled_index = index;
      }
      settled = true;
      break;
    }
#endif
  }

  // Every real pair whose prefix is below the chosen one is a pick, and so is every pair of the
  // chosen bin unless it was settled (then its picks are the settled_pick ones). Each invocation
  // takes as many consecutive slots as it has picks, so no slot is taken by a lane-serial atomic
  // per pick.
  uint pick_mask = 0u;
  [[unroll]] for (uint e = 0u; e < PER; ++e) {
    uint key = keys[e], index = ${INDEX_OF};
    uint masked = key & key_mask, masked_index = index & index_mask;
    bool in_chosen_bin = masked == key_prefix && masked_index == index_prefix;
    bool pick = masked < key_prefix || (masked == key_prefix && masked_index < index_prefix) ||
                (in_chosen_bin && !settled);
    if ((valid & (1u << e)) != 0u && pick) pick_mask |= 1u << e;
  }
  if (picks == 0u) pick_mask = 0u;
  uint count = bitCount(pick_mask) + (settled_pick ? 1u : 0u);
#if SUBGROUP_SLOTS
  // Control flow is uniform here (the digit loop's exit is), so every lane takes part.
  uint base = 0u;
  uint subgroup_total = subgroupAdd(count);
  if (gl_SubgroupInvocationID == 0u && subgroup_total != 0u) base = atomicAdd(s_state[4], subgroup_total);
  uint slot = subgroupMax(base) + subgroupExclusiveAdd(count);
#else
  uint slot = count == 0u ? 0u : atomicAdd(s_state[4], count);
#endif
  [[unroll]] for (uint e = 0u; e < PER; ++e) {
    if ((pick_mask & (1u << e)) != 0u) {
      uint key = keys[e], index = ${INDEX_OF};
${STORE_PICK}
      ++slot;
    }
  }
  if (settled_pick) {
    uint key = settled_key, index = settled_index;
${STORE_PICK}
  }
#if FINAL
  barrier();
  for (uint k = 2u; k <= KP; k <<= 1) {
    for (uint j = k >> 1; j > 0u; j >>= 1) {
      for (uint p = lid; p < KP / 2u; p += WG) {
        uint lo = ((p & ~(j - 1u)) << 1) | (p & (j - 1u));
        uint hi = lo | j;
        bool ascending = (lo & k) == 0u;
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
  for (uint q = lid; q < K; q += WG) {
    uint index = s_index[q];
${STORE_RESULT}
  }
#else
  for (uint s = picks + lid; s < K; s += WG) out_pairs.data[group * K + s] = uvec2(NONE, NONE);
#endif
}
