// The source graph a saved module carries (api/source_graph.h): its large constants are referred to
// in constants.bin where the module holds them unchanged and stored once in source.bin where it
// does not, and the graph read back computes what the module computes.
#include <cstring>
#include <filesystem>
#include <random>

#include "api/api_helpers.h"
#include "api/source_graph.h"
#include "common/test_util.h"
#include "ir/text_format.h"
#include "module/module_file.h"

namespace vkc::api_test {
namespace {

using SourceGraphFiles = ApiTest;

constexpr int64_t kRows = 32, kCols = 48;

// y = x @ w + b, z = x @ w2: w and w2 hold the same bytes (a tied weight), b is small.
ir::Graph projection_graph() {
  ir::Graph g;
  g.name = "proj";
  std::mt19937 rng(5);
  ir::Value* x = g.add_input("x", {DType::f32, {4, kRows}});
  HostTensor w = test::random_tensor(DType::f32, {kRows, kCols}, rng);
  HostTensor b = test::random_tensor(DType::f32, {kCols}, rng);
  ir::Value* y = g.add_op(ir::OpKind::MatMul, {x, g.add_constant(w, "w")})->result();
  g.add_output(g.add_op(ir::OpKind::Add, {y, g.add_constant(b, "b")})->result(), "y");
  g.add_output(g.add_op(ir::OpKind::Relu, {g.add_op(ir::OpKind::MatMul, {x, g.add_constant(w, "w2")})->result()})
                   ->result(),
               "z");
  return g;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void expect_runs_like_its_source(Device& device, const Module& m) {
  std::mt19937 rng(9);
  std::map<std::string, HostTensor> in{{"x", test::random_tensor(DType::f32, {4, kRows}, rng)}};
  Outputs out = Session(device, m, {std::string()}).run(in);
  std::map<std::string, HostTensor> ref = m.reference(in);
  const double tolerance = m.precision() == "fp16" ? 5e-3 : 1e-5;
  for (const auto& [name, r] : ref) {
    test::Comparison c = test::compare(out.at(name), r, tolerance);
    EXPECT_TRUE(c.ok) << name << ": " << c.message;
  }
}

TEST_F(SourceGraphFiles, WeightsTheModuleHoldsAreReferredToNotStoredAgain) {
  const ir::Graph g = projection_graph();
  Module m = Module::compile(g, device());
  const std::string dir = scratch_dir("source_fp32");
  m.save(dir + "/m.vkcm");
  m.save(dir + "/m");
  // The weight reaches constants.bin unchanged, so the source needs no bytes of its own.
  const auto sections = read_module_file_sections(dir + "/m.vkcm", {kSourceGraphFile, kSourceDataFile});
  EXPECT_EQ(sections.count(kSourceDataFile), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/m/" + kSourceDataFile));
  const std::string text = sections.count(kSourceGraphFile) ? sections.at(kSourceGraphFile) : "";
  EXPECT_EQ(count(text, "dense_at<"), 2u) << text;
  EXPECT_EQ(count(text, "dense_hex"), 0u) << text;
  for (const std::string& path : {dir + "/m.vkcm", dir + "/m"}) {
    Module loaded = Module::load(path);
    ASSERT_TRUE(loaded.has_source()) << path;
    expect_runs_like_its_source(device(), loaded);
    expect_runs_like_its_source(device(), loaded.recompile_for(device()));
  }
}

TEST_F(SourceGraphFiles, WeightsTheCompilerChangedAreStoredOnceBesideTheText) {
  const ir::Graph g = projection_graph();
  CompileOptions options;
  options.precision = "fp16";  // constants.bin holds f16 copies; the source keeps f32
  Module m = Module::compile(g, device(), options);
  const std::string dir = scratch_dir("source_fp16");
  m.save(dir + "/m.vkcm");
  m.save(dir + "/m");
  const auto sections = read_module_file_sections(dir + "/m.vkcm", {kSourceDataFile});
  ASSERT_EQ(sections.count(kSourceDataFile), 1u);
  const std::string* data = &sections.at(kSourceDataFile);
  EXPECT_EQ(data->size(), size_t(kRows * kCols * 4)) << "w and w2 are the same bytes: stored once";
  EXPECT_EQ(std::filesystem::file_size(dir + "/m/" + kSourceDataFile), data->size());
  for (const std::string& path : {dir + "/m.vkcm", dir + "/m"}) {
    Module loaded = Module::load(path);
    expect_runs_like_its_source(device(), loaded);
  }
  // An fp32 module saved over this directory needs no source.bin, and the old one is not left.
  Module::compile(g, device()).save(dir + "/m");
  EXPECT_FALSE(std::filesystem::exists(dir + "/m/" + kSourceDataFile));
  expect_runs_like_its_source(device(), Module::load(dir + "/m"));
}

TEST(SourceGraphText, ParsesBackToTheSameGraphAndRefusesBytesOutsideBoth) {
  const ir::Graph g = projection_graph();
  ModuleImage image;
  image.constants.assign(100, 0);  // no constant tensors: every large constant goes to data
  SourceFiles files = print_source(g, image);
  EXPECT_EQ(files.data.size(), size_t(kRows * kCols * 4));
  EXPECT_NE(files.text.find("dense_at<100>"), std::string::npos) << files.text;  // source.bin follows constants.bin
  EXPECT_EQ(ir::print_graph(parse_source(files, image.constants, "s.vkir")), ir::print_graph(g));
  // Cut short: the weight now reaches past the end of source.bin.
  files.data.resize(files.data.size() - 1);
  try {
    parse_source(files, image.constants, "s.vkir");
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("s.vkir:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lie outside the constant bytes kept beside the text"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vkc::api_test
