// A dispatch group: the IR ops that become one kernel family invocation (one or more dispatches).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "module/target_limits.h"

namespace vkc::codegen {

struct DispatchGroup {
  // Ops in execution order. For a fused elementwise group the last op produces the result (reshape
  // views between its ops are members too: they are free re-indexings of the same elements); for
  // other families `anchor` is the op whose kernel is used and the rest are its fused prologue /
  // epilogue ops.
  std::vector<ir::Op*> ops;
  ir::Op* anchor = nullptr;         // null for a copy group
  // Fused into the anchor's operand loads (codegen/fusion.h), in execution order: reshape views,
  // pad, reverse, transpose, cast, dequantize and (for pool, reduction and matmul anchors) float
  // elementwise math, each feeding the next or the anchor.
  std::vector<ir::Op*> prologue;
  // Applied to the anchor's result before the store, in execution order: elementwise ops, reshape
  // views and a final quantize; each consumes the previous one's result.
  std::vector<ir::Op*> epilogue;
  std::vector<ir::Value*> inputs;   // values read from outside the group
  std::vector<ir::Value*> outputs;  // values the group writes to memory
  // Copy groups (no ops) copy inputs[0] into the tensor named here: a graph output whose value
  // lives in an input, a constant, or another output.
  std::string copy_to;
  std::string notes;  // fusion decisions (what was fused, what was refused and why), for reports

  std::string describe() const;  // "conv 'c1' + relu" style summary of the ops
};

// Groups the graph's ops into dispatches in execution order. Constants and reshape views
// (expand_shape, collapse_shape, reshape) form no group: they cost no kernel. Chains of
// elementwise ops whose intermediate results have a single use fuse into one group, also across
// reshape views. This overload fuses nothing into conv, matmul, pool or reduction kernels.
std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph);

// As above, and also fuses producers into the operand loads of conv, matmul/gemm, pooling and
// reduction/softmax kernels and consumers into their result stores (codegen/fusion.h,
// docs/fusion.md) where `target` allows it: a fusion that would need more storage buffers than the
// target binds per stage is split (codegen/fusion_budget.h), and the reason goes into the notes.
// `zero_copy` (StoragePlan::zero_copy): slices and concats that name existing bytes form no group
// and nothing fuses through them.
std::vector<DispatchGroup> form_dispatch_groups(const ir::Graph& graph, const TargetLimits& target,
                                                const std::set<const ir::Op*>& zero_copy = {});

// True for ops whose result is a view of their operand's bytes (C-order reshapes).
bool is_view_op(ir::OpKind kind);

}  // namespace vkc::codegen
