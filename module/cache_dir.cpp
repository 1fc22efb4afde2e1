#include "module/cache_dir.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace vkc {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

std::string cache_root() {
  if (std::string dir = env("VKC_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/vkc";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.cache/vkc";
  return "";
}

std::string cache_dir(const std::string& kind) {
  std::string root = cache_root();
  return root.empty() ? root : root + "/" + kind;
}

bool write_cache_file(const std::string& path, const void* data, size_t size) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  // The process id and a counter keep two writers' temporary files apart (processes, threads);
  // the rename is atomic within a directory (POSIX), so the last writer's complete entry wins.
  static std::atomic<unsigned> serial{0};
  const std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(static_cast<const char*>(data), std::streamsize(size));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace vkc
