// The tensor IR: an SSA graph of ops over statically shaped tensors.
//
// A Graph owns its Values and Ops. Ops are kept in a valid execution (topological) order; passes
// that insert ops do so at a position that keeps it. Values are produced by exactly one op result
// or are graph inputs. Nothing here knows about GPUs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/ops.h"
#include "support/tensor.h"

namespace vkc::ir {

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  int64_t rank() const { return int64_t(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  int64_t size_bytes() const { return numel() * int64_t(dtype_size(dtype)); }
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
  // "tensor<1x3x8x8xf32>"; rank 0: "tensor<f32>".
  std::string str() const;
};

// Where an op came from: a text file position or a model file; used in every message.
struct Location {
  std::string file;
  int line = 0;
  int col = 0;
  // "model.vkir:12:3", "model.onnx", or "" when unknown.
  std::string str() const;
};

class Op;

class Value {
 public:
  int id = 0;           // unique within its graph
  std::string name;     // optional readable name (text format prints %name, else %id)
  TensorType type;
  Op* producer = nullptr;  // null for graph inputs
  int result_index = 0;
};

class Op {
 public:
  OpKind kind{};
  std::string name;  // node name (ONNX node name or a label); may be empty
  Location loc;
  std::vector<Value*> operands;
  std::vector<Value*> results;
  AttrMap attrs;

  const OpSchema& schema() const { return op_schema(kind); }
  Value* result(int i = 0) const { return results.at(size_t(i)); }
  Value* operand(int i) const { return operands.at(size_t(i)); }
  int num_operands() const { return int(operands.size()); }

  // Attribute access. Getters fall back to the schema default and throw vkc::Error naming the op
  // when the attribute is missing (and has no default) or has another kind.
  bool has_attr(const std::string& name) const { return attrs.count(name) != 0; }
  int64_t attr_int(const std::string& name) const;
  double attr_float(const std::string& name) const;
  const std::string& attr_string(const std::string& name) const;
  bool attr_bool(const std::string& name) const;
  const std::vector<int64_t>& attr_ints(const std::string& name) const;
  const std::vector<double>& attr_floats(const std::string& name) const;
  const IntsList& attr_ints_list(const std::string& name) const;
  const TensorPtr& attr_tensor(const std::string& name) const;
  // For optional attributes with no schema default (strides, pads, ...): the value or `fallback`.
  std::vector<int64_t> attr_ints_or(const std::string& name, std::vector<int64_t> fallback) const;
  std::string attr_string_or(const std::string& name, std::string fallback) const;

  // The subject of a message: "conv 'conv1' (model.vkir:12:3)"; parts that are unknown are omitted.
  std::string describe() const;
  // Name of operand i for messages: the schema's name ("filter") or "operand i".
  std::string operand_label(int i) const;

 private:
  const Attribute& attr_or_default(const std::string& name) const;
};

struct GraphOutput {
  Value* value;
  std::string name;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  std::string name = "main";
  std::string source;  // file the graph came from, for messages ("" if built in C++)

  Value* add_input(std::string name, TensorType type);
  void add_output(Value* value, std::string name = "");

  // Appends an op whose result types are inferred by the verifier's shape rules (throws vkc::Error
  // with the op's description when the operands or attributes are invalid).
  Op* add_op(OpKind kind, std::vector<Value*> operands, AttrMap attrs = {}, std::string name = "",
             Location loc = {});
  // Appends an op with given result types (the parser uses this; verify() checks them later).
  Op* add_op_typed(OpKind kind, std::vector<Value*> operands, AttrMap attrs,
                   std::vector<TensorType> result_types, std::string name = "", Location loc = {});
  // Inserts an op before `position` (nullptr: at the end), inferring result types.
  Op* insert_op(Op* position, OpKind kind, std::vector<Value*> operands, AttrMap attrs = {},
                std::string name = "", Location loc = {});
  // Convenience: a constant op holding `data`.
  Value* add_constant(HostTensor data, std::string name = "");

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  std::vector<GraphOutput>& outputs() { return outputs_; }
  // Ops in execution order.
  std::vector<Op*> ops() const;
  int num_ops() const { return int(ops_.size()); }

  // Ops using v as an operand (in order; an op appears once per use).
  std::vector<Op*> users(const Value* v) const;
  bool is_output(const Value* v) const;
  bool has_uses(const Value* v) const { return !users(v).empty() || is_output(v); }

  // Redirects every use of `from` (operands and graph outputs) to `to`.
  void replace_all_uses(Value* from, Value* to);
  // Removes an op; its results must be unused.
  void erase_op(Op* op);
  // Removes ops none of whose results are used, repeatedly. Returns how many were removed.
  int remove_dead_ops();
  // Moves `op` to just before `position` (caller keeps the order valid).
  void move_before(Op* op, Op* position);

  // Deep copy (values and ops keep their ids and names).
  Graph clone() const;

  Value* find_value(const std::string& name) const;

 private:
  Value* new_value(TensorType type, std::string name);
  Op* insert_op_typed(Op* position, OpKind kind, std::vector<Value*> operands, AttrMap attrs,
                      std::vector<TensorType> result_types, std::string name, Location loc);
  size_t index_of(const Op* op) const;

  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Op>> ops_;
  std::vector<Value*> inputs_;
  std::vector<GraphOutput> outputs_;
  int next_id_ = 0;
};

}  // namespace vkc::ir
