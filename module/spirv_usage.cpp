#include "module/spirv_usage.h"

#include <algorithm>

#include <spirv/unified1/spirv.hpp>

#include "support/error.h"

namespace vkc {

namespace {

// Names of the capabilities vkc's kernels declare or that map to a device feature; any other is
// recorded by number, which the device check treats as core.
const char* capability_name(uint32_t c) {
  switch (static_cast<spv::Capability>(c)) {
    case spv::CapabilityShader: return "Shader";
    case spv::CapabilityFloat16: return "Float16";
    case spv::CapabilityFloat64: return "Float64";
    case spv::CapabilityInt64: return "Int64";
    case spv::CapabilityInt64Atomics: return "Int64Atomics";
    case spv::CapabilityInt16: return "Int16";
    case spv::CapabilityInt8: return "Int8";
    case spv::CapabilityStorageBuffer16BitAccess: return "StorageBuffer16BitAccess";
    case spv::CapabilityUniformAndStorageBuffer16BitAccess: return "UniformAndStorageBuffer16BitAccess";
    case spv::CapabilityStoragePushConstant16: return "StoragePushConstant16";
    case spv::CapabilityStorageBuffer8BitAccess: return "StorageBuffer8BitAccess";
    case spv::CapabilityUniformAndStorageBuffer8BitAccess: return "UniformAndStorageBuffer8BitAccess";
    case spv::CapabilityStoragePushConstant8: return "StoragePushConstant8";
    case spv::CapabilityGroupNonUniform: return "GroupNonUniform";
    case spv::CapabilityGroupNonUniformVote: return "GroupNonUniformVote";
    case spv::CapabilityGroupNonUniformArithmetic: return "GroupNonUniformArithmetic";
    case spv::CapabilityGroupNonUniformBallot: return "GroupNonUniformBallot";
    case spv::CapabilityGroupNonUniformShuffle: return "GroupNonUniformShuffle";
    case spv::CapabilityGroupNonUniformShuffleRelative: return "GroupNonUniformShuffleRelative";
    case spv::CapabilityGroupNonUniformClustered: return "GroupNonUniformClustered";
    case spv::CapabilityGroupNonUniformQuad: return "GroupNonUniformQuad";
    case spv::CapabilityVulkanMemoryModel: return "VulkanMemoryModel";
    case spv::CapabilityVulkanMemoryModelDeviceScope: return "VulkanMemoryModelDeviceScope";
    case spv::CapabilityCooperativeMatrixNV: return "CooperativeMatrixNV";
    default: break;
  }
  // Newer than Debian 12's SPIR-V headers: by number (SPIR-V registry).
  switch (c) {
    case 6022: return "CooperativeMatrixKHR";
    case spv::CapabilityPhysicalStorageBufferAddresses: return "PhysicalStorageBufferAddresses";
    default: return nullptr;
  }
}

}  // namespace

SpirvUsage read_spirv_usage(const std::vector<uint32_t>& words) {
  check(words.size() >= 5 && words[0] == spv::MagicNumber, "internal: not a SPIR-V module");
  SpirvUsage u;
  u.version = cat((words[1] >> 16) & 0xff, ".", (words[1] >> 8) & 0xff);
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xffffu;
    check(count >= 1 && i + count <= words.size(), "internal: malformed SPIR-V at word ", i);
    if (op == spv::OpCapability && count >= 2) {
      const char* name = capability_name(words[i + 1]);
      u.capabilities.push_back(name ? name : cat("Capability", words[i + 1]));
    } else if (op == spv::OpExtension && count >= 2) {
      // A literal string: UTF-8 bytes packed little-endian into words, NUL-terminated.
      std::string s;
      bool end = false;
      for (size_t w = i + 1; w < i + count && !end; ++w)
        for (int b = 0; b < 4 && !end; ++b) {
          const char c = char((words[w] >> (8 * b)) & 0xff);
          end = c == '\0';
          if (!end) s += c;
        }
      u.extensions.push_back(s);
    } else if (op == spv::OpFunction) {
      break;  // capabilities and extensions come first (SPIR-V logical layout)
    }
    i += count;
  }
  std::sort(u.capabilities.begin(), u.capabilities.end());
  u.capabilities.erase(std::unique(u.capabilities.begin(), u.capabilities.end()), u.capabilities.end());
  std::sort(u.extensions.begin(), u.extensions.end());
  u.extensions.erase(std::unique(u.extensions.begin(), u.extensions.end()), u.extensions.end());
  return u;
}

std::string vulkan_version_for_spirv(const std::string& version) {
  if (version == "1.6") return "1.3";
  if (version == "1.5" || version == "1.4") return "1.2";
  return "1.1";
}

}  // namespace vkc
