// read_model_signature (onnx/model_reader.h): the model's fields, graph inputs, outputs and
// initializer names read by walking the protobuf wire format past the weights, which must give
// what the full parse gives on every model Debian's ONNX test data holds, and refuse what the
// full parse refuses for being cut short.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "onnx/importer.h"
#include "onnx/model_reader.h"
#include "support/error.h"
#include "tests/onnx/onnx_model_builder.h"

namespace vkc {
namespace {

constexpr const char* kTestData = "/usr/share/libonnx-testdata/data";

std::string scratch(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("vkc_signature_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// What the signature keeps, taken from a full parse.
::onnx::ModelProto expected_signature(::onnx::ModelProto full) {
  ::onnx::GraphProto& g = *full.mutable_graph();
  g.clear_node();
  g.clear_value_info();
  g.clear_quantization_annotation();
  g.clear_sparse_initializer();
  for (::onnx::TensorProto& t : *g.mutable_initializer()) {
    const std::string name = t.name();
    t.Clear();
    t.set_name(name);
  }
  return full;
}

void expect_same_signature(const std::string& path) {
  std::string want, got;
  ASSERT_TRUE(expected_signature(onnx::read_model_proto(path)).SerializeToString(&want)) << path;
  ASSERT_TRUE(onnx::read_model_signature(path).SerializeToString(&got)) << path;
  EXPECT_EQ(got, want) << path;
}

TEST(ModelSignature, MatchesTheFullParseOnEveryTestDataModel) {
  // scripts/setup.sh installs libonnx-testdata: without it this test fails rather than skips.
  ASSERT_TRUE(std::filesystem::is_directory(kTestData)) << kTestData << " is missing (libonnx-testdata)";
  int models = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kTestData)) {
    if (entry.path().filename() != "model.onnx") continue;
    expect_same_signature(entry.path().string());
    ++models;
  }
  EXPECT_GT(models, 1000);
}

// Weights in every place the walk passes over: initializers (raw and typed data), a Constant
// node's tensor attribute, a sparse initializer and value_info; and a graph field split in two,
// which protobuf merges.
TEST(ModelSignature, SkipsNodesAndWeightsAndKeepsTheRest) {
  test::OnnxModel m;
  m.input("x", {2, 300});
  m.input("w", {300});  // an initializer listed as an input (IR version < 4 style)
  m.output("y");
  m.initializer("w", {300}, {})->set_raw_data(std::string(1200, '\x3f'));
  auto* typed = m.graph().add_initializer();
  typed->set_name("typed");
  typed->set_data_type(1);
  typed->add_dims(3);
  for (float v : {1.f, 2.f, 3.f}) typed->add_float_data(v);
  auto* c = m.node("Constant", {}, {"c"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_raw_data(std::string(4096, '\x7f'));
  m.node("Mul", {"x", "w"}, {"y"});
  m.graph().add_sparse_initializer()->mutable_values()->set_name("sparse");
  m.graph().add_value_info()->set_name("c");
  m.graph().set_doc_string("the graph's doc");
  m.proto().set_producer_name("vkc-test");
  m.proto().set_doc_string("the model's doc");
  auto* meta = m.proto().add_metadata_props();
  meta->set_key("k");
  meta->set_value("v");
  const std::string dir = scratch("skips");
  const std::string path = m.write(dir);
  expect_same_signature(path);
  const ::onnx::ModelProto sig = onnx::read_model_signature(path);
  EXPECT_EQ(sig.graph().node_size(), 0);
  ASSERT_EQ(sig.graph().initializer_size(), 2);
  EXPECT_EQ(sig.graph().initializer(0).ByteSizeLong(), 3u);  // the name alone: tag, length, "w"
  EXPECT_EQ(sig.graph().name(), "g");
  EXPECT_EQ(sig.producer_name(), "vkc-test");
  const onnx::ModelSignature io = onnx::read_model_signature_io(path);
  ASSERT_EQ(io.inputs.size(), 1u);  // "w" is an initializer
  EXPECT_EQ(io.inputs[0].name, "x");
  EXPECT_EQ(io.inputs[0].dims, (std::vector<int64_t>{2, 300}));
  ASSERT_EQ(io.outputs.size(), 1u);
  EXPECT_EQ(io.outputs[0].name, "y");
  const onnx::ModelMetadata meta_read = onnx::read_model_metadata(path);
  EXPECT_EQ(meta_read.description, "the model's doc");
  EXPECT_EQ(meta_read.graph_description, "the graph's doc");
  EXPECT_EQ(meta_read.custom.at("k"), "v");

  // The same model with its graph written as two graph fields: protobuf merges them.
  std::string whole;
  ASSERT_TRUE(m.proto().SerializeToString(&whole));
  ::onnx::ModelProto head = m.proto(), tail;
  head.mutable_graph()->clear_output();
  *tail.mutable_graph()->mutable_output() = m.proto().graph().output();
  std::string split_bytes, tail_bytes;
  ASSERT_TRUE(head.SerializeToString(&split_bytes) && tail.SerializeToString(&tail_bytes));
  const std::string split_path = dir + "/split.onnx";
  std::ofstream(split_path, std::ios::binary) << split_bytes + tail_bytes;
  EXPECT_EQ(onnx::read_model_signature_io(split_path).outputs.size(), 1u);
  expect_same_signature(split_path);
  std::filesystem::remove_all(dir);
}

TEST(ModelSignature, CutShortOrCorruptFilesAreOneLineErrors) {
  test::OnnxModel m;
  m.input("x", {4});
  m.output("y");
  m.initializer("w", {64}, std::vector<float>(64, 1.f));
  m.node("Add", {"x", "w"}, {"y"});
  std::string bytes;
  ASSERT_TRUE(m.proto().SerializeToString(&bytes));
  const std::string dir = scratch("cut");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/m.onnx";
  auto outcome = [&](const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    try {
      onnx::read_model_signature(path);
      return std::string("read");
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
      return what;
    }
  };
  // A cut at a field boundary leaves a valid (smaller) model, one inside a field does not: the
  // signature's verdict on every cut is the full parse's.
  int refused = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    const bool signature_refuses = outcome(bytes.substr(0, n)) != "read";
    bool full_refuses = false;
    try {
      onnx::read_model_proto(path);
    } catch (const Error&) {
      full_refuses = true;
    }
    EXPECT_EQ(signature_refuses, full_refuses) << "cut at " << n << " of " << bytes.size();
    refused += signature_refuses;
  }
  EXPECT_GT(refused, int(bytes.size()) / 2);
  EXPECT_EQ(outcome(""), path + ": the ONNX model has no graph");
  // Random corruption: an error or a model, never a crash.
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string b = bytes;
    b[rng() % b.size()] = char(rng());
    outcome(b);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkc
