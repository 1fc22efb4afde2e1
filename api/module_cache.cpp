#include "api/module_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "api/impl.h"
#include "module/cache_dir.h"
#include "module/module_file.h"
#include "runtime/pipeline_cache.h"
#include "support/content_hash.h"
#include "support/version.h"

namespace vkc {

namespace {

// The entry's own record of the graph it was compiled from, beside source.vkir.
constexpr const char* kDigestSection = "cache_key.txt";

// The file that holds this code (the executable, or a shared libvkc), by size and modification
// time: vkc's version does not change with every rebuild, the binary does.
std::string build_identity() {
  Dl_info info{};
  std::string file = "/proc/self/exe";
  if (dladdr(reinterpret_cast<const void*>(&build_identity), &info) != 0 && info.dli_fname && *info.dli_fname)
    file = info.dli_fname;
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0 && ::stat("/proc/self/exe", &st) != 0) return "unknown";
  return cat(uint64_t(st.st_size), ":", int64_t(st.st_mtim.tv_sec), ".", int64_t(st.st_mtim.tv_nsec));
}

}  // namespace

std::string module_cache_path(const std::string& dir, const std::string& graph_digest,
                                    const TargetLimits& target, const std::string& target_name,
                                    Precision precision, const Device& device) {
  static const std::string build = build_identity();
  std::string key_text = cat("vkc ", vkc_version(), "\nbuild ", build, "\nformat ", kModuleFormatVersion,
                             "\ncontainer ", kModuleFileVersion, "\ntarget ", target_name, " ",
                             nlohmann::json(target).dump(), "\nprecision ", precision_name(precision), "\n");
  if (target_name == "host") {
    // The limits above are what the compiler reads; the device and driver identity (the same key
    // the pipeline cache uses) keeps a driver update from reusing the entry all the same.
    key_text += cat("device ", hash_hex(rt::device_cache_key(device.impl()->context->impl())), " ",
                    device.info().name, "\n");
  }
  uint64_t key = content_hash(key_text.data(), key_text.size());
  key = content_hash(graph_digest.data(), graph_digest.size(), key);
  return dir + "/" + hash_hex(key) + ".vkcm";
}

std::optional<ModuleImage> module_cache_load(const std::string& path, const std::string& graph_digest) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  try {
    ModuleExtras extras;
    ModuleImage image = read_module_file(path, &extras);
    auto digest = extras.find(kDigestSection);
    if (digest == extras.end() || digest->second != graph_digest) return std::nullopt;
    return image;
  } catch (const Error&) {
    return std::nullopt;  // damaged or foreign: compiled again and rewritten
  }
}

void module_cache_store(const std::string& path, const ModuleImage& image, const std::string& graph_digest) {
  const std::vector<uint8_t> bytes = pack_module_file(image, {{kDigestSection, graph_digest}});
  write_cache_file(path, bytes.data(), bytes.size());
}

}  // namespace vkc
