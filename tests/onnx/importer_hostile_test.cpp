// ONNX import of hostile or broken files: one vkc::Error, never a crash or a huge allocation.
// Also external data files, including locations that try to leave the model's directory.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "onnx/importer.h"
#include "onnx_model_builder.h"
#include "support/error.h"

namespace vkc::test {
namespace {

// y = x + w, with w given by `set_w`.
template <typename F>
std::string add_model(const std::string& dir, F set_w) {
  OnnxModel m(17);
  m.input("x", {4});
  auto* w = m.initializer("w", {4}, {});
  set_w(*w);
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y");
  return m.write(dir);
}

// The process's peak resident memory so far.
long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void external(::onnx::TensorProto& t, const std::string& location, int64_t offset = 0) {
  t.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value(location);
  auto* off = t.add_external_data();
  off->set_key("offset");
  off->set_value(std::to_string(offset));
}

TEST(OnnxHostile, TruncatedFile) {
  std::string dir = scratch_dir("truncated");
  std::string path = add_model(dir, [](auto& t) { for (int i = 0; i < 4; ++i) t.add_float_data(1); });
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 7);
  EXPECT_EQ(import_error(path), path + ": not a valid ONNX model (truncated or corrupt protobuf)");
}

TEST(OnnxHostile, MissingFileAndGarbage) {
  std::string dir = scratch_dir("garbage");
  EXPECT_EQ(import_error(dir + "/nope.onnx"), dir + "/nope.onnx: no such file");
  std::ofstream(dir + "/g.onnx") << std::string(100, '\xff');
  EXPECT_NE(import_error(dir + "/g.onnx").find("not a valid ONNX model"), std::string::npos);
}

TEST(OnnxHostile, AbsurdDimsAreRefusedBeforeAllocating) {
  std::string path = add_model(scratch_dir("absurd"), [](auto& t) {
    t.clear_dims();
    t.add_dims(int64_t(1) << 40);
    t.add_dims(int64_t(1) << 40);
  });
  EXPECT_NE(import_error(path).find("initializer 'w': shape is too large"), std::string::npos);
  path = add_model(scratch_dir("absurd2"), [](auto& t) {
    t.clear_dims();
    t.add_dims(int64_t(1) << 33);
  });
  EXPECT_NE(import_error(path).find("initializer 'w': shape is too large"), std::string::npos);
}

// A shape inside the 4 GiB limit but without the data it declares is refused before the tensor
// is allocated (the fuzzer found 2.75 GB requested by a 169-byte model; that input is kept in
// fuzz/corpus/onnx, where the fuzzer's memory limit would catch the allocation).
TEST(OnnxHostile, LargeShapesWithoutTheirDataAreRefusedBeforeAllocating) {
  const long peak_kb_before = peak_rss_kb();
  const int64_t big = int64_t(1) << 29;  // 2 GiB of floats
  auto sized = [&](const std::string& dir, auto fill) {
    return add_model(scratch_dir(dir), [&](auto& t) {
      t.clear_dims();
      t.add_dims(big);
      fill(t);
    });
  };
  EXPECT_NE(import_error(sized("nodata", [](auto&) {})).find("float_data has 0 values, the shape needs 536870912"),
            std::string::npos);
  EXPECT_NE(import_error(sized("shortraw", [](auto& t) { t.set_raw_data(std::string(8, '\0')); }))
                .find("raw_data has 8 bytes, the shape needs 2147483648"),
            std::string::npos);
  std::string dir = scratch_dir("shortexternal");
  std::ofstream(dir + "/w.bin") << std::string(16, 'x');
  std::string path = add_model(dir, [](auto& t) {
    t.clear_dims();
    t.add_dims(int64_t(1) << 29);
    external(t, "w.bin");
  });
  EXPECT_NE(import_error(path).find("external data 'w.bin' has 16 bytes, needs offset 0 + length 2147483648"),
            std::string::npos);
  // None of the three 2 GiB tensors was allocated (zero-filled, it would have raised the peak).
  EXPECT_LT(peak_rss_kb() - peak_kb_before, 256 * 1024);
}

TEST(OnnxHostile, RawDataSizeMismatch) {
  std::string path = add_model(scratch_dir("rawsize"), [](auto& t) { t.set_raw_data(std::string(12, '\0')); });
  EXPECT_NE(import_error(path).find("raw_data has 12 bytes, the shape needs 16"), std::string::npos);
}

TEST(OnnxExternalData, LoadsWeightsNextToTheModel) {
  std::string dir = scratch_dir("external");
  float values[6] = {9, 9, 1.5f, -2, 3, 4};  // the weights start at byte 8
  std::ofstream(dir + "/weights.bin", std::ios::binary).write(reinterpret_cast<char*>(values), sizeof values);
  std::string path = add_model(dir, [](auto& t) { external(t, "weights.bin", 8); });
  ir::Graph g = onnx::import_model(path);
  const ir::Op* add = g.outputs()[0].value->producer;
  const HostTensor& w = *add->operand(1)->producer->attr_tensor("value");
  EXPECT_EQ(w.get_f64(0), 1.5);
  EXPECT_EQ(w.get_f64(3), 4.0);
}

TEST(OnnxExternalData, RefusesPathsOutsideTheModelDirectory) {
  std::string dir = scratch_dir("traversal");
  std::string path = add_model(dir + "/model", [](auto& t) { external(t, "../secret.bin"); });
  std::ofstream(dir + "/secret.bin") << std::string(16, 'x');
  EXPECT_EQ(import_error(path), path + ": cannot import 1 item: node (Add): " + path +
                                    ": initializer 'w': external data location '../secret.bin' "
                                    "leaves the model's directory");
  path = add_model(dir + "/abs", [](auto& t) { external(t, "/etc/passwd"); });
  EXPECT_NE(import_error(path).find("is absolute"), std::string::npos);
  path = add_model(dir + "/missing", [](auto& t) { external(t, "none.bin"); });
  EXPECT_NE(import_error(path).find("external data file 'none.bin' not found"), std::string::npos);
  std::ofstream(dir + "/short/short.bin") << "abc";
  path = add_model(dir + "/short", [](auto& t) { external(t, "short.bin"); });
  std::ofstream(dir + "/short/short.bin") << "abc";
  EXPECT_NE(import_error(path).find("has 3 bytes, needs offset 0 + length 16"), std::string::npos);
}

// Issue #24 item 5: a second node writing a name used to replace the first in the name table, and
// the first node was dropped as dead. Both writers are named, so the user can find them; unnamed
// nodes by their position. A node may not overwrite a graph input either.
TEST(OnnxHostile, EveryValueNameHasOneWriter) {
  struct Node {
    const char* op;
    const char* input;
    const char* output;
    const char* name;
  };
  struct Case {
    std::vector<Node> nodes;
    std::string expected;  // after "<path>: "
  };
  const std::vector<Case> cases = {
      {{{"Relu", "x", "y", "first"}, {"Neg", "x", "y", "second"}},
       "node 'second' (Neg) writes 'y', which node 'first' (Relu) also writes"},
      {{{"Relu", "x", "y", ""}, {"Relu", "y", "y", ""}}, "node #1 (Relu) writes 'y', which node #0 (Relu) also writes"},
      {{{"Relu", "x", "x", "r"}}, "node 'r' (Relu) writes 'x', which graph input 'x' already defines"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    OnnxModel m(17);
    m.input("x", {4});
    for (const Node& n : cases[i].nodes) m.node(n.op, {n.input}, {n.output}, n.name);
    m.output(cases[i].nodes.back().output);
    std::string path = m.write(scratch_dir(cat("writers", i)));
    EXPECT_EQ(import_error(path), path + ": " + cases[i].expected + "; every value name must have one writer");
  }
}

// Issue #24 item 10: the one rank limit (ir/rank_limit.h), named at the graph input or the ONNX
// node whose output passes it, with the file and the rank.
TEST(OnnxHostile, RankAboveTheLimitIsNamed) {
  OnnxModel in(17);
  in.input("x", {1, 2, 1, 2, 1, 2, 3});
  in.node("Relu", {"x"}, {"y"});
  in.output("y");
  std::string path = in.write(scratch_dir("rank7_input"));
  EXPECT_EQ(import_error(path), path + ": cannot import 1 item: graph input 'x' has rank 7, at most 6 is supported");

  OnnxModel out(17);
  out.input("x", {24});
  out.initializer_i64("shape", {1, 2, 1, 2, 1, 2, 3});
  out.node("Reshape", {"x", "shape"}, {"y"}, "to7d");
  out.output("y");
  path = out.write(scratch_dir("rank7_output"));
  std::string m = import_error(path);
  EXPECT_EQ(m.rfind(path + ": cannot import 1 item: node 'to7d' (Reshape): ", 0), 0u) << m;
  EXPECT_NE(m.find("rank 7, at most 6 is supported"), std::string::npos) << m;
}

}  // namespace
}  // namespace vkc::test
