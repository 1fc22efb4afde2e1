// Helpers for the verifier tests: build a one-op graph from operand types and attributes, and
// return either the inferred result types or the exact error message.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace vkc::ir::test {

inline TensorType f32(Shape s) { return TensorType{DType::f32, std::move(s)}; }
inline TensorType typed(DType t, Shape s) { return TensorType{t, std::move(s)}; }

// Result types of one op built with Graph::add_op (which runs the shape rules).
inline std::vector<TensorType> infer_all(OpKind kind, const std::vector<TensorType>& operands,
                                         AttrMap attrs = {}) {
  Graph g;
  std::vector<Value*> vals;
  for (size_t i = 0; i < operands.size(); ++i) vals.push_back(g.add_input(cat("x", i), operands[i]));
  Op* op = g.add_op(kind, vals, std::move(attrs), "n");
  std::vector<TensorType> out;
  for (Value* r : op->results) out.push_back(r->type);
  return out;
}

inline TensorType infer(OpKind kind, const std::vector<TensorType>& operands, AttrMap attrs = {}) {
  std::vector<TensorType> all = infer_all(kind, operands, std::move(attrs));
  return all.size() == 1 ? all[0] : TensorType{DType::boolean, {-999}};
}

// The vkc::Error message add_op throws, or "<no error>" (so EXPECT_EQ shows what happened).
inline std::string error_of(OpKind kind, const std::vector<TensorType>& operands, AttrMap attrs = {}) {
  try {
    infer_all(kind, operands, std::move(attrs));
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

using Ints = std::vector<int64_t>;

}  // namespace vkc::ir::test
