// The fp16 tensor-core GEMM loop (shaders/gemm_coopmat.glsl): what it supports and its
// specialization (its tiles are planned by codegen/gemm_planner.h). Used by the conv strategy "implicit_gemm_coopmat" (conv_planner.cpp) and the contraction
// strategy "coopmat" (contraction.cpp) for float16 operands on targets with cooperative matrices
// (TargetLimits::cooperative_matrix_khr or _nv). Products accumulate in float32.
//
// Operands are staged either one element per call (any operand, through its fused prologue) or 8
// float16 values per 16-byte load (vec 8: operands whose fast dim is contiguous and a multiple
// of 8; the conv kernel packs its input and filter into such a form first). On the H200 the
// one-element form was no faster than the FMA kernels (bench/RESULTS.md, Run I: its staging
// arithmetic, not the MMAs, bounded it); the 16-byte form is what makes tensor cores pay.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/gemm_tiles.h"
#include "module/target_limits.h"

namespace vkc::codegen::kernels {

// Why the target cannot run the loop at all ("" when it can): cooperative matrices, float16
// arithmetic, and one subgroup size, fixed or pinned (the loop's staging assumes it).
std::string coopmat_misfit(const TargetLimits& t);

// The subgroup size the loop is planned for (CoopTile::subgroup); 0: none. The target's one size,
// or where it varies and can be pinned (TargetLimits::subgroup_size_control) its smallest: wave32
// on AMD RDNA3, the width its WMMA instructions are defined for (a wave64 WMMA runs as two
// halves), and the size NVIDIA's tiles were measured with, so one tile table serves both; the
// compiler then records the pin (DispatchDesc::required_subgroup_size).
uint32_t coopmat_subgroup_size(const TargetLimits& t);

// The int8 products the int8 loop (shaders/integer_coopmat.glsl) runs, in the order it prefers
// them: NVIDIA's 16x16x32 (twice the K per instruction), else AMD RDNA3/RDNA4's 16x16x16 (WMMA).
inline constexpr const char* kCoopMatInt8Shapes[] = {"16x16x32 i8*i8+i32", "16x16x16 i8*i8+i32"};
// The first of kCoopMatInt8Shapes the target lists (a profile's or the live device's KHR query;
// "" where it lists none).
std::string coopmat_int8_shape(const TargetLimits& t);
// Its fragment (M, N, K); 16x16x32 where the target lists none, for plans that are refused anyway.
std::array<uint32_t, 3> coopmat_int8_fragment(const TargetLimits& t);

// Why the target cannot run the int8 loop: cooperative matrices with one of kCoopMatInt8Shapes
// listed, 8-bit arithmetic and storage, one subgroup size ("" when it can).
std::string coopmat_int8_misfit(const TargetLimits& t);

// Whether the loop can run `tile` (every invocation stages the same number of elements, subgroup
// tiles of whole fragments); the planner (codegen/gemm_planner.h) keeps only such tiles.
bool coop_loop_supports(const CoopTile& tile);

// The fragment shape (M, N, K) the loop runs on `t` (TargetLimits::coopmat_loop_shape; 16x16x16
// where the target has none, for plans that are refused anyway).
std::array<uint32_t, 3> coopmat_fragment(const TargetLimits& t);

// Whether kernels for `t` use VK_KHR_cooperative_matrix: wherever the target offers it (AMD and
// Intel have only KHR); VK_NV_cooperative_matrix only where KHR is missing.
bool coopmat_uses_khr(const TargetLimits& t);

// The GLSL for a kernel's ${GEMM_CORE}; store_m_fast: results leave walking M fastest. for_khr:
// the form codegen/spirv_coopmat_khr.h rewrites (B's matrices of their own type); a kernel that
// uses it sets EmittedKernel::cooperative_matrix_khr so that its SPIR-V is rewritten.
// a_rows: A is staged through the kernel's row hooks (shaders/gemm_coopmat.glsl, A_ROWS), whose
// arrays hold coop_a_rounds(tile) rows.
// quads: results leave four consecutive columns (N) at a time through the kernel's
// `void store_c4(uint m, uint n, vec4 v)` (columns n..n+3 of row m), where coop_quads_supported.
// register_sets: coop_register_sets; lagged: coop_lagged.
std::string gemm_coopmat_glsl(const CoopTile& tile, bool store_m_fast, bool for_khr, bool a_rows = false,
                              bool quads = false, uint32_t register_sets = 1, bool lagged = false);
// Register sets for staged slices (shaders/gemm_coopmat.glsl, PREFETCH): 2, so that a slice's loads
// are issued two multiplies before their stash, for NVIDIA's single-copy 16-byte-staged tiles of at
// least 256 invocations (one workgroup per SM: nothing else hides the loads); else 1. H200, session
// 31: the seed conv 0.604 -> 0.522 ms, ggml's 16x256x19x19 conv 0.689 -> 0.664, ResNet-50 fp16 b32
// 3.46 -> 3.37; but the 8x256x56x56 3x3 conv 0.181 -> 0.192, and tiles of 128 invocations lost
// (ggml's 1x32x1536x1536 conv 0.99 -> 1.06; the 2x2 matmul tile ran out of registers, 0.47 -> 0.64).
uint32_t coop_register_sets(const CoopTile& tile, const TargetLimits& t);
// Whether the loop multiplies each step's fragments one step late (the shader's LAG): float16
// operands on NVIDIA's tiles of at least 128 x 128.
bool coop_lagged(const CoopTile& tile, const TargetLimits& t);
// Whether a lane's share of each fragment can leave as whole runs of 4 columns: FRAG_N a multiple
// of 4, and a subgroup covering whole rows of such runs in whole passes.
bool coop_quads_supported(const CoopTile& tile);
// The A rows each invocation stages per K slice (A_ROUNDS in the fp16 and int8 loops).
inline uint32_t coop_a_rounds(const CoopTile& c) { return c.tm * c.tk / c.invocations() / c.vec; }

// The placeholders the fp16 and int8 loops share (tile, subgroups, staging order, B's scope for the
// KHR rewrite, one store statement per accumulator fragment); each loop adds its own.
std::vector<std::pair<std::string, std::string>> coopmat_loop_values(const CoopTile& tile, bool store_m_fast, bool for_khr,
                                                                     bool quads = false);


}  // namespace vkc::codegen::kernels
