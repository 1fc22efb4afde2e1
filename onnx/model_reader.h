// Reading .onnx / .pb files into protobuf messages with hard size limits, so a hostile or truncated
// file produces one vkc::Error instead of an allocation failure or a crash.
#pragma once

#include <cstdint>
#include <string>

#include "onnx/onnx_proto.h"

namespace vkc::onnx {

// Protobuf messages cannot exceed 2 GiB; larger weights must live in external data files.
inline constexpr int64_t kMaxProtobufBytes = int64_t(2) << 30;

// Parses a ModelProto; a truncated or corrupt file is an error naming the file.
::onnx::ModelProto read_model_proto(const std::string& path);

// The model without its nodes and weights: every ModelProto field but the graph, and of the graph
// its name, doc string, inputs, outputs and the initializers' names (each TensorProto holds only
// its name). What the inputs, outputs and metadata need, at a fraction of read_model_proto's cost
// on a large model: the weights are skipped in the file's bytes, not copied into messages (two
// such parses of a 340 MB model were a fifth of a cache hit). Errors as read_model_proto's.
::onnx::ModelProto read_model_signature(const std::string& path);

// Parses a serialized TensorProto (the test_data_set_*/input_*.pb files).
::onnx::TensorProto read_tensor_proto(const std::string& path);

// The version of the default ("" / "ai.onnx") opset the model imports; 0 when absent.
int64_t default_opset_version(const ::onnx::ModelProto& model);

}  // namespace vkc::onnx
