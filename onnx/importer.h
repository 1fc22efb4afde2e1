// ONNX -> vkc IR, through Debian's libonnx (onnx_proto) and protobuf.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/error.h"

namespace vkc::onnx {

struct ImportOptions {
  // Pins dynamic dims of graph inputs by name (`--input-shape NAME=1,3,224,224`).
  std::map<std::string, Shape> input_shapes;
  // Binds graph inputs to fixed values: they become constants, not module inputs. For models that
  // take shape-like operands (a Reshape's shape, TopK's K) as graph inputs, which vkc needs as
  // constants; the conformance runner uses it with the test data's values.
  std::map<std::string, HostTensor> constant_inputs = {};
};

// Thrown by import_model when the only obstacle is that some nodes need the values of graph
// inputs at compile time (a Reshape's shape, TopK's K, Squeeze's axes fed at run time): `names`
// are those inputs; binding them with ImportOptions::constant_inputs lets the import proceed.
class InputValuesNeeded : public Error {
 public:
  InputValuesNeeded(const std::string& message, std::vector<std::string> input_names)
      : Error(message), names(std::move(input_names)) {}
  std::vector<std::string> names;
};

// A graph input as the model declares it: each dim a number, or a symbol (dim_param, "" when the
// dim is dynamic without a name).
struct ModelInput {
  std::string name;
  DType dtype = DType::f32;
  bool has_shape = false;           // no shape at all: only --input-shape / the run can say
  std::vector<int64_t> dims;        // -1 where dynamic
  std::vector<std::string> symbols; // per dim: the dim_param ("" where static or unnamed)
  bool has_dtype = true;            // false: an output whose element type is not declared (or not vkc's)
};

// The model's graph inputs (initializers listed as inputs excluded) and outputs as declared, in
// order, from one read that skips the weights (read_model_signature). Errors name the file; an
// input of a type vkc cannot take is refused here too; an output whose element type vkc cannot
// name is listed with has_dtype false.
struct ModelSignature {
  std::vector<ModelInput> inputs, outputs;
};
ModelSignature read_model_signature_io(const std::string& path);

// The model's metadata (ModelProto's fields), what ONNX Runtime's get_modelmeta() gives.
struct ModelMetadata {
  std::string producer_name, producer_version, domain, description, graph_name, graph_description;
  int64_t version = 0;
  std::map<std::string, std::string> custom;  // metadata_props
};
ModelMetadata read_model_metadata(const std::string& path);

// Reads a .onnx model (opsets 11-21; older opsets where the node's form is known; external data
// files resolved next to the model). Every
// unsupported node is listed in ONE error message (name, op type, what is missing). The result is
// a verified graph whose ops carry the ONNX node names and Location{model path}.
ir::Graph import_model(const std::string& path, const ImportOptions& options = {});

}  // namespace vkc::onnx
