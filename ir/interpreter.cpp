// The reference interpreter's driver: input checks, the per-op reference (ir/op_rules.cpp) and the
// graph walk.
#include "ir/interpreter.h"

#include <unordered_map>

#include "ir/interpreter_ops.h"
#include "ir/op_rules.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

using namespace interp;

std::string tensor_str(const HostTensor& t) {
  return TensorType{t.dtype(), t.shape()}.str();
}

// Result types as the verifier infers them. They are always re-inferred (not just read from the
// op): the evaluation code trusts them for indexing, so an op whose stored result types are stale
// or wrong (e.g. parsed but not yet verified) must fail here with a message, not read out of bounds.
ResultTypes result_types(const Op& op) {
  ResultTypes inferred = infer_result_types(op);
  if (op.results.empty()) return inferred;  // an op built by hand, without result values
  if (op.results.size() != inferred.size())
    fail(op, "has ", op.results.size(), " results, the verifier infers ", inferred.size());
  for (size_t i = 0; i < inferred.size(); ++i) {
    if (op.results[i] == nullptr) fail(op, "result ", i, " is null");
    if (op.results[i]->type != inferred[i])
      fail(op, "result ", i, " has type ", op.results[i]->type.str(), ", the verifier infers ",
           inferred[i].str());
  }
  return inferred;
}

}  // namespace

std::vector<HostTensor> evaluate_op(const Op& op, const std::vector<const HostTensor*>& operands) {
  if (int64_t(operands.size()) != op.num_operands())
    fail(op, "evaluated with ", operands.size(), " operand values, the op has ", op.num_operands());
  for (int i = 0; i < op.num_operands(); ++i) {
    const HostTensor* t = operands[size_t(i)];
    if (t == nullptr) fail(op, op.operand_label(i), " value is null");
    const Value* v = op.operand(i);
    if (v != nullptr && (v->type.dtype != t->dtype() || v->type.shape != t->shape()))
      fail(op, op.operand_label(i), " is ", v->type.str(), " but its value is ", tensor_str(*t));
  }
  ResultTypes types = result_types(op);
  Results results = op_rules(op.kind).reference(op, operands, types);
  if (results.size() != types.size())
    fail(op, "interpreter produced ", results.size(), " results, expected ", types.size());
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].dtype() != types[i].dtype || results[i].shape() != types[i].shape)
      fail(op, "interpreter produced result ", i, " as ", tensor_str(results[i]), ", expected ",
           types[i].str());
  return results;
}

std::map<std::string, HostTensor> interpret(const Graph& graph,
                                            const std::map<std::string, HostTensor>& inputs) {
  std::unordered_map<const Value*, HostTensor> values;
  for (const Value* in : graph.inputs()) {
    auto it = inputs.find(in->name);
    if (it == inputs.end())
      throw Error(cat("graph '", graph.name, "': missing input '", in->name, "' (expected ",
                      in->type.str(), ")"));
    const HostTensor& t = it->second;
    if (t.dtype() != in->type.dtype || t.shape() != in->type.shape)
      throw Error(cat("graph '", graph.name, "': input '", in->name, "' is ", tensor_str(t),
                      ", expected ", in->type.str()));
    values.emplace(in, t);
  }
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const Value* in : graph.inputs()) known = known || in->name == name;
    if (!known)
      throw Error(cat("graph '", graph.name, "': unexpected input '", name, "' (", tensor_str(t),
                      "); the graph has no input of that name"));
  }
  for (const Op* op : graph.ops()) {
    std::vector<const HostTensor*> operands;
    for (int i = 0; i < op->num_operands(); ++i) {
      auto it = values.find(op->operand(i));
      if (it == values.end())
        fail(*op, op->operand_label(i), " is used before it is defined");
      operands.push_back(&it->second);
    }
    std::vector<HostTensor> results = evaluate_op(*op, operands);
    for (size_t i = 0; i < results.size(); ++i)
      values.insert_or_assign(op->results[i], std::move(results[i]));
  }
  std::map<std::string, HostTensor> outputs;
  for (const GraphOutput& out : graph.outputs()) {
    auto it = values.find(out.value);
    if (it == values.end())
      throw Error(cat("graph '", graph.name, "': output '", out.name, "' is not computed by the graph"));
    outputs.insert_or_assign(out.name, it->second);
  }
  return outputs;
}

}  // namespace vkc::ir
