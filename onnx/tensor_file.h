// Reading the TensorProto files of ONNX test directories (test_data_set_*/input_*.pb), without
// exposing protobuf types to the caller (the conformance runner).
#pragma once

#include <string>

#include "support/tensor.h"

namespace vkc::onnx {

struct NamedTensor {
  std::string name;  // may be empty
  HostTensor tensor;
};

// Throws vkc::Error naming the file (corrupt protobuf, unsupported dtype, absurd size).
NamedTensor read_tensor_file(const std::string& path);

}  // namespace vkc::onnx
