// What a GEMM tile is, for the two loops that run one: the FMA loop (shaders/gemm_core.glsl, a
// SimtTile) and the tensor-core loop (shaders/gemm_coopmat.glsl, a CoopTile). The planner
// (codegen/gemm_planner.h) chooses one of them; kernels read the variant.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace vkc::codegen {

// FMA tile: a TM x TN output tile per workgroup, K staged TK at a time in `stages` copies of
// workgroup memory (two copies: slice t is staged while t - 1 is multiplied), each invocation
// owning an RM x RN block of accumulators.
struct SimtTile {
  uint32_t tm = 0, tn = 0, tk = 0, rm = 0, rn = 0;
  uint32_t stages = 1;
  uint32_t invocations() const { return rm == 0 || rn == 0 ? 0 : (tm / rm) * (tn / rn); }
  // Float32 A (TK x TM) and B (TK x TN) slices, per stage: exactly the shader's shared arrays.
  uint32_t workgroup_memory_bytes() const { return 4 * tk * (tm + tn) * stages; }
  std::string str() const;
  bool operator==(const SimtTile&) const = default;
};

// Tensor-core tile: a TM x TN output tile per workgroup of WM x WN subgroups, K staged TK at a
// time as float16 with float32 sums, or (vec 16) as int8 with int32 sums
// (shaders/integer_coopmat.glsl, codegen/kernels/integer_coopmat.h).
struct CoopTile {
  uint32_t tm = 0, tn = 0, tk = 0, wm = 0, wn = 0;
  uint32_t subgroup = 0;  // the target's (fixed) subgroup size
  // Staging order per operand: K-fast when the operand's k is contiguous in memory.
  bool a_kfast = false, b_kfast = false;
  // Values per staged load: float16 1 (a_load / b_load) or 8 (a_load8 / b_load8, a uvec4); 16:
  // the int8 loop (a_load16 / b_load16, a uvec4 of 16 int8).
  uint32_t vec = 1;
  bool int8() const { return vec == 16; }
  // The loop's cooperative-matrix product: fm x fk times fk x fn. fp16 (TargetLimits::
  // coopmat_loop_shape): 16x16x16 on NVIDIA and AMD, 8x16x16 on Intel Xe2, 8x8x16 on Alchemist.
  // int8 (kernels::coopmat_int8_fragment): 16x16x32 on NVIDIA, 16x16x16 on AMD RDNA3/RDNA4.
  uint32_t fm = 16, fn = 16, fk = 16;
  // Copies of the operand tiles in workgroup memory (fp16 loop only): 1, or 2 so that slice t + 1 is
  // written while slice t is read, one barrier per slice instead of two.
  uint32_t stages = 1;
  // float32 operands on the fp16 loop (vec 8, one stage): each value staged as two float16 pieces,
  // hi (x rounded to 11 significant bits) and lo = f16(x - hi), and the products hi*hi + hi*lo +
  // lo*hi summed in float32
  // (shaders/gemm_coopmat.glsl, SPLIT): twice the operand tiles, three multiplies per fragment.
  bool split = false;
  // Whether the fp16 loop's accumulator scratch (one float fm x fn fragment per subgroup) reuses
  // A's tiles after the last slice: with 16-byte staging, where they are large enough.
  bool c_scratch_in_a_tiles() const;
  // The fragment the plans' text leaves unsaid: 16x16x16 for fp16, 16x16x32 for int8.
  bool default_fragment() const { return fm == 16 && fn == 16 && fk == (int8() ? 32u : 16u); }
  uint32_t invocations() const { return wm * wn * subgroup; }
  // Both operand tiles (rows padded by 16 bytes) per stage, twice with `split` (plus its 4-byte
  // range flag), and one 32-bit fm x fn scratch per subgroup unless it lies in A's tiles: exactly
  // the shader's shared arrays.
  uint32_t workgroup_memory_bytes() const;
  std::string str() const;
  bool operator==(const CoopTile&) const = default;
};

using GemmTile = std::variant<SimtTile, CoopTile>;

// The facts every kernel and planner needs of either kind.
uint32_t tile_m(const GemmTile& t);
uint32_t tile_n(const GemmTile& t);
uint32_t tile_k(const GemmTile& t);
uint32_t invocations(const GemmTile& t);
uint32_t workgroup_memory_bytes(const GemmTile& t);
std::string describe(const GemmTile& t);
inline bool is_coop(const GemmTile& t) { return std::holds_alternative<CoopTile>(t); }

}  // namespace vkc::codegen
