// A dispatch group: the IR ops that become one kernel family invocation (one or more dispatches).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace vkc::codegen {

struct DispatchGroup {
  // Ops in execution order. For a fused elementwise group the last op produces the result; for
  // other families `anchor` is the op whose kernel is used and the rest are fused prologue /
  // epilogue ops.
  std::vector<ir::Op*> ops;
  ir::Op* anchor = nullptr;         // null for a copy group
  std::vector<ir::Value*> inputs;   // values read from outside the group
  std::vector<ir::Value*> outputs;  // values the group writes to memory
  // Copy groups (no ops) copy inputs[0] into the tensor named here: a graph output whose value
  // lives in an input, a constant, or another output.
  std::string copy_to;
  std::string notes;  // fusion decisions, for reports

  std::string describe() const;  // "conv 'c1' + relu" style summary of the ops
};

// Groups the graph's ops into dispatches in execution order. Constants and reshape views
// (expand_shape, collapse_shape, reshape) form no group: they cost no kernel. Chains of
// elementwise ops whose intermediate results have a single use fuse into one group.
std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph);

// True for ops whose result is a view of their operand's bytes (C-order reshapes).
bool is_view_op(ir::OpKind kind);

}  // namespace vkc::codegen
