// The fp16 tensor-core GEMM main loop (VK_NV_cooperative_matrix), a drop-in for gemm_core.glsl in
// conv_gemm.comp and matmul_tiled.comp (specialized by codegen/kernels/gemm_coopmat.cpp). A
// workgroup of WM x WN subgroups computes a TM x TN tile of C = A[M, K] x B[K, N]; each subgroup
// owns (TM / WM) x (TN / WN) of it as 16 x 16 float32 accumulator fragments, and multiplies
// float16 16 x 16 fragments of A and B loaded from workgroup memory.
//
// Same contract with the kernel as gemm_core.glsl (a_begin / a_load, b_begin / b_load, store_c;
// a_load and b_load return float, staged here as float16_t), and the same register double
// buffering: slice t is fetched into registers while slice t - 1 is multiplied.
// Workgroup-memory rows are padded by 8 halves (16 bytes), which keeps every fragment's start and
// stride 16-byte aligned and spreads a fragment's rows over the banks.
// The accumulators leave through a per-subgroup 16 x 16 float scratch so that store_c (bias, the
// fused epilogue, any output layout) sees one element at a time, walking M or N fastest
// (STORE_M_FAST) to follow the output's contiguous dim.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

const uint TM = ${TM}u, TN = ${TN}u, TK = ${TK}u, WM = ${WM}u, WN = ${WN}u, SG = ${SG}u;
const uint THREADS = WM * WN * SG;
const uint FM = TM / WM / 16u, FN = TN / WN / 16u;  // fragments per subgroup along M and N
const uint A_KFAST = ${A_KFAST}u, B_KFAST = ${B_KFAST}u, STORE_M_FAST = ${STORE_M_FAST}u;
// A K-fast operand is staged [row][k] (stride TK + 8), else [k][row] (stride TM + 8 or TN + 8).
const uint AS = A_KFAST == 1u ? TK + 8u : TM + 8u, BS = B_KFAST == 1u ? TK + 8u : TN + 8u;
const uint A_ROUNDS = TM * TK / THREADS, B_ROUNDS = TN * TK / THREADS;

shared float16_t a_tile[A_KFAST == 1u ? TM * AS : TK * AS];
shared float16_t b_tile[B_KFAST == 1u ? TN * BS : TK * BS];
shared float c_tile[WM * WN * 256u];

// Hands one 16 x 16 fragment, stored at c_tile[scratch..], to store_c; its tile row m and column n.
void store_fragment(uint m, uint n, uint scratch, uint lane) {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  for (uint e = lane; e < 256u; e += SG) {
    uint r = STORE_M_FAST == 1u ? e % 16u : e / 16u, c = STORE_M_FAST == 1u ? e / 16u : e % 16u;
    store_c(m + r, n + c, c_tile[scratch + r * 16u + c]);
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

void gemm_tile(uint m0, uint n0, uint k_begin, uint k_end) {
  uint lid = gl_LocalInvocationIndex;
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint row0 = (sg / WN) * FM * 16u, col0 = (sg % WN) * FN * 16u;  // the subgroup's corner in the tile
  fcoopmatNV<32, 3, 16, 16> acc[FM][FN];
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = fcoopmatNV<32, 3, 16, 16>(0.0);
  float16_t a_next[A_ROUNDS];
  float16_t b_next[B_ROUNDS];
  // Row-fast staging keeps each invocation on one row (THREADS % TM == 0, checked by the planner).
  if (A_KFAST == 0u) a_begin(m0 + lid % TM);
  if (B_KFAST == 0u) b_begin(n0 + lid % TN);
  for (uint k0 = k_begin; k0 < k_end + TK; k0 += TK) {
    bool more = k0 < k_end;
    if (more) {
      [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
        if (A_KFAST == 0u) {
          a_next[r] = float16_t(a_load(m0 + e % TM, k0 + e / TM));
        } else {
          a_begin(m0 + e / TK);
          a_next[r] = float16_t(a_load(m0 + e / TK, k0 + e % TK));
        }
      }
      [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
        if (B_KFAST == 0u) {
          b_next[r] = float16_t(b_load(n0 + e % TN, k0 + e / TN));
        } else {
          b_begin(n0 + e / TK);
          b_next[r] = float16_t(b_load(n0 + e / TK, k0 + e % TK));
        }
      }
    }
    if (k0 > k_begin) {
      [[unroll]] for (uint kk = 0u; kk < TK; kk += 16u) {
        fcoopmatNV<16, 3, 16, 16> fa[FM];
        fcoopmatNV<16, 3, 16, 16> fb[FN];
        [[unroll]] for (uint i = 0u; i < FM; ++i) {
          uint m = row0 + i * 16u;
          if (A_KFAST == 1u) coopMatLoadNV(fa[i], a_tile, m * AS + kk, AS, false);
          else coopMatLoadNV(fa[i], a_tile, kk * AS + m, AS, true);
        }
        [[unroll]] for (uint j = 0u; j < FN; ++j) {
          uint n = col0 + j * 16u;
          if (B_KFAST == 1u) coopMatLoadNV(fb[j], b_tile, n * BS + kk, BS, true);
          else coopMatLoadNV(fb[j], b_tile, kk * BS + n, BS, false);
        }
        [[unroll]] for (uint i = 0u; i < FM; ++i)
          [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
      }
      barrier();
    }
    if (more) {
      [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
        a_tile[A_KFAST == 0u ? (e / TM) * AS + e % TM : (e / TK) * AS + e % TK] = a_next[r];
      }
      [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
        uint e = lid + r * THREADS;
        b_tile[B_KFAST == 0u ? (e / TN) * BS + e % TN : (e / TK) * BS + e % TK] = b_next[r];
      }
      barrier();
    }
  }
  uint scratch = sg * 256u;
  // One statement per fragment, written out by the code generator: a loop over the fragments
  // around store_fragment's own (rolled) loop was left rolled by spirv-opt, and the run-time
  // index sent the accumulators to local memory (H200: slower than the float32 kernel).
${STORE_FRAGMENTS}
}
