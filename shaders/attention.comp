#version 450
// Attention, one workgroup per tile of BQ query rows of one batch (codegen/kernels/attention.cpp):
// out = softmax(scale * q k^T + mask) v with an online softmax (FlashAttention), so the Sq x Sk
// scores never leave the workgroup. 128 invocations as TY x TX = 16 x 8: invocation (ty, tx) owns
// the RM query rows ty*RM.., the KC keys tx*KC.. of each key tile, and the output dims
// (c*TX + tx)*4.. (4 per chunk c). Per key tile: K (transposed) and V are staged in workgroup
// memory, each invocation computes its RM x KC block of scores, the row maxima combine through
// subgroup shuffles (SHUFFLE_MAX) or `red`, the probabilities go to P^T, and each invocation adds
// P V for its RM rows x 4*C4 dims.
// Row sums stay per invocation (rescaled with the running maximum) and combine once at the end.
//
// Why vectors: an invocation's rows, keys and dims are adjacent in workgroup memory, so one
// 8- or 16-byte load feeds RM*KC (scores) or 4*RM (P V) multiply-adds; with one scalar load per
// value the loops were bound by workgroup-memory loads (session 13: 20% of the FMA peak).
// Why padded strides (QS, KS): the staging writes go down a column of Q^T and K^T; rows of
// TY*RM or TX*KC words would put every lane of a warp in one bank.
${EXTENSIONS}
// The per-invocation blocks (s, acc) stay in registers only when every loop that indexes them is
// unrolled: a dynamic index puts an array in local memory (measured 3.7x slower).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
const uint TY = 16u, TX = 8u;
const uint RM = ${RM}u, KC = ${KC}u, C4 = ${C4}u;  // rows (1-4), keys (1, 2, 4), vec4 chunks of dims per invocation
const uint BQ = TY * RM, BK = TX * KC;
const uint HD = ${HD}u, DV = ${DV}u, DV4 = C4 * TX;  // DV4 * 4 >= DV: V's padded row, in vec4s
const uint SQ = ${SQ}u, SK = ${SK}u;
// Causal: key j is hidden from query i when j > i + SK - SQ + CAUSAL_OFFSET (the offset: where a
// piece of a larger attention's rows or keys lies in it, codegen/range_split.cpp).
const int CAUSAL_OFFSET = ${CAUSAL_OFFSET};
const uint QS = TY + 1u, KS = TX + 1u;
#define RVEC ${RVEC}
#define KVEC ${KVEC}
#define RGET(v, r) ${RGET}
#define KGET(v, c) ${KGET}
#define NEG_INF uintBitsToFloat(0xff800000u)

shared RVEC qt[HD * QS];     // Q^T: rows ty*RM.. of dim d at qt[d * QS + ty]
shared KVEC kt[HD * KS];     // K^T: keys tx*KC.. of dim d at kt[d * KS + tx]
shared vec4 vs[BK * DV4];    // V:   dims 4e.. of key j at vs[j * DV4 + e]
shared RVEC pt[BK * QS];     // P^T: rows ty*RM.. of key j at pt[j * QS + ty]
shared float red[BQ * TX];   // one value per (row, tx): row maxima, then row sums

// The next key tile's K and V, read from memory into registers while this tile is computed, then
// stored to workgroup memory: the reads' latency hides behind the multiply-adds.
const uint KTOTAL = ${KTOTAL}u, VTOTAL = BK * DV4 * 4u;
const uint NK = (KTOTAL + 127u) / 128u, NV = (VTOTAL + 127u) / 128u;
float kreg[NK], vreg[NV];
// The workgroup's batch entry's element offsets in q, k and v (q_base etc., once in main).
uint qb, kb, vb;

void fetch_tile(uint k0) {
  const uint tid = gl_LocalInvocationID.x;
  [[unroll]] for (uint n = 0u; n < NK; ++n) {
    const uint i = tid + n * 128u;
${K_ORDER}
    kreg[n] = i < KTOTAL && d < HD && k0 + j < SK ? float(k_elem(kb, k0 + j, d)) : 0.0;
  }
  [[unroll]] for (uint n = 0u; n < NV; ++n) {
    const uint i = tid + n * 128u;
    const uint j = i / (DV4 * 4u), e = i % (DV4 * 4u);
    vreg[n] = i < VTOTAL && k0 + j < SK && e < DV ? float(v_elem(vb, k0 + j, e)) : 0.0;
  }
}

void stage_tile() {
  const uint tid = gl_LocalInvocationID.x;
  [[unroll]] for (uint n = 0u; n < NK; ++n) {
    const uint i = tid + n * 128u;
${K_ORDER}
    if (i < KTOTAL && d < HD) KGET(kt[d * KS + j / KC], j % KC) = kreg[n];
  }
  [[unroll]] for (uint n = 0u; n < NV; ++n) {
    const uint i = tid + n * 128u;
    if (i < VTOTAL) vs[(i / (DV4 * 4u)) * DV4 + (i % (DV4 * 4u)) / 4u][i % 4u] = vreg[n];
  }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
#if ${SHUFFLE_MAX}
  // Roles by subgroup lane, so that a row group's TX lanes are one aligned run of 8 lanes of one
  // subgroup whatever order the device gives local invocations to subgroups (full subgroups of 8
  // or more: the planner's condition). A bijection of 0..127 like tid.
  const uint lane = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
  const uint lane = tid;
#endif
  const uint ty = lane / TX, tx = lane % TX;
  const uint b = gl_WorkGroupID.y;
  const uint q0 = gl_WorkGroupID.x * BQ;
  qb = q_base(b);
  kb = k_base(b);
  vb = v_base(b);
  for (uint i = tid; i < BQ * HD; i += 128u) {
    uint row = i / HD, d = i % HD;
    RGET(qt[d * QS + row / RM], row % RM) = q0 + row < SQ ? float(q_elem(qb, q0 + row, d)) : 0.0;
  }
  float m[RM], l[RM];
  vec4 acc[RM][C4];
  bool nan_seen[RM];
  [[unroll]] for (uint r = 0u; r < RM; ++r) {
    m[r] = NEG_INF;
    l[r] = 0.0;
    nan_seen[r] = false;
    [[unroll]] for (uint c = 0u; c < C4; ++c) acc[r][c] = vec4(0.0);
  }
  uint tiles = ${KEY_TILES};
#if ${CAUSAL_TILES}
  // Causal: key tiles wholly after this tile's last row's last visible key are all hidden.
  const int last_key = int(q0 + BQ) - 1 + int(SK) - int(SQ) + CAUSAL_OFFSET;
  tiles = last_key < 0 ? 0u : min(tiles, uint(last_key) / BK + 1u);
#endif
  fetch_tile(0u);
  for (uint t = 0u; t < tiles; ++t) {
    const uint k0 = t * BK;
    barrier();  // the previous tile's readers of kt, vs and pt are done
    stage_tile();
    barrier();
    if (t + 1u < tiles) fetch_tile(k0 + BK);
    float s[RM][KC];
    [[unroll]] for (uint r = 0u; r < RM; ++r)
      [[unroll]] for (uint c = 0u; c < KC; ++c) s[r][c] = 0.0;
    for (uint d = 0u; d < HD; ++d) {
      RVEC qv = qt[d * QS + ty];
      KVEC kv = kt[d * KS + tx];
      [[unroll]] for (uint r = 0u; r < RM; ++r)
        [[unroll]] for (uint c = 0u; c < KC; ++c) s[r][c] += RGET(qv, r) * KGET(kv, c);
    }
    float row_max[RM];
    [[unroll]] for (uint r = 0u; r < RM; ++r) {
      const uint qi = q0 + ty * RM + r;
      float tile_max = NEG_INF;
      [[unroll]] for (uint c = 0u; c < KC; ++c) {
        const uint kj = k0 + tx * KC + c;
        float x = s[r][c] * ${SCALE};
${MASK}
        if (kj >= SK${CAUSAL}) x = NEG_INF;
        nan_seen[r] = nan_seen[r] || isnan(x);
        s[r][c] = x;
        tile_max = max(tile_max, x);
      }
#if ${SHUFFLE_MAX}
      // The row's maximum over the tile's keys from the TX lanes that hold them: no trip through
      // workgroup memory and no barrier (8x12x197x64: 0.084 -> 0.079 ms, H200, session 34).
      tile_max = max(tile_max, subgroupShuffleXor(tile_max, 1u));
      tile_max = max(tile_max, subgroupShuffleXor(tile_max, 2u));
      tile_max = max(tile_max, subgroupShuffleXor(tile_max, 4u));
      row_max[r] = tile_max;
#else
      red[(ty * RM + r) * TX + tx] = tile_max;
#endif
    }
#if !${SHUFFLE_MAX}
    barrier();
#endif
    [[unroll]] for (uint r = 0u; r < RM; ++r) {
#if ${SHUFFLE_MAX}
      float tile_max = row_max[r];
#else
      float tile_max = NEG_INF;
      [[unroll]] for (uint x = 0u; x < TX; ++x) tile_max = max(tile_max, red[(ty * RM + r) * TX + x]);
#endif
      const float m_new = max(m[r], tile_max);
      // Rows whose keys so far are all hidden keep m = -inf: nothing to rescale, nothing to add.
      const float alpha = m_new == NEG_INF ? 1.0 : exp(m[r] - m_new);
      m[r] = m_new;
      l[r] *= alpha;
      [[unroll]] for (uint c = 0u; c < C4; ++c) acc[r][c] *= alpha;
      [[unroll]] for (uint c = 0u; c < KC; ++c) {
        float p = m_new == NEG_INF ? 0.0 : exp(s[r][c] - m_new);
        l[r] += p;
        s[r][c] = p;
      }
    }
    [[unroll]] for (uint c = 0u; c < KC; ++c) {
      RVEC pv;
      [[unroll]] for (uint r = 0u; r < RM; ++r) RGET(pv, r) = s[r][c];
      pt[(tx * KC + c) * QS + ty] = pv;
    }
    barrier();
    for (uint j = 0u; j < BK; ++j) {
      RVEC pv = pt[j * QS + ty];
      [[unroll]] for (uint c = 0u; c < C4; ++c) {
        vec4 vv = vs[j * DV4 + c * TX + tx];
        [[unroll]] for (uint r = 0u; r < RM; ++r) acc[r][c] += RGET(pv, r) * vv;
      }
    }
  }
  barrier();
  [[unroll]] for (uint r = 0u; r < RM; ++r) red[(ty * RM + r) * TX + tx] = nan_seen[r] ? uintBitsToFloat(0x7fc00000u) : l[r];
  barrier();
  [[unroll]] for (uint r = 0u; r < RM; ++r) {
    const uint qi = q0 + ty * RM + r;
    if (qi >= SQ) continue;
    float sum = 0.0;
    [[unroll]] for (uint x = 0u; x < TX; ++x) sum += red[(ty * RM + r) * TX + x];
    // A row whose every key is hidden sums to 0: 0/0 is NaN, as softmax gives (reference).
#if ${WITH_LSE}
    // The row's log-sum-exp beside it (-inf where every key is hidden, whose row is then 0), by
    // which pieces over blocks of keys combine (codegen/range_split.cpp).
    if (tx == 0u) store_lse(b * SQ + qi, m[r] + log(sum));
    if (sum == 0.0) sum = 1.0;
#endif
    [[unroll]] for (uint c = 0u; c < C4; ++c)
      [[unroll]] for (uint i = 0u; i < 4u; ++i) {
        const uint e = (c * TX + tx) * 4u + i;
        if (e < DV) store_result((b * SQ + qi) * DV + e, acc[r][c][i] / sum);
      }
  }
}
