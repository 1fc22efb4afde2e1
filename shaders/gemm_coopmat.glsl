// The fp16 tensor-core GEMM main loop (VK_NV_cooperative_matrix), a drop-in for gemm_core.glsl in
// conv_gemm.comp and matmul_tiled.comp (specialized by codegen/kernels/gemm_coopmat.cpp). A
// workgroup of WM x WN subgroups computes a TM x TN tile of C = A[M, K] x B[K, N]; each subgroup
// owns (TM / WM) x (TN / WN) of it as FRAG_M x FRAG_N float32 accumulator fragments, and
// multiplies float16 FRAG_M x FRAG_K fragments of A by FRAG_K x FRAG_N fragments of B loaded from
// workgroup memory. The fragment shape is the target's (16x16x16 on NVIDIA and AMD, 8x16x16 on
// Intel Xe2, 8x8x16 on Alchemist: TargetLimits::coopmat_loop_shape); every one has rows of a
// multiple of 8 halves, so fragment starts and strides stay 16-byte aligned.
//
// Staging, in one of two forms (VEC):
// - VEC 1: the same contract with the kernel as gemm_core.glsl (a_begin / a_load, b_begin /
//   b_load, one element per call, returned as float) for any operand the kernel can index,
//   fused prologues included; staged as float16_t.
// - VEC 8: the kernel hands 8 float16 values packed in a uvec4 (one 16-byte load) from
//   a_load8(m, k) / b_load8(n, k): 8 consecutive k from k for a K-fast operand, else 8
//   consecutive rows (columns) from m (n). Staged as uvec4. Per staged value that is one eighth of
//   the address arithmetic and loads of VEC 1, which was what bounded this loop (bench/RESULTS.md,
//   Run I: the MMAs alone took a quarter of the time).
// A_ROWS (VEC 8, a conv whose K slices each hold one kernel tap): A comes from a_load8_row(r, k)
// for the invocation's r-th staged row, after a_row_begin(r, m) once per tile and k_slice(k0)
// once per slice (codegen/kernels/conv_common.h, packed_row_fns), which decode what the row and
// the slice's tap need once instead of per load.
// Register double buffering either way: slice t is fetched into registers while slice t - 1 is
// multiplied. STAGES 1: one copy of each operand tile in workgroup memory, two barriers per slice
// (all reads done before it is overwritten; all writes done before it is read). STAGES 2: two
// copies; slice t + 1 is written into one while slice t is read from the other, one barrier per
// slice (the 4096^3 matmul on 128 x 128 x 32 tiles, 2 x 2 subgroups: 0.536 ms against 0.563 with
// one copy; H200, session 20). Workgroup-memory rows are padded by 8 halves (16 bytes), which keeps every fragment's
// start and stride 16-byte aligned and spreads a fragment's rows over the banks.
// The accumulators leave through a per-subgroup FRAG_M x FRAG_N float scratch so that store_c (bias, the
// fused epilogue, any output layout) sees one element at a time, walking M or N fastest
// (STORE_M_FAST) to follow the output's contiguous dim (store_fragment, written by
// codegen/kernels/gemm_coopmat.cpp for both loops), or where 4 consecutive columns are 4 consecutive
// output elements, 4 at a time through the kernel's store_c4 (a channels-last conv's channels, a
// row-major matrix's columns: one epilogue call, 8- or 16-byte reads and writes). With 16-byte staging the scratch reuses
// A's tiles once the last slice is multiplied (C_IN_A, where they are large enough:
// CoopTile::c_scratch_in_a_tiles, which counts the bytes the same way), else it has its own array.
// SPLIT (CoopTile::split): float32 operands. The kernel hands 8 float32 values as a mat2x4 from
// a_load8f / b_load8f (same runs as a_load8 / b_load8), and each is staged as two float16
// pieces, hi (x rounded to a float16 value: high_bits) and lo = f16(x - hi), after scaling A by
// A_SCALE and B by B_SCALE (split8), in tiles of their own; each fragment product is then
// lo_a*hi_b + hi_a*lo_b + hi_a*hi_b (small terms first), summed in float32 and scaled back before
// the store. The pieces hold about 22 of float32's 24 bits (the dropped lo*lo term is 2^-22 of
// the product; bench/split_precision_sim.py, bench/pieces_error_sim.py); products measured on the
// H200 come to a relative error of about 1e-6 for operands near 1, 2e-6 near 1e-3 and 2e-5 near
// 1e-4, where A's lo pieces are float16 subnormals even scaled (docs/api.md, "Precision"), at a
// third of the tensor cores' float16 rate. A value that float16 cannot hold once scaled
// (|a| > 4094, |b| > 255, inf, NaN) sends the whole workgroup's tile to a plain float32 loop over
// the kernel's a_elem / b_elem instead (a range flag in workgroup memory), so such inputs give
// float32's result, not inf/NaN.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

#define VEC ${VEC}u
#if ${VEC} == 8
#define STAGE_T uvec4
#else
#define STAGE_T float16_t
#endif

${B_SCOPE_DECLARATION}
const uint TM = ${TM}u, TN = ${TN}u, TK = ${TK}u, WM = ${WM}u, WN = ${WN}u, SG = ${SG}u;
const uint THREADS = WM * WN * SG;
const uint FRAG_M = ${FRAG_M}u, FRAG_N = ${FRAG_N}u, FRAG_K = ${FRAG_K}u, FRAG = FRAG_M * FRAG_N;
const uint FM = TM / WM / FRAG_M, FN = TN / WN / FRAG_N;  // fragments per subgroup along M and N
const uint A_KFAST = ${A_KFAST}u, B_KFAST = ${B_KFAST}u, STORE_M_FAST = ${STORE_M_FAST}u;
// A K-fast operand is staged [row][k] (stride TK + 8 halves), else [k][row] (TM + 8 or TN + 8).
const uint AS = A_KFAST == 1u ? TK + 8u : TM + 8u, BS = B_KFAST == 1u ? TK + 8u : TN + 8u;
// Staged values per invocation per K slice, and per tile row along the fast dim (in VEC units).
const uint A_ROUNDS = TM * TK / THREADS / VEC, B_ROUNDS = TN * TK / THREADS / VEC;
const uint A_RUN = (A_KFAST == 1u ? TK : TM) / VEC, B_RUN = (B_KFAST == 1u ? TK : TN) / VEC;

const uint STAGES = ${STAGES}u, C_IN_A = ${C_IN_A}u;
const uint A_STAGE = (A_KFAST == 1u ? TM * AS : TK * AS) / VEC, B_STAGE = (B_KFAST == 1u ? TN * BS : TK * BS) / VEC;
shared STAGE_T a_tile[STAGES * A_STAGE];
shared STAGE_T b_tile[STAGES * B_STAGE];
#if ${SPLIT} == 1
shared STAGE_T a_tile_lo[STAGES * A_STAGE];
shared STAGE_T b_tile_lo[STAGES * B_STAGE];
shared uint split_out_of_range;  // set by any invocation that staged a value float16 cannot hold
#endif
#if ${C_IN_A} == 1
// The accumulator scratch in A's tiles (uvec4: 4 floats each), used after the last slice.
#define STORE_SCRATCH(m) coopMatStoreNV(m, a_tile, scratch / 4u, FRAG_N / 4u, false)
float scratch_at(uint i) { return uintBitsToFloat(a_tile[i / 4u][i % 4u]); }
#else
shared float c_tile[WM * WN * FRAG];
#define STORE_SCRATCH(m) coopMatStoreNV(m, c_tile, scratch, FRAG_N, false)
float scratch_at(uint i) { return c_tile[i]; }
#endif

${STORE_FRAGMENT_FN}
// The tile coordinates of staged value e: (row, k) along the operand's fast dim, VEC values from it.
uvec2 staged_at(uint e, uint run, uint kfast) {
  uint slow = e / run, fast = (e % run) * VEC;
  return kfast == 1u ? uvec2(slow, fast) : uvec2(fast, slow);
}

// The loop's state, at module scope so that the slice steps below can share it (they are inlined).
fcoopmatNV<32, 3, FRAG_M, FRAG_N> acc[FM][FN];
// LAG (codegen: coop_lagged): each FRAG_K-deep step's products run one step late, from the fragments
// the previous step loaded, so that the last step of a slice is multiplied after the barrier that
// ends it, while the next slice's first fragments load (as gemm_core.glsl's LAG).
#define LAG ${LAG}
#if LAG
fcoopmatNV<16, 3, FRAG_M, FRAG_K> fa_prev[FM];
fcoopmatNV<16, ${B_SCOPE}, FRAG_K, FRAG_N> fb_prev[FN];
#endif
// PREFETCH register sets of the staged slice: 2 lets a slice's loads be issued two multiplies
// before its stash (single-copy tiles only; see gemm_tile).
const uint PREFETCH = ${PREFETCH}u;
STAGE_T a_next[PREFETCH][A_ROUNDS];
STAGE_T b_next[PREFETCH][B_ROUNDS];
#if ${SPLIT} == 1
STAGE_T a_next_lo[PREFETCH][A_ROUNDS];
STAGE_T b_next_lo[PREFETCH][B_ROUNDS];
bool split_in_range = true;
// x rounded to a float16 value, as a float32: the mantissa's low 13 bits rounded away in the
// integer domain (half up in magnitude), or, below float16's normal range (2^-14), x rounded to
// its subnormals' grid of 2^-24, so that hi is exactly the float16 staged and lo = x - hi holds
// all of the rest (x rounded to 11 bits there lost up to 2^-25 when staged). Not
// x - float(float16(x)): the NVIDIA driver (H200, 2026-11) folded that to 0, and the products
// came out at float16's accuracy.
vec4 high_bits(vec4 x) {
  const vec4 h = uintBitsToFloat((floatBitsToUint(x) + 0x1000u) & 0xFFFFE000u);
  return mix(h, round(x * 16777216.0) * (1.0 / 16777216.0), lessThan(abs(h), vec4(0.00006103515625)));
}
// Each operand is scaled by a power of two as it is split (A by A_SCALE, B by B_SCALE; exact),
// so that the accumulators hold the product times PRODUCT_SCALE, scaled back once before the
// store. Why: lo, about 2^-12 of x, is a float16 subnormal below |x| of about 2^-3 and keeps
// fewer bits there (relative error 4e-5 on operands near 1e-3 unscaled, session 36). Scaled, B's
// lo pieces are normals down to |b| of about 2^-11 and A's down to 2^-7; below that their
// absolute error is 2^-24 / scale. The price is range: |a| <= 65504 / A_SCALE (4094), |b| <=
// 65504 / B_SCALE (255), else the tile takes the float32 loop (below). B, the larger share, is
// the weights in most products; A the activations, whose range matters more. Measured
// alternatives (session 37, bench/RESULTS.md): lo staged x 2^10 and the hi pieces scaled in
// registers per step (A's range 16376) cost 6-13% of the products' time; lo's products in a
// second accumulator scaled back per step, 23-40%; computing an out-of-range tile again
// unscaled before the float32 loop, 10-15% on every tile.
const float A_SCALE = 16.0, B_SCALE = 256.0, PRODUCT_SCALE = A_SCALE * B_SCALE;
// The two float16 pieces of 8 float32 values (8 halves each, packed as the staging's uvec4),
// scaled by `scale`, which must leave them within float16's range (else the tile's flag is set).
void split8(mat2x4 x, float scale, out uvec4 hi, out uvec4 lo) {
  const mat2x4 v = x * scale;
  split_in_range = split_in_range && all(lessThanEqual(abs(v[0]), vec4(65504.0))) &&
                   all(lessThanEqual(abs(v[1]), vec4(65504.0)));  // false for NaN too
  const vec4 h0 = high_bits(v[0]), h1 = high_bits(v[1]);
  const vec4 l0 = v[0] - h0, l1 = v[1] - h1;
  hi = uvec4(packHalf2x16(h0.xy), packHalf2x16(h0.zw), packHalf2x16(h1.xy), packHalf2x16(h1.zw));
  lo = uvec4(packHalf2x16(l0.xy), packHalf2x16(l0.zw), packHalf2x16(l1.xy), packHalf2x16(l1.zw));
}
#endif

// Reads the K slice from k0 into register set `set` of a_next / b_next.
void fetch_slice(uint m0, uint n0, uint k0, uint lid, uint set) {
#if ${A_ROWS} == 1
  k_slice(k0);
#endif
  [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
    uvec2 at = staged_at(lid + r * THREADS, A_RUN, A_KFAST);
#if ${SPLIT} == 1
    split8(a_load8f(m0 + at.x, k0 + at.y), A_SCALE, a_next[set][r], a_next_lo[set][r]);
#elif ${A_ROWS} == 1
    a_next[set][r] = a_load8_row(r, k0 + at.y);
#elif ${VEC} == 8
    a_next[set][r] = a_load8(m0 + at.x, k0 + at.y);
#else
    if (A_KFAST == 1u) a_begin(m0 + at.x);
    a_next[set][r] = float16_t(a_load(m0 + at.x, k0 + at.y));
#endif
  }
  [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
    uvec2 at = staged_at(lid + r * THREADS, B_RUN, B_KFAST);
#if ${SPLIT} == 1
    split8(b_load8f(n0 + at.x, k0 + at.y), B_SCALE, b_next[set][r], b_next_lo[set][r]);
#elif ${VEC} == 8
    b_next[set][r] = b_load8(n0 + at.x, k0 + at.y);
#else
    if (B_KFAST == 1u) b_begin(n0 + at.x);
    b_next[set][r] = float16_t(b_load(n0 + at.x, k0 + at.y));
#endif
  }
}

// Writes register set `set` of a_next / b_next into the workgroup-memory copy `stage`.
void stash_slice(uint stage, uint lid, uint set) {
  [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
    uvec2 at = staged_at(lid + r * THREADS, A_RUN, A_KFAST);
    const uint i = stage * A_STAGE + (A_KFAST == 1u ? at.x * AS + at.y : at.y * AS + at.x) / VEC;
    a_tile[i] = a_next[set][r];
#if ${SPLIT} == 1
    a_tile_lo[i] = a_next_lo[set][r];
#endif
  }
  [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
    uvec2 at = staged_at(lid + r * THREADS, B_RUN, B_KFAST);
    const uint i = stage * B_STAGE + (B_KFAST == 1u ? at.x * BS + at.y : at.y * BS + at.x) / VEC;
    b_tile[i] = b_next[set][r];
#if ${SPLIT} == 1
    b_tile_lo[i] = b_next_lo[set][r];
#endif
  }
}

// Multiplies the slice in copy `stage` into the subgroup's accumulators (its corner row0, col0).
// Offsets and strides count STAGE_T elements (VEC halves each).
#define LOAD_A(TILE)                                                                       \
  [[unroll]] for (uint i = 0u; i < FM; ++i) {                                              \
    uint m = row0 + i * FRAG_M;                                                            \
    if (A_KFAST == 1u) coopMatLoadNV(fa[i], TILE, a0 + (m * AS + kk) / VEC, AS / VEC, false); \
    else coopMatLoadNV(fa[i], TILE, a0 + (kk * AS + m) / VEC, AS / VEC, true);              \
  }
#define LOAD_B(TILE)                                                                       \
  [[unroll]] for (uint j = 0u; j < FN; ++j) {                                              \
    uint n = col0 + j * FRAG_N;                                                            \
    if (B_KFAST == 1u) coopMatLoadNV(fb[j], TILE, b0 + (n * BS + kk) / VEC, BS / VEC, true);  \
    else coopMatLoadNV(fb[j], TILE, b0 + (kk * BS + n) / VEC, BS / VEC, false);             \
  }
#define MULTIPLY(FA, FB)                  \
  [[unroll]] for (uint i = 0u; i < FM; ++i) \
    [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAddNV(FA[i], FB[j], acc[i][j]);

void multiply_slice(uint stage, uint row0, uint col0) {
  const uint a0 = stage * A_STAGE, b0 = stage * B_STAGE;
  [[unroll]] for (uint kk = 0u; kk < TK; kk += FRAG_K) {
    fcoopmatNV<16, 3, FRAG_M, FRAG_K> fa[FM];
    fcoopmatNV<16, ${B_SCOPE}, FRAG_K, FRAG_N> fb[FN];  // its own type for the KHR rewrite
#if ${SPLIT} == 1
    // hi_a*lo_b, hi_a*hi_b, lo_a*hi_b: each piece loaded once, two sets of fragments live.
    LOAD_A(a_tile)
    LOAD_B(b_tile_lo)
    MULTIPLY(fa, fb)
    LOAD_B(b_tile)
    MULTIPLY(fa, fb)
    LOAD_A(a_tile_lo)
    MULTIPLY(fa, fb)
#else
    LOAD_A(a_tile)
    LOAD_B(b_tile)
#if LAG
    // The previous step's products, while this step's fragments load.
    MULTIPLY(fa_prev, fb_prev)
    [[unroll]] for (uint i = 0u; i < FM; ++i) fa_prev[i] = fa[i];
    [[unroll]] for (uint j = 0u; j < FN; ++j) fb_prev[j] = fb[j];
#else
    MULTIPLY(fa, fb)
#endif
#endif
  }
}

void gemm_tile(uint m0, uint n0, uint k_begin, uint k_end) {
  uint lid = gl_LocalInvocationIndex;
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint row0 = (sg / WN) * FM * FRAG_M, col0 = (sg % WN) * FN * FRAG_N;  // the subgroup's corner in the tile
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = fcoopmatNV<32, 3, FRAG_M, FRAG_N>(0.0);
#if LAG
  // The first step multiplies zeros into the accumulators.
  [[unroll]] for (uint i = 0u; i < FM; ++i) fa_prev[i] = fcoopmatNV<16, 3, FRAG_M, FRAG_K>(0.0);
  [[unroll]] for (uint j = 0u; j < FN; ++j) fb_prev[j] = fcoopmatNV<16, ${B_SCOPE}, FRAG_K, FRAG_N>(0.0);
#endif
#if ${SPLIT} == 1
  if (lid == 0u) split_out_of_range = 0u;  // read only after the barriers below
#endif
#if ${A_ROWS} == 1
  // The kernel's row hooks (A_ROWS): each staged A row's position, decoded once per tile.
  [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) a_row_begin(r, m0 + staged_at(lid + r * THREADS, A_RUN, A_KFAST).x);
#endif
#if ${VEC} == 1
  // Row-fast staging keeps each invocation on one row (THREADS % TM == 0, checked by the planner).
  if (A_KFAST == 0u) a_begin(m0 + lid % TM);
  if (B_KFAST == 0u) b_begin(n0 + lid % TN);
#endif
#if ${STAGES} == 2
  if (k_begin < k_end) {
    fetch_slice(m0, n0, k_begin, lid, 0u);
    stash_slice(0u, lid, 0u);
  }
  barrier();
  uint stage = 0u;
  for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
    bool more = k0 + TK < k_end;
    if (more) fetch_slice(m0, n0, k0 + TK, lid, 0u);
    multiply_slice(stage, row0, col0);
    // Copy stage ^ 1 was last read in the previous slice, before the barrier that ended it.
    if (more) stash_slice(stage ^ 1u, lid, 0u);
    barrier();
    stage ^= 1u;
  }
#elif ${PREFETCH} == 2
  // One copy, two register sets: slice t's loads are issued before slice t - 2 is multiplied and
  // stashed after slice t - 1 is, so two multiplies cover their latency (two copies of a
  // 128 x 128 x 64 tile would not fit in 48 KiB, and with one workgroup per SM no other workgroup
  // hides it). The loop is unrolled by two so that each set is named by a
  // constant (a variable index would send the registers to local memory).
  if (k_begin < k_end) fetch_slice(m0, n0, k_begin, lid, 0u);
  if (k_begin + TK < k_end) fetch_slice(m0, n0, k_begin + TK, lid, 1u);
  for (uint k0 = k_begin; k0 < k_end; k0 += 2u * TK) {
    stash_slice(0u, lid, 0u);
    barrier();
    if (k0 + 2u * TK < k_end) fetch_slice(m0, n0, k0 + 2u * TK, lid, 0u);
    multiply_slice(0u, row0, col0);
    barrier();
    if (k0 + TK >= k_end) break;
    stash_slice(0u, lid, 1u);
    barrier();
    if (k0 + 3u * TK < k_end) fetch_slice(m0, n0, k0 + 3u * TK, lid, 1u);
    multiply_slice(0u, row0, col0);
    barrier();
  }
#else
  for (uint k0 = k_begin; k0 < k_end + TK; k0 += TK) {
    bool more = k0 < k_end;
    if (more) fetch_slice(m0, n0, k0, lid, 0u);
    if (k0 > k_begin) {
      multiply_slice(0u, row0, col0);
      barrier();
    }
    if (more) {
      stash_slice(0u, lid, 0u);
      barrier();
    }
  }
#endif
#if LAG
  // The last slice's last step.
  MULTIPLY(fa_prev, fb_prev)
#endif
#if ${SPLIT} == 1
  // A value out of float16's range: the tile's float32 result from a plain loop (slow, and rare).
  if (!split_in_range) split_out_of_range = 1u;
  barrier();
  if (split_out_of_range != 0u) {
    for (uint e = lid; e < TM * TN; e += THREADS) {
      const uint m = m0 + e / TN, n = n0 + e % TN;
      float s = 0.0;
      for (uint k = k_begin; k < k_end; ++k) s = fma(a_elem(m, k), b_elem(n, k), s);
      store_c(m, n, s);
    }
    return;
  }
  // The accumulators hold the product times PRODUCT_SCALE (split8).
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = acc[i][j] * (1.0 / PRODUCT_SCALE);
#endif
  // Every slice ended with a barrier: A's tiles are free for the scratch (C_IN_A).
  uint scratch = sg * FRAG;
  // One statement per fragment, written out by the code generator: a loop over the fragments
  // around store_fragment's own (rolled) loop was left rolled by spirv-opt, and the run-time
  // index sent the accumulators to local memory (H200: slower than the float32 kernel).
${STORE_FRAGMENTS}
}
