// Linked into every test binary that touches a device (tests/CMakeLists.txt), and into the CLIs of
// sanitizer builds, which the hostile tests run as child processes (tools/CMakeLists.txt).
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace vkc::test {
namespace {

// Keeps the Vulkan drivers and layers mapped until the process ends. The loader dlopens every
// installed ICD to enumerate devices (lavapipe, but also RADV and ANV on a machine without their
// GPUs) and every implicit or enabled layer, and dlcloses them when the instance goes away, before
// LeakSanitizer's exit-time check runs: their process-lifetime allocations would then have
// "<unknown module>" stacks that no suppression can name, and the device suites could not run with
// leak detection (scripts/test-sanitizers.sh). So every library the loader's manifest directories
// name is dlopened here with RTLD_NODELETE, which makes the loader's later dlclose a no-op; one
// that does not load is skipped. Every device test binary links this file: this runs before main().
std::vector<std::string> loader_manifest_libraries() {
  std::vector<std::string> libs;
  for (const char* dir : {"/usr/share/vulkan/icd.d", "/usr/share/vulkan/explicit_layer.d",
                          "/usr/share/vulkan/implicit_layer.d", "/etc/vulkan/icd.d",
                          "/etc/vulkan/explicit_layer.d", "/etc/vulkan/implicit_layer.d"}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      std::ifstream in(entry.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      size_t key = text.find("\"library_path\"");
      if (key == std::string::npos) continue;
      size_t open = text.find('"', text.find(':', key));
      size_t close = open == std::string::npos ? open : text.find('"', open + 1);
      if (close == std::string::npos) continue;
      std::string lib = text.substr(open + 1, close - open - 1);
      // A relative path with a directory is relative to the manifest; a bare name goes to dlopen.
      if (lib.find('/') != std::string::npos && lib[0] != '/') lib = (entry.path().parent_path() / lib).string();
      libs.push_back(lib);
    }
  }
  return libs;
}

[[maybe_unused]] const bool drivers_pinned = [] {
  for (const std::string& lib : loader_manifest_libraries()) dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  return true;
}();


}  // namespace
}  // namespace vkc::test
