// GLSL expressions for elementwise ops, shared by the fused elementwise kernel and the fused
// prologues / epilogues of conv and matmul kernels (codegen/fusion.h), so an op means the same
// thing wherever it is fused.
#pragma once

#include <set>
#include <string>

#include "ir/graph.h"

namespace vkc::codegen {

// cast between compute types (docs/ops.md, cast: float -> int saturates, NaN -> 0).
std::string cast_expr(const std::string& x, DType from, DType to);
// Any unary/binary/ternary elementwise op: `args` are the operand expressions in order. Each op's
// expression is its row in codegen/op_codegen.cpp.
std::string elementwise_expr(const ir::Op& op, const std::vector<std::string>& args);

// Index of an operand of shape `in` broadcast (numpy) against `out`, whose C-order coordinates are
// the GLSL uints `<prefix>0..`: size-1 dims contribute nothing.
std::string broadcast_index(const Shape& in, const Shape& out, const std::string& prefix);

// The helper functions (vkc_max, vkc_sigmoid, ...) for kernels computing in `types`: the int64
// overloads only when int64 is among them, since they need the int64 extension.
std::string elementwise_math(const std::set<DType>& types);

// A constant with one element is baked into the GLSL as a literal instead of taking a binding.
bool inlined_as_literal(const ir::Value* v);
std::string literal_of(const ir::Value* v);  // its value in the compute type

}  // namespace vkc::codegen
