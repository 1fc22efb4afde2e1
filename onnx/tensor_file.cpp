#include "onnx/tensor_file.h"

#include <filesystem>

#include "onnx/model_reader.h"
#include "onnx/tensor_proto.h"

namespace vkc::onnx {

NamedTensor read_tensor_file(const std::string& path) {
  ::onnx::TensorProto proto = read_tensor_proto(path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return {proto.name(), tensor_from_proto(proto, dir, path)};
}

}  // namespace vkc::onnx
