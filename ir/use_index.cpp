#include "ir/use_index.h"

namespace vkc::ir {

UseIndex::UseIndex(const Graph& graph) {
  for (Op* op : graph.ops())
    for (const Value* operand : op->operands) users_[operand].push_back(op);
  for (const GraphOutput& out : graph.outputs()) outputs_.insert(out.value);
}

const std::vector<Op*>& UseIndex::users(const Value* v) const {
  static const std::vector<Op*> kNone;
  auto it = users_.find(v);
  return it == users_.end() ? kNone : it->second;
}

}  // namespace vkc::ir
