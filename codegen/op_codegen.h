// The codegen layer's per-op facts: which kernel emits an op, how it fuses, what its GLSL
// expression is and how often its kernel rereads operands.
//
// The table lives in codegen/op_codegen.cpp, one row per op; it is checked at compile time to cover
// every op of ir/ops.def, so a new op cannot reach the GPU path by falling into a default.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_context.h"
#include "ir/graph.h"

namespace vkc::codegen {

// Kernels that take fused prologues and epilogues (codegen/fusion.h), grouped by how they fuse.
enum class FusionAnchor { None, Conv, Contraction, Pool, Reduction, ArgReduction, Attention };

// How an op fuses into an anchor kernel's operand read: as which index map or per-element
// conversion (prologue_fn in codegen/fusion.cpp has the code for each; FloatCast fuses only casts
// to a float type).
enum class Prologue { None, View, Reverse, Transpose, Pad, Slice, Broadcast, FloatCast, Dequantize };

// Whether an op fuses into an anchor kernel's result store (epilogue).
enum class Epilogue { None, Always, FloatResult };

// How often an anchor kernel reads each element of its operands (codegen/fusion_budget.h).
enum class OperandReads { Once, PoolWindow, SoftmaxPasses, Contraction, ConvInput, AttentionTiles };

// The GLSL value of an elementwise op from its operand expressions, computed in the compute type
// of `t` (the op's result type).
using GlslExpr = std::string (*)(const ir::Op& op, const std::vector<std::string>& args, DType t);

struct OpCodegen {
  // nullptr: the op has no kernel of its own (host-only): constants are uploaded, reshape views
  // alias their operand's storage.
  KernelEmitter emitter = nullptr;
  // Unary, binary and ternary elementwise ops: they chain into one elementwise kernel.
  GlslExpr glsl = nullptr;
  // Per-element math (not cast or select) that fuses into a prologue while the anchor's rereads
  // stay cheap (codegen/fusion_budget.h).
  bool prologue_math = false;
  Prologue prologue = Prologue::None;
  Epilogue epilogue = Epilogue::None;
  FusionAnchor anchor = FusionAnchor::None;
  OperandReads reads = OperandReads::Once;
};

const OpCodegen& op_codegen(ir::OpKind kind);

}  // namespace vkc::codegen
