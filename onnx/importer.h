// ONNX -> vkc IR, through Debian's libonnx (onnx_proto) and protobuf.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace vkc::onnx {

struct ImportOptions {
  // Pins dynamic dims of graph inputs by name (`--input-shape NAME=1,3,224,224`).
  std::map<std::string, Shape> input_shapes;
  // Binds graph inputs to fixed values: they become constants, not module inputs. For models that
  // take shape-like operands (a Reshape's shape, TopK's K) as graph inputs, which vkc needs as
  // constants; the conformance runner uses it with the test data's values.
  std::map<std::string, HostTensor> constant_inputs = {};
};

// Reads a .onnx model (opsets 11-21; older opsets where the node's form is known; external data
// files resolved next to the model). Every
// unsupported node is listed in ONE error message (name, op type, what is missing). The result is
// a verified graph whose ops carry the ONNX node names and Location{model path}.
ir::Graph import_model(const std::string& path, const ImportOptions& options = {});

}  // namespace vkc::onnx
