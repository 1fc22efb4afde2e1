#include "module/device_fit.h"

#include <algorithm>
#include <set>

#include "support/error.h"

namespace vkc {

namespace {

// A device feature that a SPIR-V capability or extension needs, by the name Vulkan gives it.
struct FeatureNeed {
  const char* spirv;    // capability or extension name
  const char* feature;  // Vulkan feature or extension the device must offer
  bool TargetLimits::*has;
};

// Capabilities and extensions that need no optional feature (Shader, GroupNonUniform basics, the
// Vulkan memory model vkc's tensor-core kernels declare alongside VK_NV_cooperative_matrix, ...)
// are not listed: every Vulkan 1.1 device vkc runs on accepts them, or the listed feature implies them.
constexpr FeatureNeed kCapabilityNeeds[] = {
    {"Float16", "shaderFloat16", &TargetLimits::shader_float16},
    {"Int8", "shaderInt8", &TargetLimits::shader_int8},
    {"Int64", "shaderInt64", &TargetLimits::shader_int64},
    {"StorageBuffer16BitAccess", "storageBuffer16BitAccess", &TargetLimits::storage_buffer_16bit},
    {"UniformAndStorageBuffer16BitAccess", "storageBuffer16BitAccess", &TargetLimits::storage_buffer_16bit},
    {"StorageBuffer8BitAccess", "storageBuffer8BitAccess", &TargetLimits::storage_buffer_8bit},
    {"UniformAndStorageBuffer8BitAccess", "storageBuffer8BitAccess", &TargetLimits::storage_buffer_8bit},
    {"GroupNonUniformArithmetic", "subgroup arithmetic", &TargetLimits::subgroup_arithmetic},
    {"GroupNonUniformShuffle", "subgroup shuffle", &TargetLimits::subgroup_shuffle},
    {"GroupNonUniformBallot", "subgroup ballot", &TargetLimits::subgroup_ballot},
    {"CooperativeMatrixNV", "VK_NV_cooperative_matrix", &TargetLimits::cooperative_matrix_nv},
    {"CooperativeMatrixKHR", "VK_KHR_cooperative_matrix", &TargetLimits::cooperative_matrix_khr},
};
constexpr FeatureNeed kExtensionNeeds[] = {
    {"SPV_NV_cooperative_matrix", "VK_NV_cooperative_matrix", &TargetLimits::cooperative_matrix_nv},
    {"SPV_KHR_cooperative_matrix", "VK_KHR_cooperative_matrix", &TargetLimits::cooperative_matrix_khr},
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A manifest written before format version 2 records no subgroup requirement: a kernel that uses
// subgroup operations beyond the basic ones (or cooperative matrices) may have been planned for the
// profile's subgroup sizes, so those are required.
std::array<uint32_t, 2> legacy_subgroup_sizes(const TargetLimits& target, const SpirvUsage& spirv) {
  bool relies = false;
  for (const std::string& c : spirv.capabilities)
    relies = relies || (c.rfind("GroupNonUniform", 0) == 0 && c != "GroupNonUniform") ||
             c.rfind("CooperativeMatrix", 0) == 0;
  if (!relies || target.min_subgroup_size == 0 || target.max_subgroup_size < target.min_subgroup_size) return {0, 0};
  return {target.min_subgroup_size, target.max_subgroup_size};
}

DispatchUsage usage_of(const Manifest& m, const DispatchDesc& d, const std::vector<uint32_t>* words) {
  DispatchUsage u;
  for (uint32_t s : d.workgroup_size) u.invocations *= s;
  for (const BindingDesc& b : d.bindings) {
    const uint64_t bytes = m.tensor(b.tensor).size_bytes();
    if (bytes > u.largest_binding_bytes || u.largest_binding.empty()) {
      u.largest_binding_bytes = bytes;
      u.largest_binding = b.tensor;
    }
  }
  u.push_constant_bytes = uint32_t(d.push_constants.size() * 4);
  u.subgroup_sizes = d.subgroup_sizes;
  u.spirv = d.spirv;
  if (u.spirv.version.empty() && words) {
    u.spirv = read_spirv_usage(*words);
    u.subgroup_sizes = legacy_subgroup_sizes(m.target, u.spirv);
  }
  return u;
}

std::string range_str(uint32_t lo, uint32_t hi) { return lo == hi ? cat(lo) : cat(lo, "..", hi); }

}  // namespace

std::string subgroup_pin_misfit(uint32_t size, const TargetLimits& device) {
  const uint32_t lo = device.min_subgroup_size, hi = device.max_subgroup_size;
  if (lo == 0) return "";  // unknown: nothing to judge (profiles without subgroup facts)
  if (size < lo || size > hi)
    return cat("requires subgroup size ", size, ", the device has ", range_str(lo, hi));
  if (lo != hi && !device.subgroup_size_control)
    return cat("requires subgroup size ", size, ", the device has ", range_str(lo, hi),
               " and cannot pin one for compute (subgroupSizeControl, requiredSubgroupSizeStages)");
  return "";
}

DispatchUsage dispatch_usage(const ModuleImage& module, const DispatchDesc& d) {
  auto it = module.spirv.find(d.spv);
  return usage_of(module.manifest, d, it == module.spirv.end() ? nullptr : &it->second);
}

std::vector<std::string> unmet_usage(const ModuleImage& module, const TargetLimits& device) {
  std::vector<std::string> out;
  for (const DispatchDesc& d : module.manifest.dispatches) {
    const DispatchUsage u = dispatch_usage(module, d);
    const std::string who = cat("dispatch '", d.name, "' ");
    auto most = [&](uint64_t used, uint64_t limit, const std::string& what, const std::string& limit_name) {
      if (used > limit) out.push_back(cat(who, what, ", the device allows ", limit, " (", limit_name, ")"));
    };
    most(d.workgroup_memory_bytes, device.max_compute_shared_memory_size,
         cat("uses ", d.workgroup_memory_bytes, " bytes of workgroup memory"), "maxComputeSharedMemorySize");
    most(u.invocations, device.max_compute_work_group_invocations,
         cat("uses ", u.invocations, " invocations per workgroup"), "maxComputeWorkGroupInvocations");
    for (int a = 0; a < 3; ++a) {
      most(d.workgroup_size[a], device.max_compute_work_group_size[a],
           cat("has a workgroup ", d.workgroup_size[a], " invocations wide along axis ", a),
           cat("maxComputeWorkGroupSize[", a, "]"));
      most(d.workgroup_count[a], device.max_compute_work_group_count[a],
           cat("launches ", d.workgroup_count[a], " workgroups along axis ", a),
           cat("maxComputeWorkGroupCount[", a, "]"));
    }
    most(d.bindings.size(), device.max_per_stage_descriptor_storage_buffers,
         cat("binds ", d.bindings.size(), " storage buffers"), "maxPerStageDescriptorStorageBuffers");
    most(u.largest_binding_bytes, device.max_storage_buffer_range,
         cat("binds ", u.largest_binding_bytes, " bytes of tensor '", u.largest_binding, "'"), "maxStorageBufferRange");
    most(u.push_constant_bytes, device.max_push_constants_size,
         cat("uses ", u.push_constant_bytes, " bytes of push constants"), "maxPushConstantsSize");
    const auto [lo, hi] = u.subgroup_sizes;
    if (d.required_subgroup_size != 0) {
      if (std::string why = subgroup_pin_misfit(d.required_subgroup_size, device); !why.empty())
        out.push_back(cat(who, why));
    } else if (lo != 0 && device.min_subgroup_size != 0 &&
               (device.min_subgroup_size < lo || device.max_subgroup_size > hi)) {
      out.push_back(cat(who, "relies on subgroup size ", range_str(lo, hi), ", the device has ",
                        range_str(device.min_subgroup_size, device.max_subgroup_size)));
    }
    if (u.spirv.version.empty()) continue;
    const std::string vulkan = vulkan_version_for_spirv(u.spirv.version);
    // "1.1" < "1.2" < "1.3" compare correctly as strings.
    if (vulkan > device.vulkan_version)
      out.push_back(cat(who, "is SPIR-V ", u.spirv.version, ", which needs Vulkan ", vulkan, ", the device has Vulkan ",
                        device.vulkan_version));
    std::set<std::string> missing;  // one line per feature, however many capabilities need it
    for (const FeatureNeed& n : kCapabilityNeeds)
      if (contains(u.spirv.capabilities, n.spirv) && !(device.*n.has) && missing.insert(n.feature).second)
        out.push_back(cat(who, "uses ", n.feature, " (SPIR-V capability ", n.spirv, "), which the device lacks"));
    for (const FeatureNeed& n : kExtensionNeeds)
      if (contains(u.spirv.extensions, n.spirv) && !(device.*n.has) && missing.insert(n.feature).second)
        out.push_back(cat(who, "uses ", n.feature, " (SPIR-V extension ", n.spirv, "), which the device lacks"));
  }
  return out;
}

std::string requirements_summary(const Manifest& m) {
  uint64_t memory = 0, invocations = 0, binding = 0, push = 0;
  std::array<uint32_t, 2> subgroups{0, 0};
  bool pinned = false;  // some dispatch requires its subgroup size at pipeline creation
  std::string spirv;
  std::set<std::string> capabilities, extensions;
  for (const DispatchDesc& d : m.dispatches) {
    const DispatchUsage u = usage_of(m, d, nullptr);
    memory = std::max<uint64_t>(memory, d.workgroup_memory_bytes);
    invocations = std::max(invocations, u.invocations);
    binding = std::max(binding, u.largest_binding_bytes);
    push = std::max<uint64_t>(push, u.push_constant_bytes);
    pinned = pinned || d.required_subgroup_size != 0;
    if (u.subgroup_sizes[0] != 0) {
      subgroups[0] = std::max(subgroups[0], u.subgroup_sizes[0]);
      subgroups[1] = subgroups[1] == 0 ? u.subgroup_sizes[1] : std::min(subgroups[1], u.subgroup_sizes[1]);
    }
    spirv = std::max(spirv, u.spirv.version);
    capabilities.insert(u.spirv.capabilities.begin(), u.spirv.capabilities.end());
    extensions.insert(u.spirv.extensions.begin(), u.spirv.extensions.end());
  }
  std::string s = cat("requires: ", memory, " bytes of workgroup memory, ", invocations, " invocations per workgroup, ",
                      binding, "-byte storage bindings, ", push, " bytes of push constants");
  if (subgroups[0] != 0) s += cat(", subgroup size ", range_str(subgroups[0], subgroups[1]));
  if (pinned) s += " (pinned: subgroupSizeControl)";
  if (!spirv.empty()) s += cat(", SPIR-V ", spirv, " (Vulkan ", vulkan_version_for_spirv(spirv), ")");
  capabilities.erase("Shader");  // every compute shader declares it
  if (!capabilities.empty()) {
    s += ", capabilities";
    for (const std::string& c : capabilities) s += " " + c;
  }
  if (!extensions.empty()) {
    s += ", extensions";
    for (const std::string& e : extensions) s += " " + e;
  }
  return s;
}

}  // namespace vkc
