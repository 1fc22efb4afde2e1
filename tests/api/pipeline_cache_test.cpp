// The persistent pipeline cache (created, reused, corrupted files tolerated) and the in-process
// SPIR-V cache.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "api/api_helpers.h"
#include "codegen/spirv_cache.h"

namespace vkc::api_test {
namespace {

namespace fs = std::filesystem;
using PipelineCacheApi = ApiTest;

std::vector<fs::path> cache_files(const std::string& dir) {
  std::vector<fs::path> files;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".vkpc") files.push_back(e.path());
  return files;
}

TEST_F(PipelineCacheApi, CreatedThenReused) {
  std::string dir = scratch_dir("cache") + "/vkc";
  Module m = Module::compile(small_graph(), device());
  SessionOptions so;
  so.pipeline_cache_dir = dir;
  {
    Session s(device(), m, so);
    EXPECT_FALSE(s.pipeline_cache_hit());
  }
  std::vector<fs::path> files = cache_files(dir);
  ASSERT_EQ(files.size(), 1u) << "no cache file in " << dir;
  EXPECT_GT(fs::file_size(files[0]), 24u);
  Session again(device(), m, so);
  EXPECT_TRUE(again.pipeline_cache_hit());
  EXPECT_NO_THROW(again.run({{{"x", iota_f32({64})}}}));
}

TEST_F(PipelineCacheApi, CorruptedFilesAreIgnored) {
  std::string dir = scratch_dir("cache");
  Module m = Module::compile(small_graph(), device());
  SessionOptions so;
  so.pipeline_cache_dir = dir;
  { Session s(device(), m, so); }
  std::vector<fs::path> files = cache_files(dir);
  ASSERT_EQ(files.size(), 1u);
  const fs::path file = files[0];
  std::ifstream in(file, std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5A;
  for (const std::string& bad : {std::string("garbage"), good.substr(0, good.size() / 2), flipped, std::string()}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bad;
    Session s(device(), m, so);
    EXPECT_FALSE(s.pipeline_cache_hit());
    EXPECT_NO_THROW(s.run({{{"x", iota_f32({64})}}}));
  }
  // The last session rewrote a valid file.
  EXPECT_TRUE(Session(device(), m, so).pipeline_cache_hit());
}

TEST_F(PipelineCacheApi, DefaultDirectoryFollowsXdgCacheHome) {
  std::string home = scratch_dir("xdg");
  // VKC_CACHE_DIR comes first; unset here so that XDG_CACHE_HOME decides.
  const char* old_vkc = std::getenv("VKC_CACHE_DIR");
  std::string saved_vkc = old_vkc ? old_vkc : "";
  unsetenv("VKC_CACHE_DIR");
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", home.c_str(), 1);
  { Session s(device(), Module::compile(small_graph(32), device())); }
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_CACHE_HOME");
  if (old_vkc) setenv("VKC_CACHE_DIR", saved_vkc.c_str(), 1);
  // The pipelines kind of vkc's one cache directory (module/cache_dir.h).
  EXPECT_EQ(cache_files(home + "/vkc/pipelines").size(), 1u);
}

TEST_F(PipelineCacheApi, SecondCompileReusesSpirv) {
  codegen::SpirvCache& cache = codegen::SpirvCache::process();
  cache.clear();
  Module first = Module::compile(small_graph(96), device());
  const size_t compiled = cache.misses();
  EXPECT_GE(compiled, 1u);
  // The same kernels again (same GLSL, same target): no glslang, no spirv-opt.
  Module second = Module::compile(small_graph(96), device());
  EXPECT_EQ(cache.misses(), compiled);
  EXPECT_EQ(cache.hits(), first.dispatch_count());
  // Another target is another key.
  CompileOptions other;
  other.target = "vulkan-min";
  Module::compile(small_graph(96), device(), other);
  EXPECT_GT(cache.misses(), compiled);
}

}  // namespace
}  // namespace vkc::api_test
