// The int8 tensor-core GEMM main loop (VK_NV_cooperative_matrix with
// GL_NV_integer_cooperative_matrix; rewritten to KHR by codegen/spirv_coopmat_khr.h), the GEMM core
// of the conv_integer / matmul_integer kernels of codegen/kernels/integer_coopmat.cpp. The same
// structure as the fp16 loop (gemm_coopmat.glsl, 16-byte staging): a workgroup of WM x WN
// subgroups computes a TM x TN tile of C = A[M, K] x B[K, N] with exact int32 sums; each subgroup
// owns (TM / WM) x (TN / WN) of it as 16 x 16 int32 accumulator fragments and multiplies signed
// int8 fragments of A (16 x FK) and B (FK x 16) loaded from workgroup memory: FK is the target's
// K (32 on NVIDIA's 16x16x32, 16 on AMD RDNA3/RDNA4's 16x16x16, codegen/kernels/gemm_coopmat.h).
// Fragment offsets and strides count 16-byte units, so both K steps keep them whole.
//
// The kernel hands 16 signed int8 values packed in a uvec4 (one 16-byte load) from
// a_load16(m, k) / b_load16(n, k): 16 consecutive k from k for a K-fast operand, else 16
// consecutive rows (columns). Slice t is fetched into registers while slice t - 1 is multiplied.
// Workgroup-memory rows are padded by 16 bytes, which keeps every fragment's start and stride
// 16-byte aligned and spreads a fragment's rows over the banks. The accumulators leave through a
// per-subgroup 16 x 16 int scratch so that store_c (zero-point correction, bias, requantization,
// any output layout) sees one element at a time, walking M or N fastest (STORE_M_FAST;
// store_fragment, written by codegen/kernels/gemm_coopmat.cpp for both loops).
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

${B_SCOPE_DECLARATION}
const uint TM = ${TM}u, TN = ${TN}u, TK = ${TK}u, WM = ${WM}u, WN = ${WN}u, SG = ${SG}u, FK = ${FRAG_K}u;
const uint THREADS = WM * WN * SG;
const uint FM = TM / WM / 16u, FN = TN / WN / 16u;  // fragments per subgroup along M and N
const uint A_KFAST = ${A_KFAST}u, B_KFAST = ${B_KFAST}u, STORE_M_FAST = ${STORE_M_FAST}u;
// A K-fast operand is staged [row][k] (stride TK + 16 bytes), else [k][row] (TM + 16 or TN + 16).
const uint AS = A_KFAST == 1u ? TK + 16u : TM + 16u, BS = B_KFAST == 1u ? TK + 16u : TN + 16u;
// Staged uvec4 per invocation per K slice, and per tile row along the fast dim.
const uint A_ROUNDS = TM * TK / THREADS / 16u, B_ROUNDS = TN * TK / THREADS / 16u;
const uint A_RUN = (A_KFAST == 1u ? TK : TM) / 16u, B_RUN = (B_KFAST == 1u ? TK : TN) / 16u;

shared uvec4 a_tile[(A_KFAST == 1u ? TM * AS : TK * AS) / 16u];
shared uvec4 b_tile[(B_KFAST == 1u ? TN * BS : TK * BS) / 16u];
shared int c_tile[WM * WN * 256u];
#define STORE_SCRATCH(m) coopMatStoreNV(m, c_tile, scratch, 16u, false)

int scratch_at(uint i) { return c_tile[i]; }
${STORE_FRAGMENT_FN}
// The tile coordinates of staged run e: (row, k) along the operand's fast dim, 16 values from it.
uvec2 staged_at(uint e, uint run, uint kfast) {
  uint slow = e / run, fast = (e % run) * 16u;
  return kfast == 1u ? uvec2(slow, fast) : uvec2(fast, slow);
}

void gemm_tile(uint m0, uint n0, uint k_begin, uint k_end) {
  uint lid = gl_LocalInvocationIndex;
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint row0 = (sg / WN) * FM * 16u, col0 = (sg % WN) * FN * 16u;  // the subgroup's corner in the tile
  icoopmatNV<32, 3, 16, 16> acc[FM][FN];
  [[unroll]] for (uint i = 0u; i < FM; ++i)
    [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = icoopmatNV<32, 3, 16, 16>(0);
  uvec4 a_next[A_ROUNDS];
  uvec4 b_next[B_ROUNDS];
#if ${A_ROWS} == 1
  // The kernel's row hooks (A_ROWS, as in gemm_coopmat.glsl): each staged A row's position
  // decoded once per tile, the slice's tap once per slice.
  [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) a_row_begin(r, m0 + staged_at(lid + r * THREADS, A_RUN, A_KFAST).x);
#endif
  for (uint k0 = k_begin; k0 < k_end + TK; k0 += TK) {
    bool more = k0 < k_end;
    if (more) {
#if ${A_ROWS} == 1
      k_slice(k0);
#endif
      [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
        uvec2 at = staged_at(lid + r * THREADS, A_RUN, A_KFAST);
#if ${A_ROWS} == 1
        a_next[r] = a_load16_row(r, k0 + at.y);
#else
        a_next[r] = a_load16(m0 + at.x, k0 + at.y);
#endif
      }
      [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
        uvec2 at = staged_at(lid + r * THREADS, B_RUN, B_KFAST);
        b_next[r] = b_load16(n0 + at.x, k0 + at.y);
      }
    }
    if (k0 > k_begin) {
      [[unroll]] for (uint kk = 0u; kk < TK; kk += FK) {
        icoopmatNV<8, 3, 16, FK> fa[FM];
        icoopmatNV<8, ${B_SCOPE}, FK, 16> fb[FN];
        // Offsets and strides count uvec4 (16 int8 values each).
        [[unroll]] for (uint i = 0u; i < FM; ++i) {
          uint m = row0 + i * 16u;
          if (A_KFAST == 1u) coopMatLoadNV(fa[i], a_tile, (m * AS + kk) / 16u, AS / 16u, false);
          else coopMatLoadNV(fa[i], a_tile, (kk * AS + m) / 16u, AS / 16u, true);
        }
        [[unroll]] for (uint j = 0u; j < FN; ++j) {
          uint n = col0 + j * 16u;
          if (B_KFAST == 1u) coopMatLoadNV(fb[j], b_tile, (n * BS + kk) / 16u, BS / 16u, true);
          else coopMatLoadNV(fb[j], b_tile, (kk * BS + n) / 16u, BS / 16u, false);
        }
        [[unroll]] for (uint i = 0u; i < FM; ++i)
          [[unroll]] for (uint j = 0u; j < FN; ++j) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
      }
      barrier();
    }
    if (more) {
      [[unroll]] for (uint r = 0u; r < A_ROUNDS; ++r) {
        uvec2 at = staged_at(lid + r * THREADS, A_RUN, A_KFAST);
        a_tile[(A_KFAST == 1u ? at.x * AS + at.y : at.y * AS + at.x) / 16u] = a_next[r];
      }
      [[unroll]] for (uint r = 0u; r < B_ROUNDS; ++r) {
        uvec2 at = staged_at(lid + r * THREADS, B_RUN, B_KFAST);
        b_tile[(B_KFAST == 1u ? at.x * BS + at.y : at.y * BS + at.x) / 16u] = b_next[r];
      }
      barrier();
    }
  }
  uint scratch = sg * 256u;
  // One statement per fragment (constant accumulator indices; gemm_coopmat.glsl says why).
${STORE_FRAGMENTS}
}
