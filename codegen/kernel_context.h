// What every kernel emitter gets: the target, the storage plan and planner overrides.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/dispatch_group.h"
#include "codegen/kernel.h"
#include "codegen/storage_plan.h"
#include "module/target_limits.h"

namespace vkc::codegen {

struct KernelContext {
  const TargetLimits& target;
  const ir::Graph& graph;
  const StoragePlan& storage;
  // Strategy overrides by op name ("conv" -> "direct"), used by tests to force each strategy;
  // an emitter that cannot honour one throws vkc::Error naming the op and the strategy.
  std::map<std::string, std::string> forced_strategy;
  // float32 matrix products on the tensor cores as float16 pieces (Precision::fp16x3).
  bool fp32_products_in_fp16_pieces = false;

  const std::string& tensor(const ir::Value* v) const { return storage.tensor_of.at(v); }
  std::string forced(const ir::Op& op) const {
    auto it = forced_strategy.find(std::string(ir::op_name(op.kind)));
    return it == forced_strategy.end() ? "" : it->second;
  }
};

// Emits the dispatches for one group. Scratch tensors the kernels bind are appended to `scratch`.
using KernelEmitter = std::vector<EmittedKernel> (*)(const DispatchGroup& group,
                                                     const KernelContext& context,
                                                     std::vector<ScratchTensor>& scratch);

// The emitter for a group's anchor op, or vkc::Error "<op>: not supported on the GPU yet".
KernelEmitter find_kernel_emitter(const DispatchGroup& group);

}  // namespace vkc::codegen
