#include "ir/graph.h"

#include <algorithm>
#include <unordered_map>

#include "ir/verifier.h"
#include "support/error.h"

namespace vkc::ir {

std::string TensorType::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  s += std::string(dtype_name(dtype)) + ">";
  return s;
}

std::string Location::str() const {
  if (file.empty() && line == 0) return "";
  std::string s = file.empty() ? "<input>" : file;
  if (line > 0) s += ":" + std::to_string(line) + (col > 0 ? ":" + std::to_string(col) : "");
  return s;
}

// ---------------------------------------------------------------------------------------------
// Op attribute access

const Attribute& Op::attr_or_default(const std::string& name) const {
  auto it = attrs.find(name);
  if (it != attrs.end()) return it->second;
  for (const AttrSpec& spec : schema().attrs)
    if (spec.name == name && spec.default_value) return *spec.default_value;
  throw Error(cat(describe(), ": missing attribute '", name, "'"));
}

namespace {
template <typename T>
const T& get_as(const Op& op, const std::string& name, const Attribute& a, AttrKind want) {
  if (const T* v = std::get_if<T>(&a)) return *v;
  throw Error(cat(op.describe(), ": attribute '", name, "' must be a ", attr_kind_name(want),
                  ", found a ", attr_kind_name(attr_kind(a))));
}
}  // namespace

int64_t Op::attr_int(const std::string& n) const {
  return get_as<int64_t>(*this, n, attr_or_default(n), AttrKind::Int);
}
double Op::attr_float(const std::string& n) const {
  const Attribute& a = attr_or_default(n);
  if (const int64_t* i = std::get_if<int64_t>(&a)) return double(*i);  // 1 reads as 1.0
  return get_as<double>(*this, n, a, AttrKind::Float);
}
const std::string& Op::attr_string(const std::string& n) const {
  return get_as<std::string>(*this, n, attr_or_default(n), AttrKind::String);
}
bool Op::attr_bool(const std::string& n) const {
  return get_as<bool>(*this, n, attr_or_default(n), AttrKind::Bool);
}
const std::vector<int64_t>& Op::attr_ints(const std::string& n) const {
  return get_as<std::vector<int64_t>>(*this, n, attr_or_default(n), AttrKind::Ints);
}
const std::vector<double>& Op::attr_floats(const std::string& n) const {
  return get_as<std::vector<double>>(*this, n, attr_or_default(n), AttrKind::Floats);
}
const IntsList& Op::attr_ints_list(const std::string& n) const {
  return get_as<IntsList>(*this, n, attr_or_default(n), AttrKind::IntsList);
}
const TensorPtr& Op::attr_tensor(const std::string& n) const {
  return get_as<TensorPtr>(*this, n, attr_or_default(n), AttrKind::Tensor);
}
std::vector<int64_t> Op::attr_ints_or(const std::string& n, std::vector<int64_t> fallback) const {
  return has_attr(n) ? attr_ints(n) : std::move(fallback);
}
std::string Op::attr_string_or(const std::string& n, std::string fallback) const {
  return has_attr(n) ? attr_string(n) : std::move(fallback);
}

std::string Op::describe() const {
  std::string s(op_name(kind));
  if (!name.empty()) s += " '" + name + "'";
  std::string where = loc.str();
  if (!where.empty()) s += " (" + where + ")";
  return s;
}

std::string Op::operand_label(int i) const {
  const auto& names = schema().operand_names;
  if (i >= 0 && size_t(i) < names.size()) return std::string(names[size_t(i)]);
  return "operand " + std::to_string(i);
}

// ---------------------------------------------------------------------------------------------
// Graph

Value* Graph::new_value(TensorType type, std::string name) {
  auto v = std::make_unique<Value>();
  v->id = next_id_++;
  v->name = std::move(name);
  v->type = std::move(type);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_input(std::string name, TensorType type) {
  Value* v = new_value(std::move(type), std::move(name));
  inputs_.push_back(v);
  return v;
}

void Graph::add_output(Value* value, std::string name) {
  if (name.empty()) name = value->name.empty() ? "output" + std::to_string(outputs_.size()) : value->name;
  outputs_.push_back({value, std::move(name)});
}

size_t Graph::index_of(const Op* op) const {
  for (size_t i = 0; i < ops_.size(); ++i)
    if (ops_[i].get() == op) return i;
  throw Error("internal: op not in graph");
}

Op* Graph::insert_op_typed(Op* position, OpKind kind, std::vector<Value*> operands, AttrMap attrs,
                           std::vector<TensorType> result_types, std::string name, Location loc) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->name = std::move(name);
  op->loc = std::move(loc);
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  for (size_t i = 0; i < result_types.size(); ++i) {
    Value* v = new_value(std::move(result_types[i]), "");
    v->producer = op.get();
    v->result_index = int(i);
    op->results.push_back(v);
  }
  Op* raw = op.get();
  if (position == nullptr) {
    ops_.push_back(std::move(op));
  } else {
    ops_.insert(ops_.begin() + std::ptrdiff_t(index_of(position)), std::move(op));
  }
  return raw;
}

Op* Graph::add_op_typed(OpKind kind, std::vector<Value*> operands, AttrMap attrs,
                        std::vector<TensorType> result_types, std::string name, Location loc) {
  return insert_op_typed(nullptr, kind, std::move(operands), std::move(attrs),
                         std::move(result_types), std::move(name), std::move(loc));
}

Op* Graph::insert_op(Op* position, OpKind kind, std::vector<Value*> operands, AttrMap attrs,
                     std::string name, Location loc) {
  Op probe;
  probe.kind = kind;
  probe.name = name;
  probe.loc = loc;
  probe.operands = operands;
  probe.attrs = attrs;
  std::vector<TensorType> types = infer_result_types(probe);
  return insert_op_typed(position, kind, std::move(operands), std::move(attrs), std::move(types),
                         std::move(name), std::move(loc));
}

Op* Graph::add_op(OpKind kind, std::vector<Value*> operands, AttrMap attrs, std::string name,
                  Location loc) {
  return insert_op(nullptr, kind, std::move(operands), std::move(attrs), std::move(name),
                   std::move(loc));
}

Value* Graph::add_constant(HostTensor data, std::string name) {
  TensorType t{data.dtype(), data.shape()};
  AttrMap attrs{{"value", std::make_shared<const HostTensor>(std::move(data))}};
  Op* op = add_op_typed(OpKind::Constant, {}, std::move(attrs), {t}, name);
  op->result()->name = std::move(name);
  return op->result();
}

std::vector<Op*> Graph::ops() const {
  std::vector<Op*> out;
  out.reserve(ops_.size());
  for (const auto& op : ops_) out.push_back(op.get());
  return out;
}

std::vector<Op*> Graph::users(const Value* v) const {
  std::vector<Op*> out;
  for (const auto& op : ops_)
    for (Value* operand : op->operands)
      if (operand == v) out.push_back(op.get());
  return out;
}

bool Graph::is_output(const Value* v) const {
  return std::any_of(outputs_.begin(), outputs_.end(), [&](const GraphOutput& o) { return o.value == v; });
}

void Graph::replace_all_uses(Value* from, Value* to) {
  for (auto& op : ops_)
    for (Value*& operand : op->operands)
      if (operand == from) operand = to;
  for (GraphOutput& o : outputs_)
    if (o.value == from) o.value = to;
}

void Graph::erase_op(Op* op) {
  for (Value* r : op->results)
    check(!has_uses(r), "internal: erasing ", op->describe(), " whose result is still used");
  ops_.erase(ops_.begin() + std::ptrdiff_t(index_of(op)));
}

int Graph::remove_dead_ops() {
  // Use counts (operands and graph outputs) once, then a worklist: an op whose results all have
  // no uses goes, and its operands lose one use each, which may free their producers in turn.
  // Linear in the graph; removes the same ops as rescanning until nothing changes would.
  std::unordered_map<const Value*, size_t> uses;
  for (const auto& op : ops_)
    for (const Value* operand : op->operands) ++uses[operand];
  for (const GraphOutput& o : outputs_) ++uses[o.value];
  auto dead = [&](const Op* op) {
    return std::none_of(op->results.begin(), op->results.end(), [&](const Value* r) { return uses[r] > 0; });
  };
  std::unordered_map<const Op*, bool> removed;
  std::vector<const Op*> work;
  for (const auto& op : ops_)
    if (dead(op.get())) work.push_back(op.get());
  int count = 0;
  while (!work.empty()) {
    const Op* op = work.back();
    work.pop_back();
    if (removed[op]) continue;
    removed[op] = true;
    ++count;
    for (const Value* operand : op->operands)
      if (--uses[operand] == 0 && operand->producer != nullptr && !removed[operand->producer] &&
          dead(operand->producer))
        work.push_back(operand->producer);
  }
  if (count > 0) std::erase_if(ops_, [&](const std::unique_ptr<Op>& op) { return removed[op.get()]; });
  return count;
}

void Graph::move_before(Op* op, Op* position) {
  size_t from = index_of(op);
  std::unique_ptr<Op> owned = std::move(ops_[from]);
  ops_.erase(ops_.begin() + std::ptrdiff_t(from));
  size_t to = index_of(position);
  ops_.insert(ops_.begin() + std::ptrdiff_t(to), std::move(owned));
}

Graph Graph::clone() const {
  Graph g;
  g.name = name;
  g.source = source;
  g.next_id_ = next_id_;
  std::unordered_map<const Value*, Value*> map;
  auto copy_value = [&](const Value* v) {
    auto nv = std::make_unique<Value>(*v);
    nv->producer = nullptr;
    map[v] = nv.get();
    g.values_.push_back(std::move(nv));
    return g.values_.back().get();
  };
  for (Value* in : inputs_) g.inputs_.push_back(copy_value(in));
  for (const auto& op : ops_) {
    auto nop = std::make_unique<Op>();
    nop->kind = op->kind;
    nop->name = op->name;
    nop->loc = op->loc;
    nop->attrs = op->attrs;
    for (Value* o : op->operands) nop->operands.push_back(map.at(o));
    for (Value* r : op->results) {
      Value* nr = copy_value(r);
      nr->producer = nop.get();
      nop->results.push_back(nr);
    }
    g.ops_.push_back(std::move(nop));
  }
  for (const GraphOutput& o : outputs_) g.outputs_.push_back({map.at(o.value), o.name});
  return g;
}

Value* Graph::find_value(const std::string& name) const {
  for (const auto& v : values_)
    if (v->name == name) return v.get();
  return nullptr;
}

}  // namespace vkc::ir
