#version 450
// Attention on tensor cores (codegen/kernels/attention_coopmat.cpp): out = softmax(scale * q k^T +
// mask) v for float16 q, k and v, with float32 sums and an online softmax (FlashAttention), one
// workgroup per tile of BQ query rows of one batch. Written in the VK_NV_cooperative_matrix form;
// codegen rewrites it to VK_KHR_cooperative_matrix where the target has that.
//
// WARPS subgroups of SG invocations; subgroup w owns the FRAG_M query rows w*FRAG_M.. of the tile,
// whose q fragments it keeps in registers for the whole loop. Per tile of BK keys:
// - all invocations stage K and V (float16, rows padded by 8 halves) in workgroup memory, read
//   from memory into registers during the previous tile;
// - each subgroup multiplies its q fragments by K^T into FRAG_M x BK float32 scores and stores
//   them to its own scratch;
// - LPR = SG / FRAG_M lanes per row take BK / LPR scores each: scale, mask, the row's maximum
//   (combined through `red`), the probabilities, written back as float16 into the same scratch;
// - the subgroup multiplies those probabilities by V into its FRAG_M x DVP output accumulators.
// Only the subgroup reads its scratch, so subgroup barriers order it; the workgroup barriers are
// for the staged K and V.
//
// Lazy rescaling: a cooperative matrix cannot scale its rows one by one, so the output
// accumulators are rescaled (stored to the scratch, scaled by a lane per row, loaded back) only
// when some row's maximum grows by more than RESCALE_ABOVE over the reference it was summed
// against. Until then the probabilities are exp(x - reference) <= e^8 (float16 holds them, with
// the same relative precision), and the output and row sums share that reference. After the first
// key tiles a row's maximum rarely grows that much, so the round trip is rare.
${EXTENSIONS}
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${THREADS}, local_size_y = 1, local_size_z = 1) in;

${B_SCOPE_DECLARATION}
${BUFFERS}
${FUNCTIONS}
const uint SG = ${SG}u, WARPS = ${WARPS}u, THREADS = SG * WARPS;
const uint FRAG_M = ${FRAG_M}u, FRAG_N = ${FRAG_N}u, FRAG_K = ${FRAG_K}u;
const uint BQ = WARPS * FRAG_M, BK = ${BK}u;
const uint HD = ${HD}u, DV = ${DV}u;
const uint HDP = ${HDP}u, DVP = ${DVP}u;  // HD and DV padded to whole fragments (zeros beyond)
const uint SQ = ${SQ}u, SK = ${SK}u;
// Causal: key j is hidden from query i when j > i + SK - SQ + CAUSAL_OFFSET (codegen/range_split.cpp).
const int CAUSAL_OFFSET = ${CAUSAL_OFFSET};
const uint KS = HDP + 8u, VS = DVP + 8u;  // halves per staged row of Q / K and of V
const uint SS = BK + 4u;                  // floats per scratch row (its probabilities: 2 * SS halves)
const uint LPR = SG / FRAG_M, KR = BK / LPR, CR = FRAG_N / LPR;  // lanes per row; a lane's keys, output columns
const uint QK_ROWS = BQ > BK ? BQ : BK;   // Q is staged in K's array before the loop
const float RESCALE_ABOVE = 8.0;
#define NEG_INF uintBitsToFloat(0xff800000u)

shared uvec4 k_tile[QK_ROWS * KS / 8u];  // K: key j, dims d.. at halves j * KS + d (Q's rows first)
shared uvec4 v_tile[BK * VS / 8u];       // V: key j, dims e.. at halves j * VS + e
shared uvec4 scratch[WARPS * FRAG_M * SS / 4u];  // per subgroup: scores, probabilities, output fragments
shared float red[WARPS * FRAG_M * LPR];  // per row and lane: maxima, then sums

// The workgroup's batch entry's element offsets in q, k and v (q_base etc., once in main).
uint qb, kb, vb;

// 8 consecutive dims (from d0) of row `row` of q (as_q) or key `row` of k, as packed halves;
// zeros beyond the head dim and the rows.
uvec4 load8_qk(uint row, uint d0, bool as_q) {
  float x[8];
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint d = d0 + i;
    if (as_q)
      x[i] = row < SQ && d < HD ? float(q_elem(qb, row, d)) : 0.0;
    else
      x[i] = row < SK && d < HD ? float(k_elem(kb, row, d)) : 0.0;
  }
  return uvec4(packHalf2x16(vec2(x[0], x[1])), packHalf2x16(vec2(x[2], x[3])), packHalf2x16(vec2(x[4], x[5])),
               packHalf2x16(vec2(x[6], x[7])));
}

uvec4 load8_v(uint key, uint e0) {
  float x[8];
  [[unroll]] for (uint i = 0u; i < 8u; ++i) {
    const uint e = e0 + i;
    x[i] = key < SK && e < DV ? float(v_elem(vb, key, e)) : 0.0;
  }
  return uvec4(packHalf2x16(vec2(x[0], x[1])), packHalf2x16(vec2(x[2], x[3])), packHalf2x16(vec2(x[4], x[5])),
               packHalf2x16(vec2(x[6], x[7])));
}

// The next key tile's K and V, read into registers while this tile is computed.
const uint K_CHUNKS = BK * HDP / 8u, V_CHUNKS = BK * DVP / 8u;
const uint NK = (K_CHUNKS + THREADS - 1u) / THREADS, NV = (V_CHUNKS + THREADS - 1u) / THREADS;
uvec4 k_next[NK], v_next[NV];

void fetch_tile(uint k0, uint tid) {
  [[unroll]] for (uint n = 0u; n < NK; ++n) {
    const uint c = tid + n * THREADS;
    if (c < K_CHUNKS) k_next[n] = load8_qk(k0 + c / (HDP / 8u), (c % (HDP / 8u)) * 8u, false);
  }
  [[unroll]] for (uint n = 0u; n < NV; ++n) {
    const uint c = tid + n * THREADS;
    if (c < V_CHUNKS) v_next[n] = load8_v(k0 + c / (DVP / 8u), (c % (DVP / 8u)) * 8u);
  }
}

void stage_tile(uint tid) {
  [[unroll]] for (uint n = 0u; n < NK; ++n) {
    const uint c = tid + n * THREADS;
    if (c < K_CHUNKS) k_tile[(c / (HDP / 8u)) * (KS / 8u) + c % (HDP / 8u)] = k_next[n];
  }
  [[unroll]] for (uint n = 0u; n < NV; ++n) {
    const uint c = tid + n * THREADS;
    if (c < V_CHUNKS) v_tile[(c / (DVP / 8u)) * (VS / 8u) + c % (DVP / 8u)] = v_next[n];
  }
}

void subgroup_sync() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

fcoopmatNV<16, 3, FRAG_M, FRAG_K> q_frag[HDP / FRAG_K];
fcoopmatNV<32, 3, FRAG_M, FRAG_N> s_acc[BK / FRAG_N];
fcoopmatNV<32, 3, FRAG_M, FRAG_N> o_acc[DVP / FRAG_N];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint warp = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint b = gl_WorkGroupID.y;
  const uint q0 = gl_WorkGroupID.x * BQ;
  qb = q_base(b);
  kb = k_base(b);
  vb = v_base(b);
  // This lane's row (r) and its part of the row's keys and output columns.
  const uint r = lane / LPR, part = lane % LPR;
  const uint qi = q0 + warp * FRAG_M + r;
  const uint mine = warp * FRAG_M * SS;  // the subgroup's scratch, in floats
  const uint row_at = mine + r * SS;      // this lane's row in it

  for (uint c = tid; c < BQ * HDP / 8u; c += THREADS)
    k_tile[(c / (HDP / 8u)) * (KS / 8u) + c % (HDP / 8u)] = load8_qk(q0 + c / (HDP / 8u), (c % (HDP / 8u)) * 8u, true);
  barrier();
  [[unroll]] for (uint i = 0u; i < HDP / FRAG_K; ++i)
    coopMatLoadNV(q_frag[i], k_tile, (warp * FRAG_M * KS + i * FRAG_K) / 8u, KS / 8u, false);
  [[unroll]] for (uint c = 0u; c < DVP / FRAG_N; ++c) o_acc[c] = fcoopmatNV<32, 3, FRAG_M, FRAG_N>(0.0);

  float m_ref = NEG_INF, l = 0.0;  // the row's reference maximum; this lane's part of its sum
  bool nan_seen = false;
  uint tiles = ${KEY_TILES};
#if ${CAUSAL_TILES}
  // Causal: key tiles wholly after this tile's last row's last visible key are all hidden.
  const int last_key = int(q0 + BQ) - 1 + int(SK) - int(SQ) + CAUSAL_OFFSET;
  tiles = last_key < 0 ? 0u : min(tiles, uint(last_key) / BK + 1u);
#endif
  fetch_tile(0u, tid);
  for (uint t = 0u; t < tiles; ++t) {
    const uint k0 = t * BK;
    barrier();  // Q's fragments are loaded (first tile); the previous tile's K and V are read
    stage_tile(tid);
    barrier();
    if (t + 1u < tiles) fetch_tile(k0 + BK, tid);

    [[unroll]] for (uint n = 0u; n < BK / FRAG_N; ++n) s_acc[n] = fcoopmatNV<32, 3, FRAG_M, FRAG_N>(0.0);
    [[unroll]] for (uint i = 0u; i < HDP / FRAG_K; ++i)
      [[unroll]] for (uint n = 0u; n < BK / FRAG_N; ++n) {
        fcoopmatNV<16, ${B_SCOPE}, FRAG_K, FRAG_N> kf;  // K^T: K's rows read as columns
        coopMatLoadNV(kf, k_tile, (n * FRAG_N * KS + i * FRAG_K) / 8u, KS / 8u, true);
        s_acc[n] = coopMatMulAddNV(q_frag[i], kf, s_acc[n]);
      }
    [[unroll]] for (uint n = 0u; n < BK / FRAG_N; ++n)
      coopMatStoreNV(s_acc[n], scratch, (mine + n * FRAG_N) / 4u, SS / 4u, false);
    subgroup_sync();

    float p[KR];
    [[unroll]] for (uint c = 0u; c < KR / 4u; ++c) {
      const vec4 w = uintBitsToFloat(scratch[(row_at + part * KR) / 4u + c]);
      p[c * 4u] = w.x, p[c * 4u + 1u] = w.y, p[c * 4u + 2u] = w.z, p[c * 4u + 3u] = w.w;
    }
    float tile_max = NEG_INF;
    [[unroll]] for (uint j = 0u; j < KR; ++j) {
      const uint kj = k0 + part * KR + j;
      float x = p[j] * ${SCALE};
${MASK}
      if (kj >= SK${CAUSAL}) x = NEG_INF;
      nan_seen = nan_seen || isnan(x);
      p[j] = x;
      tile_max = max(tile_max, x);
    }
    red[(warp * FRAG_M + r) * LPR + part] = tile_max;
    subgroup_sync();  // also: every lane has read its scores, so the scratch is free
    [[unroll]] for (uint x = 0u; x < LPR; ++x) tile_max = max(tile_max, red[(warp * FRAG_M + r) * LPR + x]);
    const bool rescale = m_ref != NEG_INF && tile_max > m_ref + RESCALE_ABOVE;
    float alpha = 1.0;
    if (rescale) {
      alpha = exp(m_ref - tile_max);
      m_ref = tile_max;
      l *= alpha;
    } else if (m_ref == NEG_INF) {
      m_ref = tile_max;  // nothing summed yet: the output is still zero
    }
    [[unroll]] for (uint j = 0u; j < KR; ++j) {
      p[j] = m_ref == NEG_INF ? 0.0 : exp(p[j] - m_ref);
      l += p[j];
    }
    if (subgroupAny(rescale)) {
      [[unroll]] for (uint c = 0u; c < DVP / FRAG_N; ++c) {
        coopMatStoreNV(o_acc[c], scratch, mine / 4u, SS / 4u, false);
        subgroup_sync();
        [[unroll]] for (uint i = 0u; i < CR / 4u; ++i) {
          const uint at = (row_at + part * CR) / 4u + i;
          scratch[at] = floatBitsToUint(uintBitsToFloat(scratch[at]) * alpha);
        }
        subgroup_sync();
        coopMatLoadNV(o_acc[c], scratch, mine / 4u, SS / 4u, false);
        subgroup_sync();
      }
    }
    // The probabilities as float16, row r at halves 2 * (mine + r * SS): the scores' bytes.
    [[unroll]] for (uint c = 0u; c < KR / 8u; ++c)
      scratch[(2u * row_at + part * KR) / 8u + c] =
          uvec4(packHalf2x16(vec2(p[c * 8u], p[c * 8u + 1u])), packHalf2x16(vec2(p[c * 8u + 2u], p[c * 8u + 3u])),
                packHalf2x16(vec2(p[c * 8u + 4u], p[c * 8u + 5u])), packHalf2x16(vec2(p[c * 8u + 6u], p[c * 8u + 7u])));
    subgroup_sync();
    [[unroll]] for (uint kb = 0u; kb < BK / FRAG_K; ++kb) {
      fcoopmatNV<16, 3, FRAG_M, FRAG_K> pf;
      coopMatLoadNV(pf, scratch, (2u * mine + kb * FRAG_K) / 8u, 2u * SS / 8u, false);
      [[unroll]] for (uint c = 0u; c < DVP / FRAG_N; ++c) {
        fcoopmatNV<16, ${B_SCOPE}, FRAG_K, FRAG_N> vf;
        coopMatLoadNV(vf, v_tile, (kb * FRAG_K * VS + c * FRAG_N) / 8u, VS / 8u, false);
        o_acc[c] = coopMatMulAddNV(pf, vf, o_acc[c]);
      }
    }
  }

  subgroup_sync();  // every lane is past its last read of red
  red[(warp * FRAG_M + r) * LPR + part] = nan_seen ? uintBitsToFloat(0x7fc00000u) : l;
  subgroup_sync();
  float sum = 0.0;
  [[unroll]] for (uint x = 0u; x < LPR; ++x) sum += red[(warp * FRAG_M + r) * LPR + x];
  // A row whose every key is hidden sums to 0: 0/0 is NaN, as softmax gives (reference).
#if ${WITH_LSE}
  // The row's log-sum-exp beside it (-inf where every key is hidden, whose row is then 0), by
  // which pieces over blocks of keys combine (codegen/range_split.cpp).
  if (part == 0u && qi < SQ) store_lse(b * SQ + qi, m_ref + log(sum));
  if (sum == 0.0) sum = 1.0;
#endif
  [[unroll]] for (uint c = 0u; c < DVP / FRAG_N; ++c) {
    coopMatStoreNV(o_acc[c], scratch, mine / 4u, SS / 4u, false);
    subgroup_sync();
    [[unroll]] for (uint i = 0u; i < CR; ++i) {
      const uint e = c * FRAG_N + part * CR + i;
      if (qi < SQ && e < DV) store_result((b * SQ + qi) * DV + e, uintBitsToFloat(scratch[(row_at + part * CR + i) / 4u][i % 4u]) / sum);
    }
    subgroup_sync();
  }
}
