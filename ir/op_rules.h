// The IR's per-op facts: each op's shape rule (verifier) and reference semantics (interpreter).
//
// Internal to ir/. The table lives in ir/op_rules.cpp, one row per op; it is checked at compile time
// to cover every op of ir/ops.def, so a new op cannot verify or evaluate by falling into a default.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

using ShapeRule = std::vector<TensorType> (*)(const Op& op);
using Reference = std::vector<HostTensor> (*)(const Op& op, const std::vector<const HostTensor*>& operands,
                                              const std::vector<TensorType>& result_types);

// Per-element semantics of the unary and binary ops (defined in ir/op_rules.cpp); empty for the
// rest.
struct ElementwiseMath {
  double (*unary)(const Op& op, double x) = nullptr;
  int64_t (*unary_exact)(int64_t x) = nullptr;  // integer operands: exact, else through double
  bool signed_ints = false;                     // the unary op accepts signed integer operands
  double (*binary)(double a, double b) = nullptr;
  int64_t (*binary_exact)(int64_t a, int64_t b) = nullptr;
};

struct OpRules {
  ShapeRule shape = nullptr;
  Reference reference = nullptr;
  ElementwiseMath math{};
};

const OpRules& op_rules(OpKind kind);

}  // namespace vkc::ir
