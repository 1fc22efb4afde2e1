// The reference interpreter: runs any graph on the CPU with float64 accumulation.
//
// It is the oracle for every differential test and for `vk-run --check`: its semantics (padding,
// rounding, tie-breaking, NaN order) are the ones docs/ops.md documents and the GPU kernels match.
// Each op's result is rounded to its element type, as a kernel would store it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

// Inputs by graph-input name; returns outputs by graph-output name. Throws vkc::Error on a
// missing/extra input or a dtype/shape mismatch, naming the input.
std::map<std::string, HostTensor> interpret(const Graph& graph,
                                            const std::map<std::string, HostTensor>& inputs);

// Evaluates one op on concrete operand values (used by constant folding).
std::vector<HostTensor> evaluate_op(const Op& op, const std::vector<const HostTensor*>& operands);

}  // namespace vkc::ir
