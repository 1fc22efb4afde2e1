#version 450
// Attention, one workgroup per tile of BQ query rows of one batch (codegen/kernels/attention.cpp):
// out = softmax(scale * q k^T + mask) v with an online softmax (FlashAttention), so the Sq x Sk
// scores never leave the workgroup. 128 invocations as TY x TX = 16 x 8: invocation (ty, tx) owns
// query rows ty*RM .. ty*RM+RM-1, the keys c*TX+tx of each key tile, and the output dims c*TX+tx.
// Per key tile: K (transposed) and V are staged in workgroup memory, each invocation computes its
// RM x KC block of scores from Q^T and K^T, the row maxima combine through `red`, the
// probabilities go to P^T, and each invocation adds P V for its RM x DC outputs. Row sums stay
// per invocation (rescaled with the running maximum) and combine once at the end.
${EXTENSIONS}
// The per-invocation blocks (s, acc, qv, kv, pv, vv) stay in registers only when every loop that
// indexes them is unrolled: a dynamic index puts an array in local memory (measured 3.7x slower).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
const uint BQ = ${BQ}u, BK = ${BK}u, HD = ${HD}u, DV = ${DV}u;
const uint TX = 8u, RM = ${RM}u, KC = ${KC}u, DC = ${DC}u;
const uint SQ = ${SQ}u, SK = ${SK}u;
#define NEG_INF uintBitsToFloat(0xff800000u)

shared float qt[HD * BQ];   // Q^T: qt[d * BQ + row]
shared float kt[HD * BK];   // K^T: kt[d * BK + key]
shared float vs[BK * DV];   // V:   vs[key * DV + e]
shared float pt[BK * BQ];   // P^T: pt[key * BQ + row]
shared float red[BQ * TX];  // one value per (row, tx): row maxima, then row sums

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint ty = tid / TX, tx = tid % TX;
  const uint b = gl_WorkGroupID.y;
  const uint q0 = gl_WorkGroupID.x * BQ;
  for (uint i = tid; i < BQ * HD; i += 128u) {
    uint row = i / HD, d = i % HD;
    qt[d * BQ + row] = q0 + row < SQ ? float(q_at((b * SQ + q0 + row) * HD + d)) : 0.0;
  }
  float m[RM], l[RM], acc[RM][DC];
  bool nan_seen[RM];
  [[unroll]] for (uint r = 0u; r < RM; ++r) {
    m[r] = NEG_INF;
    l[r] = 0.0;
    nan_seen[r] = false;
    [[unroll]] for (uint c = 0u; c < DC; ++c) acc[r][c] = 0.0;
  }
  const uint tiles = ${KEY_TILES};
  for (uint t = 0u; t < tiles; ++t) {
    const uint k0 = t * BK;
    barrier();  // the previous tile's readers of kt, vs and pt are done
${LOAD_K}
    for (uint i = tid; i < BK * DV; i += 128u) {
      uint j = i / DV, e = i % DV;
      vs[i] = k0 + j < SK ? float(v_at((b * SK + k0 + j) * DV + e)) : 0.0;
    }
    barrier();
    float s[RM][KC];
    [[unroll]] for (uint r = 0u; r < RM; ++r)
      [[unroll]] for (uint c = 0u; c < KC; ++c) s[r][c] = 0.0;
    for (uint d = 0u; d < HD; ++d) {
      float qv[RM], kv[KC];
      [[unroll]] for (uint r = 0u; r < RM; ++r) qv[r] = qt[d * BQ + ty * RM + r];
      [[unroll]] for (uint c = 0u; c < KC; ++c) kv[c] = kt[d * BK + c * TX + tx];
      [[unroll]] for (uint r = 0u; r < RM; ++r)
        [[unroll]] for (uint c = 0u; c < KC; ++c) s[r][c] += qv[r] * kv[c];
    }
    [[unroll]] for (uint r = 0u; r < RM; ++r) {
      const uint qi = q0 + ty * RM + r;
      float tile_max = NEG_INF;
      [[unroll]] for (uint c = 0u; c < KC; ++c) {
        const uint kj = k0 + c * TX + tx;
        float x = s[r][c] * ${SCALE};
${MASK}
        if (kj >= SK${CAUSAL}) x = NEG_INF;
        nan_seen[r] = nan_seen[r] || isnan(x);
        s[r][c] = x;
        tile_max = max(tile_max, x);
      }
      red[(ty * RM + r) * TX + tx] = tile_max;
    }
    barrier();
    [[unroll]] for (uint r = 0u; r < RM; ++r) {
      float tile_max = NEG_INF;
      [[unroll]] for (uint x = 0u; x < TX; ++x) tile_max = max(tile_max, red[(ty * RM + r) * TX + x]);
      const float m_new = max(m[r], tile_max);
      // Rows whose keys so far are all hidden keep m = -inf: nothing to rescale, nothing to add.
      const float alpha = m_new == NEG_INF ? 1.0 : exp(m[r] - m_new);
      m[r] = m_new;
      l[r] *= alpha;
      [[unroll]] for (uint c = 0u; c < DC; ++c) acc[r][c] *= alpha;
      [[unroll]] for (uint c = 0u; c < KC; ++c) {
        float p = m_new == NEG_INF ? 0.0 : exp(s[r][c] - m_new);
        l[r] += p;
        pt[(c * TX + tx) * BQ + ty * RM + r] = p;
      }
    }
    barrier();
    for (uint j = 0u; j < BK; ++j) {
      float pv[RM], vv[DC];
      [[unroll]] for (uint r = 0u; r < RM; ++r) pv[r] = pt[j * BQ + ty * RM + r];
      [[unroll]] for (uint c = 0u; c < DC; ++c) vv[c] = c * TX + tx < DV ? vs[j * DV + c * TX + tx] : 0.0;
      [[unroll]] for (uint r = 0u; r < RM; ++r)
        [[unroll]] for (uint c = 0u; c < DC; ++c) acc[r][c] += pv[r] * vv[c];
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
    [[unroll]] for (uint c = 0u; c < DC; ++c)
      if (c * TX + tx < DV) store_result((b * SQ + qi) * DV + c * TX + tx, acc[r][c] / sum);
  }
}
