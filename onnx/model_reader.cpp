#include "onnx/model_reader.h"

#include <filesystem>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>

#include "support/error.h"

namespace vkc::onnx {

std::string read_file_limited(const std::string& path, int64_t limit) {
  std::error_code ec;
  check(std::filesystem::is_regular_file(path, ec), path, ": no such file");
  auto size = std::filesystem::file_size(path, ec);
  check(!ec, path, ": cannot read the file size (", ec.message(), ")");
  check(int64_t(size) <= limit, path, ": file is ", size, " bytes, more than the limit of ", limit);
  std::ifstream in(path, std::ios::binary);
  check(bool(in), path, ": cannot open the file");
  std::string bytes(size_t(size), '\0');
  in.read(bytes.data(), std::streamsize(size));
  check(in.gcount() == std::streamsize(size), path, ": short read");
  return bytes;
}

namespace {

// Parses with an explicit total-bytes limit (the default limit differs between protobuf
// versions) and requires the whole input to be consumed, so truncation is detected.
template <typename Message>
Message parse_message(const std::string& path, const char* what) {
  std::string bytes = read_file_limited(path, kMaxProtobufBytes);
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                int(bytes.size()));
  stream.SetTotalBytesLimit(int(std::min<int64_t>(kMaxProtobufBytes - 1, INT32_MAX)));
  stream.SetRecursionLimit(64);
  Message message;
  bool ok = message.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
  check(ok, path, ": not a valid ", what, " (truncated or corrupt protobuf)");
  return message;
}

}  // namespace

::onnx::ModelProto read_model_proto(const std::string& path) {
  ::onnx::ModelProto model = parse_message<::onnx::ModelProto>(path, "ONNX model");
  check(model.has_graph(), path, ": the ONNX model has no graph");
  return model;
}

::onnx::TensorProto read_tensor_proto(const std::string& path) {
  return parse_message<::onnx::TensorProto>(path, "ONNX TensorProto");
}

int64_t default_opset_version(const ::onnx::ModelProto& model) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

}  // namespace vkc::onnx
