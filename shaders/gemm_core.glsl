// The tiled GEMM main loop shared by conv_gemm.comp and matmul_tiled.comp (specialized by
// codegen/kernels/gemm_core.cpp). A workgroup of THREADS invocations computes a TM x TN tile of
// C = A[M, K] x B[K, N]; each invocation accumulates an RM x RN register block.
//
// Why it is shaped this way (measured on H100/H200, bench/RESULTS.md):
// - Workgroup memory is read as vec4: an invocation owns RM/4 groups of 4 consecutive rows and
//   RN/4 groups of 4 consecutive columns, so one kk step costs (RM + RN) / 4 128-bit reads for
//   RM x RN FMAs. Scalar reads (one per row and column) made the old kernel bound by
//   workgroup-memory bandwidth at ~29% of the FMA peak. Blocks of 2 fall back to scalar reads.
// - The next K slice is fetched from global memory into registers while the current one is
//   multiplied (register double buffering), so load latency hides behind the FMAs.
// - Two copies of the workgroup tiles (STAGES 2, large NVIDIA tiles): slice t is staged into one
//   while slice t - 1 is still multiplied out of the other, so one barrier per slice guards both
//   (one copy needs a second barrier before staging, that everyone has finished reading it).
// - Where the multiply loop is fully unrolled, each kk step's FMAs run one step late (LAG): the
//   last step of slice t - 1 is multiplied after slice t's staging stores and barrier, from
//   registers, while the first reads of slice t are in flight, so the barrier no longer leaves the
//   FMA units idle for a workgroup-memory round trip (one workgroup per SM on the large NVIDIA
//   tiles: nothing else fills that gap). Same sums in the same order; H200, session 38: seed conv
//   2.32 -> 2.17 ms, ResNet's batch-128 3x3 0.89 -> 0.83, 4096^3 3.72 -> 3.68.
// - The multiply loop over the slice is unrolled KK_UNROLL steps at a time: fully for plain
//   matrices and for convs whose slices hold one tap (their loads are short), not at all for
//   per-element conv gathers, whose long index math made the unrolled loop body 3-5x slower
//   (measured; codegen/kernels/conv_gemm.cpp).
// - Results leave 4 at a time where an invocation's 4 rows (columns) are 4 consecutive outputs
//   (STORE_QUADS): one epilogue call, side operands read 16 bytes at a time, one 16-byte store
//   (ResNet-50 b32 11.97 -> 10.72 ms, H200, session 30). Elsewhere, results whose rows are
//   contiguous in memory (NCHW conv outputs) leave through workgroup memory (STORE_M_FAST), so
//   that stores coalesce along the rows (seed conv 7.6% faster, H200).
// - Staging walks A and B in the order their memory is contiguous: M-fast (or N-fast) with one
//   element per round, or K-fast in quads of 4 consecutive k, and invocations that stage along M
//   (N) always land on the same row (column), so a_begin/b_begin decode the row's index math once.
//
// The kernel provides, before this text:
//   void a_begin(uint m); float a_load(uint m, uint k);   A[m, k], 0 outside [M, K]
//   void b_begin(uint n); float b_load(uint n, uint k);   B[k, n], 0 outside [K, N]
//   void store_c(uint m, uint n, float v);                 one result (skips m >= M, n >= N)
//   void store_c4(uint m, uint n, vec4 v);                 with STORE_QUADS only (below)
// With B_VEC 1 (N-fast only) the kernel provides instead `vec4 b_load4(uint n, uint k)`:
// B[k, n..n+3] in one 16-byte load, each quad wholly inside or outside [K, N] (the kernel checks
// the strides); a quad lands in workgroup memory as one vec4 store. With A_4X4 1 (K-fast only) it
// provides `vec4 a_load4(uint m, uint k)` (A[m, k..k+3], likewise checked) instead of a_load, and
// a_begin is not called.
// In M-fast staging (A_KFAST = 0) a_begin(m) is called once for the invocation's one staging row
// (THREADS % TM == 0, checked by the planner) and a_load always gets that m; in K-fast staging
// a_begin is called before every a_load of a new row. Likewise for B. A kernel whose loads share
// per-slice state provides `void k_slice(uint k0)` too (SLICE_BEGIN), called before each slice's
// loads, after a_begin/b_begin of the staging row in M-fast (N-fast) order. With A_FINISH 1
// (M-fast only) the fetch calls `float a_load_raw(uint m, uint k)` instead of a_load and the store
// to workgroup memory `float a_finish(uint m, uint k, float raw)`, which must give a_load's value:
// what a fused prologue computes from the loaded value waits until the multiply loop has run,
// instead of stalling on the load in front of it (codegen/kernels/gemm_core.h).
#extension GL_EXT_control_flow_attributes : require

const uint TM = ${TM}u, TN = ${TN}u, TK = ${TK}u, RM = ${RM}u, RN = ${RN}u;
const uint THREADS = ${THREADS}u;
const uint STAGES = ${STAGES}u;  // copies of the workgroup tiles: 1 or 2
const uint TX = TN / RN, TY = TM / RM;
// Rows (columns) per workgroup-memory read: 4 when the register block allows vec4 reads.
const uint LM = (RM % 4u == 0u) ? 4u : 1u, LN = (RN % 4u == 0u) ? 4u : 1u;
const uint A_KFAST = ${A_KFAST}u, B_KFAST = ${B_KFAST}u;
#define B_VEC ${B_VEC}
#define A_FINISH ${A_FINISH}
// A staged K-fast in 4x4 blocks (4 rows x 4 k), each row one 16-byte load `vec4 a_load4(uint m,
// uint k)` (A[m, k..k+3]), transposed in registers so that each k goes to workgroup memory as one
// 16-byte store of 4 rows (a K-fast quad alone is stored element by element down 4 rows).
#define A_4X4 ${A_4X4}
// B's staging units hold 4 elements (quads) when K-fast or vectorized; A's when K-fast.
const uint B_QUADS = (B_KFAST == 1u || B_VEC == 1) ? 1u : 0u;
// Elements (A_KFAST: quads of k) per K slice; the planner keeps tiles where THREADS divides them,
// so every invocation stages the same number and the loops below carry no bounds test (a test
// there kept spirv-opt from unrolling them, and the register arrays went to local memory).
const uint A_UNITS = A_4X4 == 1 ? TM * TK / 16u : A_KFAST == 1u ? TM * TK / 4u : TM * TK;
const uint B_UNITS = B_QUADS == 1u ? TN * TK / 4u : TN * TK;
const uint A_ROUNDS = A_UNITS / THREADS, B_ROUNDS = B_UNITS / THREADS;
const uint A_REGS = A_ROUNDS * (A_4X4 == 1 ? 16u : A_KFAST == 1u ? 4u : 1u);
const uint B_REGS = B_ROUNDS * (B_QUADS == 1u ? 4u : 1u);
// 1: results leave through workgroup memory, neighbouring invocations on neighbouring rows (see
// the end of gemm_tile; gemm_core.h).
const uint STORE_M_FAST = ${STORE_M_FAST}u;
// 1: results leave as vec4 of 4 consecutive rows of one column (an invocation's LM rows), through
// `void store_c4(uint m, uint n, vec4 v)` (rows m..m+3 of column n, m % 4 == 0); 2: as 4
// consecutive columns of one row (store_c4: columns n..n+3 of row m). For results whose rows
// (columns) are contiguous in memory; the kernel checks that groups of 4 stay inside the result.
#define STORE_QUADS ${STORE_QUADS}
// kk steps per iteration of the multiply loop (TK: fully unrolled; see gemm_core.h).
const uint KK_UNROLL = ${KK_UNROLL}u;
// 1 (a fully unrolled multiply loop): each kk step's FMAs run one step late (see the top).
#define LAG ${LAG}

// K-major: a_tile[kk * TM + m], b_tile[kk * TN + n], as vec4 (TM and TN are multiples of 4); with
// two stages, slice t lives in copy t % 2.
shared vec4 a_tile[STAGES * TK * TM / 4u];
shared vec4 b_tile[STAGES * TK * TN / 4u];

// The XOR applied to the rows of result column c in the store scratch (STORE_M_FAST).
uint scratch_swizzle(uint c) { return (c & 3u) | ((c << 1u) & 24u); }

// Row (column) of the tile that accumulator row i (column j) of invocation (tx, ty) holds.
uint owned_row(uint ty, uint i) { return ((i / LM) * TY + ty) * LM + i % LM; }
uint owned_col(uint tx, uint j) { return ((j / LN) * TX + tx) * LN + j % LN; }

// Accumulates K slices [k_begin, k_end) of the tile at (m0, n0), then stores it. One function with
// local arrays only (module-scope arrays are not promoted to registers as reliably), and each
// step (fetch, multiply, stage) written once: iteration t fetches slice t into registers, then
// multiplies slice t - 1 out of workgroup memory while those loads are in flight, then stages t.
void gemm_tile(uint m0, uint n0, uint k_begin, uint k_end) {
  uint lid = gl_LocalInvocationIndex;
  // Neighbouring invocations own neighbouring columns. (Neighbouring rows, which would coalesce
  // the stores of NCHW conv outputs, measured 1.1-4x slower on H200 for every conv of the suite.)
  uint tx = lid % TX, ty = lid / TX;
  float acc[RM][RN];
  float a_next[A_REGS];
  float b_next[B_REGS];
  [[unroll]] for (uint i = 0u; i < RM; ++i)
    [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = 0.0;
#if LAG
  // The previous kk step's operands, multiplied while this step's are read from workgroup memory.
  float a_prev[RM], b_prev[RN];
  [[unroll]] for (uint i = 0u; i < RM; ++i) a_prev[i] = 0.0;
  [[unroll]] for (uint j = 0u; j < RN; ++j) b_prev[j] = 0.0;
#endif
  if (A_KFAST == 0u) a_begin(m0 + lid % TM);
#if !B_VEC
  if (B_KFAST == 0u) b_begin(n0 + lid % TN);
#endif
  for (uint k0 = k_begin; k0 < k_end + TK; k0 += TK) {
    bool more = k0 < k_end;
    if (more) {
      ${SLICE_BEGIN}
      [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
#if A_4X4
        // Block e: rows m0 + (e / (TK/4)) * 4 + i, k = k0 + (e % (TK/4)) * 4 .. + 3.
        [[unroll]] for (uint i = 0u; i < 4u; ++i) {
          vec4 v = a_load4(m0 + (e / (TK / 4u)) * 4u + i, k0 + (e % (TK / 4u)) * 4u);
          [[unroll]] for (uint c = 0u; c < 4u; ++c) a_next[r * 16u + c * 4u + i] = v[c];
        }
#else
        if (A_KFAST == 0u) {
#if A_FINISH
          a_next[r] = a_load_raw(m0 + e % TM, k0 + e / TM);
#else
          a_next[r] = a_load(m0 + e % TM, k0 + e / TM);
#endif
        } else {
          uint m = m0 + e / (TK / 4u), k = k0 + (e % (TK / 4u)) * 4u;
          a_begin(m);
          [[unroll]] for (uint c = 0u; c < 4u; ++c) a_next[r * 4u + c] = a_load(m, k + c);
        }
#endif
      }
      [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
#if B_VEC
        vec4 v = b_load4(n0 + (e % (TN / 4u)) * 4u, k0 + e / (TN / 4u));  // quad e: 4 columns of one k
        [[unroll]] for (uint c = 0u; c < 4u; ++c) b_next[r * 4u + c] = v[c];
#else
        if (B_KFAST == 0u) {
          b_next[r] = b_load(n0 + e % TN, k0 + e / TN);
        } else {
          uint n = n0 + e / (TK / 4u), k = k0 + (e % (TK / 4u)) * 4u;
          b_begin(n);
          [[unroll]] for (uint c = 0u; c < 4u; ++c) b_next[r * 4u + c] = b_load(n, k + c);
        }
#endif
      }
    }
    // Slice t (this iteration's, staged below) goes to copy t % 2; slice t - 1 is read from the other.
    uint slice = (k0 - k_begin) / TK;
    uint a_read = STAGES == 2u ? ((slice + 1u) & 1u) * (TK * TM / 4u) : 0u;
    uint b_read = STAGES == 2u ? ((slice + 1u) & 1u) * (TK * TN / 4u) : 0u;
    uint a_write = STAGES == 2u ? (slice & 1u) * (TK * TM) : 0u;
    uint b_write = STAGES == 2u ? (slice & 1u) * (TK * TN) : 0u;
    if (k0 > k_begin) {
      [[dont_unroll]] for (uint kk0 = 0u; kk0 < TK; kk0 += KK_UNROLL)
      [[unroll]] for (uint ku = 0u; ku < KK_UNROLL; ++ku) {
        uint kk = kk0 + ku;
        float a[RM], b[RN];
        [[unroll]] for (uint q = 0u; q < RM / LM; ++q) {
          if (LM == 4u) {
            vec4 v = a_tile[a_read + kk * (TM / 4u) + q * TY + ty];
            a[q * 4u] = v.x; a[q * 4u + 1u] = v.y; a[q * 4u + 2u] = v.z; a[q * 4u + 3u] = v.w;
          } else {
            uint i = kk * TM + q * TY + ty;
            a[q] = a_tile[a_read + i / 4u][i % 4u];
          }
        }
        [[unroll]] for (uint q = 0u; q < RN / LN; ++q) {
          if (LN == 4u) {
            vec4 v = b_tile[b_read + kk * (TN / 4u) + q * TX + tx];
            b[q * 4u] = v.x; b[q * 4u + 1u] = v.y; b[q * 4u + 2u] = v.z; b[q * 4u + 3u] = v.w;
          } else {
            uint i = kk * TN + q * TX + tx;
            b[q] = b_tile[b_read + i / 4u][i % 4u];
          }
        }
#if LAG
        [[unroll]] for (uint i = 0u; i < RM; ++i)
          [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = fma(a_prev[i], b_prev[j], acc[i][j]);
        [[unroll]] for (uint i = 0u; i < RM; ++i) a_prev[i] = a[i];
        [[unroll]] for (uint j = 0u; j < RN; ++j) b_prev[j] = b[j];
#else
        [[unroll]] for (uint i = 0u; i < RM; ++i)
          [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
#endif
      }
      if (STAGES == 1u) barrier();  // slice t is about to overwrite the one copy
    }
    if (more) {
      [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
#if A_4X4
        // k = (e % (TK/4)) * 4 + c: the block's 4 rows as one vec4 at row (e / (TK/4)) * 4.
        [[unroll]] for (uint c = 0u; c < 4u; ++c)
          a_tile[(a_write + ((e % (TK / 4u)) * 4u + c) * TM) / 4u + e / (TK / 4u)] =
              vec4(a_next[r * 16u + c * 4u], a_next[r * 16u + c * 4u + 1u], a_next[r * 16u + c * 4u + 2u],
                   a_next[r * 16u + c * 4u + 3u]);
#else
        [[unroll]] for (uint c = 0u; c < A_REGS / A_ROUNDS; ++c) {
          // M-fast: e = kk * TM + m; K-fast: quad e holds k = (e % (TK/4)) * 4 + c of row e / (TK/4).
          uint i = a_write + (A_KFAST == 0u ? e : ((e % (TK / 4u)) * 4u + c) * TM + e / (TK / 4u));
#if A_FINISH
          a_tile[i / 4u][i % 4u] = a_finish(m0 + e % TM, k0 + e / TM, a_next[r * (A_REGS / A_ROUNDS) + c]);
#else
          a_tile[i / 4u][i % 4u] = a_next[r * (A_REGS / A_ROUNDS) + c];
#endif
        }
#endif
      }
      [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
        if (B_VEC == 1) {  // a quad of 4 columns of one k: one vec4 store
          b_tile[(b_write + (e / (TN / 4u)) * TN) / 4u + e % (TN / 4u)] =
              vec4(b_next[r * 4u], b_next[r * 4u + 1u], b_next[r * 4u + 2u], b_next[r * 4u + 3u]);
        } else
        [[unroll]] for (uint c = 0u; c < B_REGS / B_ROUNDS; ++c) {
          uint i = b_write + (B_KFAST == 0u ? e : ((e % (TK / 4u)) * 4u + c) * TN + e / (TK / 4u));
          b_tile[i / 4u][i % 4u] = b_next[r * (B_REGS / B_ROUNDS) + c];
        }
      }
      barrier();
    }
  }
#if LAG
  // The last slice's last step.
  [[unroll]] for (uint i = 0u; i < RM; ++i)
    [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = fma(a_prev[i], b_prev[j], acc[i][j]);
#endif
#if STORE_QUADS == 1
  [[unroll]] for (uint q = 0u; q < RM / 4u; ++q)
    [[unroll]] for (uint j = 0u; j < RN; ++j)
      store_c4(m0 + owned_row(ty, q * 4u), n0 + owned_col(tx, j),
               vec4(acc[q * 4u][j], acc[q * 4u + 1u][j], acc[q * 4u + 2u][j], acc[q * 4u + 3u][j]));
  return;
#elif STORE_QUADS == 2
  [[unroll]] for (uint i = 0u; i < RM; ++i)
    [[unroll]] for (uint q = 0u; q < RN / 4u; ++q)
      store_c4(m0 + owned_row(ty, i), n0 + owned_col(tx, q * 4u),
               vec4(acc[i][q * 4u], acc[i][q * 4u + 1u], acc[i][q * 4u + 2u], acc[i][q * 4u + 3u]));
  return;
#endif
  if (STORE_M_FAST == 0u) {
    [[unroll]] for (uint i = 0u; i < RM; ++i)
      [[unroll]] for (uint j = 0u; j < RN; ++j) store_c(m0 + owned_row(ty, i), n0 + owned_col(tx, j), acc[i][j]);
    return;
  }
  // Results whose rows (M) are contiguous in memory (an NCHW conv's output positions) go out
  // through workgroup memory, one register column j at a time: the TX columns of pass j are
  // written [column][row] into a_tile's space, then read back with neighbouring invocations on
  // neighbouring rows, so each store instruction writes whole cache lines instead of one element
  // of TX different lines. Column c's rows are stored XOR-swizzled by swz(c) (bits 0, 1, 3 and 4;
  // TM is a multiple of 32, so a row stays inside its column): a warp's writes (16 tx, and ty
  // apart by 4 rows) then fall in 32 different banks, where plain [column][row] put every tx in
  // the same bank; the reads (32 consecutive rows of a column) stay conflict-free.
  barrier();  // every invocation has finished reading the last slice's tiles
  [[unroll]] for (uint j = 0u; j < RN; ++j) {
    [[unroll]] for (uint i = 0u; i < RM; ++i) {
      uint w = tx * TM + (owned_row(ty, i) ^ scratch_swizzle(tx));
      a_tile[w / 4u][w % 4u] = acc[i][j];
    }
    barrier();
    [[unroll]] for (uint r = 0u; r < TX * TM / THREADS; ++r) {
      uint e = lid + r * THREADS;
      uint col = e / TM, row = e % TM;
      uint w = col * TM + (row ^ scratch_swizzle(col));
      store_c(m0 + row, n0 + owned_col(col, j), a_tile[w / 4u][w % 4u]);
    }
    barrier();
  }
}
