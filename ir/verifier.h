// Shape inference and verification.
//
// Every message names the op (kind, node name, location), the operand, the dimension, and what
// was expected versus found, on one line, e.g.
//   conv 'conv3d_1' (model.onnx): filter dim 1 (C/groups) is 2, input channels/groups is 1
#pragma once

#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

// Checks the op's operand count and attributes against its schema (unknown attribute, wrong kind,
// missing required attribute) and returns the result types implied by its operands and attributes.
// The op's own `results` are not consulted. Throws vkc::Error.
std::vector<TensorType> infer_result_types(const Op& op);

// infer_result_types plus a comparison with the op's existing result types.
void verify_op(const Op& op);

// Whole-graph check: every operand is a graph input or the result of an earlier op (SSA order),
// outputs refer to live values, value ids are unique, and verify_op holds for every op.
void verify_graph(const Graph& graph);

}  // namespace vkc::ir
