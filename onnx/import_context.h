// State shared by the importer driver and the per-op importers: the graph under construction, the
// ONNX name -> IR value map, and NodeContext, the view one op importer works through.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/attributes.h"
#include "onnx/onnx_proto.h"

namespace vkc::onnx {

struct ImportContext {
  ir::Graph& graph;
  std::string model_path;
  std::string model_dir;
  int64_t opset = 0;
  ir::Location loc;
  // ONNX value name -> IR value. Initializers are added lazily on first use (see value()).
  std::map<std::string, ir::Value*> values;
  std::map<std::string, const ::onnx::TensorProto*> initializers;
  // Names of ONNX graph outputs (an op producing one must not be rewritten in place).
  std::set<std::string> graph_output_names;
  // How many node inputs and graph outputs read each ONNX value name.
  std::map<std::string, int> use_counts;
  // Graph inputs whose values some node needs at compile time (a Reshape's shape, TopK's K fed as
  // graph inputs): import_model reports them as InputValuesNeeded, so a caller that has the
  // values (a session at first use) can bind them and import again.
  std::set<std::string> values_needed;
  int64_t value_requests = 0;  // how often a node asked for one (a second node may ask for the same)

  // The IR value of an ONNX name, materializing an initializer as a constant on first use.
  // Returns nullptr when the name is unknown.
  ir::Value* value(const std::string& name);
};

// The constant data behind a value (the result of a constant op), or nullptr.
const HostTensor* constant_data(const ir::Value* v);

class NodeContext {
 public:
  NodeContext(ImportContext& ctx, const ::onnx::NodeProto& node);

  ImportContext& ctx;
  const ::onnx::NodeProto& node;
  NodeAttributes attrs;
  int64_t opset() const { return ctx.opset; }
  bool op_type_is(const char* type) const { return node.op_type() == type; }

  // Inputs: ONNX marks an omitted optional input with an empty name.
  bool has_input(int i) const;
  int num_inputs() const { return node.input_size(); }
  ir::Value* input(int i);
  // Constant data of input i, or an Unsupported naming `what` when it is not a constant (a graph
  // input there is also recorded in ctx.values_needed).
  const HostTensor& constant_input(int i, const std::string& what);
  std::vector<int64_t> constant_ints(int i, const std::string& what);
  std::vector<double> constant_floats(int i, const std::string& what);

  // Appends an IR op named after the node. When every operand is a constant the op is evaluated
  // at import time (ir::evaluate_op) and replaced by constants: this is what folds the
  // Shape/Gather/Concat/Cast chains exporters emit for static shapes.
  ir::Value* emit(ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs = {});
  // Appends an IR op without folding it (the graph passes decide; see import_dequantize).
  ir::Value* emit_unfolded(ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs = {});
  std::vector<ir::Value*> emit_multi(ir::OpKind kind, std::vector<ir::Value*> operands,
                                     ir::AttrMap attrs = {});
  ir::Value* constant(HostTensor data);
  // A reshape view (also used for Identity and to pass values through).
  ir::Value* reshape(ir::Value* v, const Shape& shape);

  int num_outputs() const { return node.output_size(); }
  bool output_used(int i) const { return i < node.output_size() && !node.output(i).empty(); }
  void set_output(int i, ir::Value* v);

  [[noreturn]] void unsupported(const std::string& reason) const { throw Unsupported{reason}; }
  // "node 'name' (OpType)" for messages.
  std::string label() const;
};

using OpImporter = std::function<void(NodeContext&)>;

// op_type -> importer, for the default ONNX domain.
const OpImporter* find_importer(const std::string& op_type);

// Registration hooks, one per op_importers_*.cpp family.
void register_elementwise_importers(std::map<std::string, OpImporter>& r);
void register_conv_importers(std::map<std::string, OpImporter>& r);
void register_normalization_importers(std::map<std::string, OpImporter>& r);
void register_contraction_importers(std::map<std::string, OpImporter>& r);
void register_shape_importers(std::map<std::string, OpImporter>& r);
void register_reduce_importers(std::map<std::string, OpImporter>& r);
void register_quant_importers(std::map<std::string, OpImporter>& r);
void register_folding_importers(std::map<std::string, OpImporter>& r);
void register_resize_importers(std::map<std::string, OpImporter>& r);
void register_logic_importers(std::map<std::string, OpImporter>& r);  // issue 23, elementwise and logic
// Indexing and data movement (issue 23): onnx/op_importers_indexing.cpp, op_importers_einsum.cpp
void register_indexing_importers(std::map<std::string, OpImporter>& r);
void register_einsum_importers(std::map<std::string, OpImporter>& r);
void register_norm_reduce_importers(std::map<std::string, OpImporter>& r);  // issue 23 normalizations

// Helpers shared by several families.
// The axes of Reduce*: an attribute before `input_from_opset`, an optional constant input 1 after.
std::vector<int64_t> reduce_axes_operand(NodeContext& n, int64_t input_from_opset);
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// Conv's window attributes from a Conv-like node (Conv, ConvInteger, QLinearConv): op_importers_conv.cpp.
ir::AttrMap conv_attrs(NodeContext& n, ir::Value* x, ir::Value* w);
// A scalar 0 of an 8-bit type: the zero point ConvInteger / MatMulInteger default to.
ir::Value* integer_zero_point(NodeContext& n, DType t);
// ONNX auto_pad resolved to explicit pads [begins..., ends...] for a conv/pool window.
std::vector<int64_t> resolve_auto_pad(const std::string& auto_pad, const Shape& in_spatial,
                                      const std::vector<int64_t>& kernel,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& dilations,
                                      std::vector<int64_t> explicit_pads);

}  // namespace vkc::onnx
