// How the GEMM loops read their operands (codegen/kernels/contraction.cpp): the GLSL operand
// functions that shaders/gemm_core.glsl and gemm_coopmat.glsl call (a_begin / a_load, a_load4,
// b_load4, a_load8 / b_load8, ...), and the checks that decide which form an operand can take:
// one element through its fused prologue, 16-byte quads of f32 (staging4), runs of 8 halves
// (staging8), or in place under index maps through their composed strides (lhs_view).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "codegen/dispatch_group.h"
#include "codegen/strided_view.h"
#include "ir/matmul_geometry.h"

namespace vkc::codegen::kernels {

// a_load / b_load for the FMA and one-element tensor-core loops: one element through the
// operands' fused prologues (a_at / b_at). abase / bbase are the batch entry's offsets.
std::string scalar_operand_fns(int64_t M, int64_t N, int64_t K, const ir::MatrixView& a, const ir::MatrixView& b);

// How the tensor-core loop's 16-byte staging (VEC 8) gets an operand's 8 float16 values (or, for
// its float16 pieces, 8 float32 values) along its contiguous dim: read in place, gathered through
// the prologue, or not at all (staging8).
enum class Staging8 { none, in_place, gathered };
Staging8 staging8(const DispatchGroup& group, const ir::MatrixView& o, const ir::Value* v);

// a_load8 / b_load8 for the tensor-core loop where staging8 allows.
std::string vec8_operand_fns(int64_t M, int64_t N, int64_t K, const ir::MatrixView& a, const ir::MatrixView& b,
                             Staging8 as, Staging8 bs);
// The float32 operands' functions for the loop's float16 pieces (CoopTile::split): a_load8f /
// b_load8f (8 float32 values, two 16-byte loads in place) and a_elem / b_elem (one element, for
// its float32 fallback).
std::string split_operand_fns(int64_t M, int64_t N, int64_t K, const ir::MatrixView& a, const ir::MatrixView& b,
                              Staging8 as, Staging8 bs);

// Whether the FMA loop can stage operand `o` four float32 columns per 16-byte load in place.
bool staging4(const DispatchGroup& group, const ir::MatrixView& o, const ir::Value* v);

// A row-major f32 lhs whose fused prologue is index maps only, read in place through their
// composed strides.
struct LhsView {
  const ir::Value* source;
  StridedView view;
  // Each row starts 16 bytes aligned and its k are contiguous: 4x4 blocks (a_load4) apply.
  bool quads(int64_t K) const;
};
std::optional<LhsView> lhs_view(const DispatchGroup& group, const ir::MatrixView& a, const ir::Value* av);

// The FMA loop's operand functions: one-element loads, with a_load4 where `a4` (4x4 blocks of the
// lhs, from the uvec4 view a4, or through `lv` where given) and b_load4 where `b4` (quads of the
// rhs from the uvec4 view b4).
std::string operand_fns(int64_t M, int64_t N, int64_t K, const ir::MatrixView& a, const ir::MatrixView& b, bool a4,
                        bool b4, const std::optional<LhsView>& lv);

}  // namespace vkc::codegen::kernels
