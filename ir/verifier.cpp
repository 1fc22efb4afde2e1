// Generic schema checks, the per-op shape rules (ir/op_rules.cpp), and whole-graph SSA checks.
#include "ir/verifier.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/op_rules.h"
#include "ir/shape_rules.h"
#include "support/error.h"

namespace vkc::ir {
namespace {

using rules::fail;

std::string count_range(int lo, int hi) {
  if (hi < 0) return cat("at least ", lo);
  if (lo == hi) return cat(lo);
  return cat(lo, " to ", hi);
}

void check_operand_count(const Op& op) {
  const OpSchema& s = op.schema();
  int n = op.num_operands();
  if (n < s.min_operands || (s.max_operands >= 0 && n > s.max_operands))
    fail(op, "expected ", count_range(s.min_operands, s.max_operands), " operands, found ", n);
  for (int i = 0; i < n; ++i)
    if (op.operands[size_t(i)] == nullptr) fail(op, op.operand_label(i), " is null");
}

// An Int is accepted where a Float is expected: the text format and ONNX importers may write
// "alpha = 1" and the getters read it as 1.0.
bool kind_matches(AttrKind want, AttrKind found) {
  return want == found || (want == AttrKind::Float && found == AttrKind::Int);
}

void check_attributes(const Op& op) {
  const OpSchema& s = op.schema();
  for (const auto& [name, value] : op.attrs) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& a : s.attrs)
      if (a.name == name) spec = &a;
    if (spec == nullptr) fail(op, "unknown attribute '", name, "'");
    AttrKind found = attr_kind(value);
    if (!kind_matches(spec->kind, found))
      fail(op, "attribute '", name, "' must be a ", attr_kind_name(spec->kind), ", found a ",
           attr_kind_name(found));
    if (found == AttrKind::Tensor && std::get<TensorPtr>(value) == nullptr)
      fail(op, "attribute '", name, "' holds no tensor");
  }
  for (const AttrSpec& a : s.attrs)
    if (a.required && !op.has_attr(std::string(a.name)))
      fail(op, "missing required attribute '", a.name, "'");
}

void check_rank(const Op& op, const TensorType& t, const std::string& what) {
  if (t.rank() > kMaxRank) fail(op, what, " has rank ", t.rank(), ", at most ", kMaxRank, " is supported");
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] < 0) fail(op, what, " dim ", d, " is ", t.shape[d], ", expected >= 0");
  int64_t n = 1;
  for (int64_t d : t.shape)
    if (__builtin_mul_overflow(n, d, &n))
      fail(op, what, " shape ", shape_str(t.shape), " has too many elements");
}

std::string value_label(const Value* v) {
  return v->name.empty() ? cat("%", v->id) : cat("%", v->name);
}

}  // namespace

std::vector<TensorType> infer_result_types(const Op& op) {
  check_operand_count(op);
  check_attributes(op);
  for (int i = 0; i < op.num_operands(); ++i) check_rank(op, op.operand(i)->type, op.operand_label(i));
  std::vector<TensorType> results = op_rules(op.kind).shape(op);
  for (size_t i = 0; i < results.size(); ++i) check_rank(op, results[i], cat("result ", i));
  return results;
}

void verify_op(const Op& op) {
  std::vector<TensorType> inferred = infer_result_types(op);
  if (op.results.size() != inferred.size())
    fail(op, "has ", op.results.size(), " results, inferred ", inferred.size());
  for (size_t i = 0; i < inferred.size(); ++i) {
    const Value* r = op.results[i];
    if (r == nullptr) fail(op, "result ", i, " is null");
    if (r->type != inferred[i])
      fail(op, "result ", i, " type is ", r->type.str(), ", inferred ", inferred[i].str());
  }
}

void verify_graph(const Graph& graph) {
  std::string where = graph.source.empty() ? cat("graph '", graph.name, "'") : graph.source;
  std::unordered_set<const Value*> defined;
  std::unordered_map<int, const Value*> by_id;
  // `what` describes v for the error only: built when needed, since the graph is verified after
  // every pass and describing every op each time was most of the verifier's cost.
  auto define = [&](const Value* v, auto&& what) {
    auto [it, inserted] = by_id.emplace(v->id, v);
    if (!inserted)
      throw Error(cat(where, ": value id ", v->id, " of ", what(), " is already used by ",
                      value_label(it->second)));
    defined.insert(v);
  };
  for (const Value* in : graph.inputs()) {
    if (in == nullptr) throw Error(cat(where, ": graph input is null"));
    define(in, [&] { return cat("input ", value_label(in)); });
  }
  for (const Op* op : graph.ops()) {
    for (int i = 0; i < op->num_operands(); ++i) {
      const Value* v = op->operands[size_t(i)];
      if (v == nullptr) fail(*op, op->operand_label(i), " is null");
      if (!defined.count(v))
        fail(*op, op->operand_label(i), " ", value_label(v),
             " is used before it is defined (or is not a value of this graph)");
    }
    verify_op(*op);
    for (const Value* r : op->results) {
      if (r->producer != op) fail(*op, "result ", value_label(r), " does not name this op as producer");
      define(r, [&] { return cat("result ", value_label(r), " of ", op->describe()); });
    }
  }
  for (const GraphOutput& out : graph.outputs()) {
    if (out.value == nullptr) throw Error(cat(where, ": output '", out.name, "' is null"));
    if (!defined.count(out.value))
      throw Error(cat(where, ": output '", out.name, "' refers to ", value_label(out.value),
                      ", which is not defined in this graph"));
  }
}

}  // namespace vkc::ir
