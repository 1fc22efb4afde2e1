// vkc's one cache directory: where the root is, and entries written atomically (concurrent
// writers and readers never see part of an entry).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/scoped_env.h"
#include "module/cache_dir.h"
#include "support/file_io.h"

namespace vkc {
namespace {

using test::ScopedEnv;

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/vkc-cache-dir-test-" + name;
  fs::remove_all(dir);
  return dir;
}

TEST(CacheDir, RootPrecedence) {
  ScopedEnv a("VKC_CACHE_DIR", "/v"), b("XDG_CACHE_HOME", "/x"), c("HOME", "/h");
  EXPECT_EQ(cache_root(), "/v");
  EXPECT_EQ(cache_dir(kModuleCacheKind), "/v/modules");
  {
    ScopedEnv off("VKC_CACHE_DIR", "");
    EXPECT_EQ(cache_root(), "/x/vkc");
    EXPECT_EQ(cache_dir(kPipelineCacheKind), "/x/vkc/pipelines");
    ScopedEnv off2("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(cache_root(), "/h/.cache/vkc");
    ScopedEnv off3("HOME", nullptr);
    EXPECT_EQ(cache_root(), "");
    EXPECT_EQ(cache_dir(kModuleCacheKind), "");
  }
}

TEST(CacheDir, WritesCreateTheDirectoryAndReplaceWholeFiles) {
  const std::string dir = fresh_dir("write");
  const std::string path = dir + "/kind/entry.bin";
  ASSERT_TRUE(write_cache_file(path, "first", 5));
  EXPECT_EQ(read_text_file(path), "first");
  ASSERT_TRUE(write_cache_file(path, "2nd", 3));
  EXPECT_EQ(read_text_file(path), "2nd");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir + "/kind")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "a temporary file was left behind";
  // Below a regular file no directory can be made: false, and no exception (a cache only saves time).
  EXPECT_FALSE(write_cache_file(path + "/below/x.bin", "x", 1));
}

TEST(CacheDir, ConcurrentWritersNeverLeaveAPartialEntry) {
  const std::string path = fresh_dir("race") + "/entry.bin";
  const std::string a(1 << 18, 'a'), b(1 << 17, 'b');
  ASSERT_TRUE(write_cache_file(path, a.data(), a.size()));
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      const std::string& s = w % 2 ? a : b;
      for (int i = 0; i < 40; ++i) write_cache_file(path, s.data(), s.size());
    });
  int bad = 0;
  for (int i = 0; i < 200; ++i) {
    std::string seen = read_text_file(path);
    bad += seen != a && seen != b;
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(bad, 0) << "a reader saw part of an entry";
  std::string last = read_text_file(path);
  EXPECT_TRUE(last == a || last == b);
}

}  // namespace
}  // namespace vkc
