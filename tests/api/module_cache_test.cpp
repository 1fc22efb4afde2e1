// The compiled-module cache (CompileOptions::module_cache_dir): a hit instead of a compile, a miss
// for another model, option or target, damaged entries compiled again and rewritten; and
// Module::load_or_recompile for modules of another format version.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "api/api_helpers.h"
#include "ir/text_format.h"
#include "module/manifest.h"
#include "module/module_file.h"
#include "support/file_io.h"

namespace vkc::api_test {
namespace {

namespace fs = std::filesystem;
using ModuleCacheApi = ApiTest;

std::vector<fs::path> entries(const std::string& dir) {
  std::vector<fs::path> files;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string write_model(const std::string& dir, int64_t n) {
  std::string path = dir + "/model-" + std::to_string(n) + ".vkir";
  std::ofstream(path) << ir::print_graph(small_graph(n));
  return path;
}

TEST_F(ModuleCacheApi, SecondCompileLoadsTheCachedModule) {
  const std::string dir = scratch_dir("work"), cache = dir + "/modules";
  const std::string model = write_model(dir, 64);
  CompileOptions options;
  options.module_cache_dir = cache;
  Module first = Module::compile(model, device(), options);
  EXPECT_EQ(first.origin(), ModuleOrigin::Compiled);
  ASSERT_EQ(entries(cache).size(), 1u);
  Module second = Module::compile(model, device(), options);
  EXPECT_EQ(second.origin(), ModuleOrigin::Cached);
  EXPECT_EQ(second.manifest_json(), first.manifest_json());
  EXPECT_TRUE(second.has_source());  // --check still has the reference
  HostTensor x = iota_f32({64});
  EXPECT_EQ(Session(device(), second).run({{{"x", x}}}).at("y").bytes(),
            Session(device(), first).run({{{"x", x}}}).at("y").bytes());
  // Without a cache directory nothing is read or written.
  EXPECT_EQ(Module::compile(model, device()).origin(), ModuleOrigin::Compiled);
  EXPECT_EQ(entries(cache).size(), 1u);
}

TEST_F(ModuleCacheApi, AnotherModelOrTargetMisses) {
  const std::string dir = scratch_dir("work"), cache = dir + "/modules";
  CompileOptions options;
  options.module_cache_dir = cache;
  const std::string model = write_model(dir, 64);
  Module::compile(model, device(), options);
  // The same file name with other content.
  std::ofstream(model, std::ios::trunc) << ir::print_graph(small_graph(32));
  EXPECT_EQ(Module::compile(model, device(), options).origin(), ModuleOrigin::Compiled);
  EXPECT_EQ(entries(cache).size(), 2u);
  options.target = "vulkan-min";
  EXPECT_EQ(Module::compile(model, device(), options).origin(), ModuleOrigin::Compiled);
  EXPECT_EQ(Module::compile(model, device(), options).origin(), ModuleOrigin::Cached);
  EXPECT_EQ(entries(cache).size(), 3u);
}

// Weights of more than 64 elements enter the key as digests of their bytes (ir::print_graph_digest),
// not as text: one changed weight is still another key, and a hit brings the full source graph.
TEST_F(ModuleCacheApi, ALargeWeightChangedByOneValueMisses) {
  const std::string dir = scratch_dir("work"), cache = dir + "/modules";
  auto write = [&](float w7) {
    ir::Graph g;
    ir::Value* x = g.add_input("x", {DType::f32, {256}});
    HostTensor w(DType::f32, {256});
    for (int64_t i = 0; i < 256; ++i) w.set_f64(i, 0.01 * double(i));
    w.set_f64(7, w7);
    g.add_output(g.add_op(ir::OpKind::Mul, {x, g.add_constant(w, "w")}, {}, "scale")->result(), "y");
    std::ofstream(dir + "/weights.vkir", std::ios::trunc) << ir::print_graph(g);
    return dir + "/weights.vkir";
  };
  CompileOptions options;
  options.module_cache_dir = cache;
  const std::string model = write(0.07f);
  EXPECT_EQ(Module::compile(model, device(), options).origin(), ModuleOrigin::Compiled);
  Module hit = Module::compile(model, device(), options);
  EXPECT_EQ(hit.origin(), ModuleOrigin::Cached);
  const HostTensor x = iota_f32({256});
  EXPECT_NEAR(hit.reference({{"x", x}}).at("y").get_f64(7), x.get_f64(7) * 0.07, 1e-9);
  write(0.5f);
  Module changed = Module::compile(model, device(), options);
  EXPECT_EQ(changed.origin(), ModuleOrigin::Compiled);
  EXPECT_NEAR(changed.reference({{"x", x}}).at("y").get_f64(7), x.get_f64(7) * 0.5, 1e-9);
  EXPECT_EQ(entries(cache).size(), 2u);
}

TEST_F(ModuleCacheApi, DamagedEntriesAreCompiledAgainAndRewritten) {
  const std::string dir = scratch_dir("work"), cache = dir + "/modules";
  const std::string model = write_model(dir, 64);
  CompileOptions options;
  options.module_cache_dir = cache;
  Module::compile(model, device(), options);
  ASSERT_EQ(entries(cache).size(), 1u);
  const fs::path entry = entries(cache)[0];
  std::ifstream in(entry, std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5A;
  // Garbage, cut short, one flipped byte, empty, and a valid module of another graph under this key.
  Module other = Module::compile(small_graph(16), device());
  other.save(dir + "/other.vkcm");
  std::ifstream oin(dir + "/other.vkcm", std::ios::binary);
  const std::string foreign((std::istreambuf_iterator<char>(oin)), std::istreambuf_iterator<char>());
  for (const std::string& bad : {std::string("garbage"), good.substr(0, good.size() / 2), flipped, std::string(),
                                 foreign}) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
    Module m = Module::compile(model, device(), options);
    EXPECT_EQ(m.origin(), ModuleOrigin::Compiled);
    EXPECT_EQ(m.inputs().at(0).shape, (Shape{64}));
    EXPECT_EQ(Module::compile(model, device(), options).origin(), ModuleOrigin::Cached) << "not rewritten";
  }
  EXPECT_EQ(entries(cache).size(), 1u);
}

TEST_F(ModuleCacheApi, LoadOrRecompileTakesModulesOfAnotherFormat) {
  const std::string dir = scratch_dir("work");
  Module::compile(small_graph(), device()).save(dir + "/m");
  const std::string manifest = dir + "/m/manifest.json";
  std::ifstream in(manifest);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string ours = "\"format_version\": " + std::to_string(kModuleFormatVersion);
  const size_t at = text.find(ours);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, ours.size(), "\"format_version\": " + std::to_string(kModuleFormatVersion + 1));
  std::ofstream(manifest, std::ios::trunc) << text;

  EXPECT_THROW(Module::load(dir + "/m"), Error);
  Module m = Module::load_or_recompile(dir + "/m", device());
  EXPECT_EQ(m.origin(), ModuleOrigin::Recompiled);
  EXPECT_NO_THROW(Session(device(), m).run({{{"x", iota_f32({64})}}}));
  // The same for a .vkcm: its source graph is read from the container without the manifest.
  Module::compile(small_graph(), device()).save(dir + "/newer.vkcm");
  std::vector<uint8_t> bytes = read_file(dir + "/newer.vkcm");
  std::string flat(bytes.begin(), bytes.end());
  const size_t in_file = flat.find(ours + ",");
  ASSERT_NE(in_file, std::string::npos);
  bytes[in_file + ours.size() - 1] = uint8_t('0' + (kModuleFormatVersion + 1) % 10);
  const uint64_t sum = module_file_checksum(bytes.data() + 32, bytes.size() - 32);  // the container's checksum
  std::memcpy(bytes.data() + 24, &sum, 8);
  write_file(dir + "/newer.vkcm", bytes.data(), bytes.size());
  EXPECT_THROW(Module::load(dir + "/newer.vkcm"), Error);
  Module from_file = Module::load_or_recompile(dir + "/newer.vkcm", device());
  EXPECT_EQ(from_file.origin(), ModuleOrigin::Recompiled);
  EXPECT_NO_THROW(Session(device(), from_file).run({{{"x", iota_f32({64})}}}));
  // A module of this format is just loaded.
  Module::compile(small_graph(), device()).save(dir + "/ok.vkcm");
  EXPECT_EQ(Module::load_or_recompile(dir + "/ok.vkcm", device()).origin(), ModuleOrigin::Loaded);
}

}  // namespace
}  // namespace vkc::api_test
