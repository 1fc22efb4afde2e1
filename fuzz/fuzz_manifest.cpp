// libFuzzer target: the module manifest loader (manifest_from_json), which is the trust boundary
// of the runtime: a module directory may come from anywhere. Properties: a one-line vkc::Error or
// a manifest whose cross-references hold, and manifest_to_json -> manifest_from_json is stable.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "module/manifest.h"
#include "support/error.h"

namespace {

// What the loader promises about an accepted manifest (module/manifest.h): spv names stay inside
// the module directory and every binding names a known tensor whose storage resolves.
void check_accepted(const vkc::Manifest& m) {
  for (const vkc::DispatchDesc& d : m.dispatches) {
    if (d.spv.empty() || d.spv.find('/') != std::string::npos || d.spv.find('\\') != std::string::npos ||
        d.spv == "." || d.spv == "..")
      vkc::fuzz::fail("accepted a .spv name that leaves the module directory: '" + d.spv + "'");
    for (const vkc::BindingDesc& b : d.bindings) {
      if (!m.find_tensor(b.tensor)) vkc::fuzz::fail("accepted a binding of unknown tensor " + b.tensor);
      m.storage_of(b.tensor);  // throws (a bug, escaping as a non-vkc failure) if views do not resolve
    }
  }
  if (m.constants_file.find('/') != std::string::npos || m.constants_file == "..")
    vkc::fuzz::fail("accepted a constants file outside the module directory: " + m.constants_file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 32768) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  vkc::Manifest manifest;
  try {
    manifest = vkc::manifest_from_json(text, "fuzz/manifest.json");
  } catch (const vkc::Error& e) {
    vkc::fuzz::check_error_message(e.what());
    return 0;
  }
  try {
    check_accepted(manifest);
  } catch (const vkc::Error& e) {
    vkc::fuzz::fail(std::string("accepted manifest does not resolve: ") + e.what());
  }
  std::string once = vkc::manifest_to_json(manifest);
  std::string twice;
  try {
    twice = vkc::manifest_to_json(vkc::manifest_from_json(once, "reprinted.json"));
  } catch (const vkc::Error& e) {
    vkc::fuzz::fail(std::string("manifest_to_json output does not load: ") + e.what());
  }
  if (once != twice) vkc::fuzz::fail("manifest JSON round trip is not stable");
  return 0;
}
