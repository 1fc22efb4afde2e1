#include "onnx/model_reader.h"


#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include "support/error.h"
#include "support/file_io.h"

namespace vkc::onnx {

namespace {

// Parses with an explicit total-bytes limit (the default limit differs between protobuf
// versions) and requires the whole input to be consumed, so truncation is detected.
template <typename Message>
Message parse_message(const std::string& path, const char* what) {
  const MappedFile bytes(path, kMaxProtobufBytes);
  google::protobuf::io::CodedInputStream stream(bytes.data(), int(bytes.size()));
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

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

// Field numbers of onnx.proto that the signature walk looks at.
constexpr int kModelGraph = 7;
constexpr int kGraphName = 2, kGraphInitializer = 5, kGraphDocString = 10, kGraphInput = 11, kGraphOutput = 12;
constexpr int kTensorName = 8;

// Walks the fields up to the current limit; `field` handles one (returning false on malformed
// input) and may consume it, or leaves it to be copied to `kept` (when given) or skipped.
template <typename OnField>
bool walk_fields(CodedInputStream& in, CodedOutputStream* kept, OnField&& field) {
  while (in.BytesUntilLimit() != 0) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return false;
    bool consumed = false;
    if (!field(tag, consumed)) return false;
    if (!consumed && !(kept ? WireFormatLite::SkipField(&in, tag, kept) : WireFormatLite::SkipField(&in, tag)))
      return false;
  }
  return true;
}

// Enters a length-delimited field, runs `body` inside it and leaves it. There is always an
// enclosing limit (read_model_signature sets one over the whole file).
template <typename Body>
bool nested(CodedInputStream& in, Body&& body) {
  uint32_t length = 0;
  // PushLimit keeps the enclosing limit when the new one reaches past it, so a field cut short
  // would read as complete: its length is checked against what is left first.
  if (!in.ReadVarint32(&length) || int64_t(length) > int64_t(in.BytesUntilLimit())) return false;
  const CodedInputStream::Limit limit = in.PushLimit(int(length));
  const bool ok = body() && in.BytesUntilLimit() == 0;
  in.PopLimit(limit);
  return ok;
}

bool is_message(uint32_t tag, int number) {
  return WireFormatLite::GetTagFieldNumber(tag) == number &&
         WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

bool walk_graph(CodedInputStream& in, ::onnx::GraphProto& graph) {
  std::string kept_bytes;
  std::vector<std::string> initializers;
  {
    google::protobuf::io::StringOutputStream sink(&kept_bytes);
    CodedOutputStream kept(&sink);
    auto field = [&](uint32_t tag, bool& consumed) {
      const int number = WireFormatLite::GetTagFieldNumber(tag);
      if (is_message(tag, kGraphInitializer)) {
        consumed = true;
        std::string name;
        const bool ok = nested(in, [&] {
          return walk_fields(in, nullptr, [&](uint32_t t, bool& c) {
            if (!is_message(t, kTensorName)) return true;
            c = true;
            uint32_t n = 0;
            return in.ReadVarint32(&n) && in.ReadString(&name, int(n));
          });
        });
        initializers.push_back(std::move(name));
        return ok;
      }
      const bool keep = number == kGraphName || number == kGraphDocString || number == kGraphInput || number == kGraphOutput;
      if (!keep) {
        consumed = true;
        return WireFormatLite::SkipField(&in, tag);
      }
      return true;
    };
    if (!walk_fields(in, &kept, field)) return false;
  }
  if (!graph.ParseFromString(kept_bytes)) return false;
  for (std::string& name : initializers) graph.add_initializer()->set_name(std::move(name));
  return true;
}

}  // namespace

::onnx::ModelProto read_model_signature(const std::string& path) {
  const MappedFile bytes(path, kMaxProtobufBytes);
  CodedInputStream in(bytes.data(), int(bytes.size()));
  in.SetTotalBytesLimit(int(std::min<int64_t>(kMaxProtobufBytes - 1, INT32_MAX)));
  const CodedInputStream::Limit whole = in.PushLimit(int(bytes.size()));
  std::string kept_bytes;
  ::onnx::GraphProto graph;
  bool has_graph = false, ok = true;
  {
    google::protobuf::io::StringOutputStream sink(&kept_bytes);
    CodedOutputStream kept(&sink);
    ok = walk_fields(in, &kept, [&](uint32_t tag, bool& consumed) {
      if (!is_message(tag, kModelGraph)) return true;
      consumed = has_graph = true;
      ::onnx::GraphProto part;  // a message field given twice merges, as in the full parse
      if (!nested(in, [&] { return walk_graph(in, part); })) return false;
      graph.MergeFrom(part);
      return true;
    });
  }
  in.PopLimit(whole);
  ::onnx::ModelProto model;
  ok = ok && model.ParseFromString(kept_bytes);
  check(ok, path, ": not a valid ONNX model (truncated or corrupt protobuf)");
  check(has_graph, path, ": the ONNX model has no graph");
  *model.mutable_graph() = std::move(graph);
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
