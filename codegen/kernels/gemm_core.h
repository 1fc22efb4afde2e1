// Specializes shaders/gemm_core.glsl, the tiled GEMM main loop that the conv GEMM kernels
// (conv_gemm.cpp) and the contraction kernel (contraction.cpp) share.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/gemm_tiles.h"

namespace vkc::codegen::kernels {

struct GemmCoreShape {
  SimtTile tile;  // tile, register block and stages, as the planner chose them
  // Staging order per operand: true walks K fastest in quads of 4 (the operand's k is contiguous
  // in memory), false walks M (N) fastest.
  bool a_kfast = false, b_kfast = false;
  // B is staged N-fast in quads of 4 columns of one k (not with b_kfast): the kernel provides
  // b_load4 (B[k, n..n+3] in one 16-byte load; shaders/gemm_core.glsl) instead of b_begin/b_load,
  // and each quad goes to workgroup memory as one 16-byte store.
  bool b_vec = false;
  // A is staged K-fast (needs a_kfast) in blocks of 4 rows x 4 k: the kernel provides a_load4
  // (A[m, k..k+3] in one 16-byte load) instead of a_begin/a_load, and each block goes to
  // workgroup memory as four 16-byte stores of 4 rows each (stages_in_4x4_blocks).
  bool a_4x4 = false;
  // The multiply loop over the TK slice runs kk_unroll steps per iteration (1: rolled; tk: fully
  // unrolled). Unrolled is faster for plain matrix loads; a conv's long gather code made the
  // unrolled body too large (measured; see conv_gemm_core_shape).
  uint32_t kk_unroll = 0;  // 0: tk
  // The kernel defines `void k_slice(uint k0)`, called once per K slice before its loads, where
  // state shared by the slice's loads is computed once (a conv's tap; conv_gemm.cpp).
  bool slice_hook = false;
  // A's values are fetched raw (`float a_load_raw(uint m, uint k)`) and finished where they are
  // stored to workgroup memory (`float a_finish(uint m, uint k, float raw)`), after the multiply
  // loop that the fetch overlaps: a fused prologue's arithmetic (a pre-activation BN + ReLU) then
  // no longer waits for the global load in front of that loop. M-fast staging only (a_finish
  // relies on the invocation's one staging row: the kernel's row state is still that row's).
  bool a_finish = false;
  // Results go out with neighbouring invocations on neighbouring rows of the tile (through
  // workgroup memory, one register column at a time), for results whose M is contiguous in
  // memory; else neighbouring invocations store neighbouring columns. Needs the tile's TX columns
  // of TM rows to fit the A tiles' space (store_m_fast_fits).
  bool store_m_fast = false;
  bool store_m_fast_fits() const;
  // Results leave in 16-byte stores of 4 consecutive rows (rows: an NCHW conv's output positions)
  // or columns (a row-major matrix) that an invocation holds, through the kernel's store_c4 (one
  // epilogue call, its side operands read 16 bytes at a time: codegen/fusion.h, store_result4).
  // Needs register blocks of 4 rows (columns); replaces store_m_fast.
  enum class Quads { off, rows, columns };
  Quads store_quads = Quads::off;
  uint32_t threads() const { return tile.invocations(); }
  // Whether an operand with `outer` rows (TM for A, TN for B) can be staged in that order: every
  // invocation stages the same number of elements (quads), so the staging loops need no bounds
  // test, and scalar outer-fast staging keeps each invocation on one row (THREADS % outer == 0).
  bool stages_evenly(uint32_t outer, bool kfast, bool vec = false) const;
  // Whether A's TM x TK slice splits into 4x4 blocks, the same number for every invocation.
  bool stages_in_4x4_blocks() const;
  // Whether spirv-opt's performance passes should run on the loop (EmittedKernel::optimize_spirv).
  // Not for register blocks above 64 accumulators: NVIDIA's compiler did better on the plain
  // glslang output (H200, session 27: the seed conv's 16x8 block 2.49 -> 2.32 ms, matmul 4096^3
  // 3.77 -> 3.74; session 24: ResNet's 3x3 with its 8x8 block 8% slower without the passes, and the
  // attention kernel 3.5-6x slower without their unrolling, so they stay for everything else).
  bool spirv_opt() const { return tile.rm * tile.rn <= 64; }
};

// The GLSL text for the template's ${GEMM_CORE}. Throws vkc::Error ("internal: ...") for a shape
// the loop does not support: tiles not multiples of 4, register blocks that do not divide the
// tile, a staging order that does not stage evenly (stages_evenly, stages_in_4x4_blocks), kk_unroll not dividing TK, or
// stages other than 1 and 2.
std::string gemm_core_glsl(const GemmCoreShape& s);

// Whether the loop supports `s` (gemm_core_glsl would not throw); planners keep only such tiles.
bool gemm_core_supports(const GemmCoreShape& s);

}  // namespace vkc::codegen::kernels
