// What one SPIR-V module asks of a device: its version, capabilities and extensions, read from the
// binary itself. The compiler records them in the manifest and the loader re-reads them from the
// .spv of a module written before they were recorded, so both come from the same words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkc {

struct SpirvUsage {
  std::string version;                    // "1.5"
  std::vector<std::string> capabilities;  // "Shader", "Float16", ... ("Capability4466" if unnamed)
  std::vector<std::string> extensions;    // "SPV_KHR_16bit_storage", ...
};

// Reads the header and the OpCapability / OpExtension instructions; vkc::Error on a malformed
// module (load_spirv in manifest.cpp has already refused those for files read from disk).
SpirvUsage read_spirv_usage(const std::vector<uint32_t>& words);

// The oldest Vulkan version whose environment accepts SPIR-V `version` ("1.3" -> "1.1",
// "1.5" -> "1.2", "1.6" -> "1.3"; older SPIR-V -> "1.1", vkc's floor).
std::string vulkan_version_for_spirv(const std::string& version);

}  // namespace vkc
