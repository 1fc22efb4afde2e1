#include "runtime/pipeline.h"

#include <set>

#include "module/device_fit.h"
#include "support/error.h"

namespace vkc::rt {

std::optional<SubgroupSizePin> subgroup_size_pin(const DispatchDesc& d, const TargetLimits& device,
                                                 bool compute_full_subgroups) {
  const uint32_t size = d.required_subgroup_size;
  if (size == 0) return std::nullopt;
  if (std::string why = subgroup_pin_misfit(size, device); !why.empty())
    throw Error(cat("dispatch '", d.name, "' ", why));
  if (!device.subgroup_size_control) return std::nullopt;  // the device's one size is `size`
  SubgroupSizePin pin;
  pin.info = vk_struct<VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT);
  pin.info.requiredSubgroupSize = size;
  // Cooperative matrices need every invocation of a subgroup active: with full subgroups the
  // workgroup's width must be a multiple of the size, which tensor-core workgroups are.
  if (compute_full_subgroups && d.workgroup_size[0] % size == 0)
    pin.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT;
  return pin;
}

DispatchPipeline::DispatchPipeline(Context::Impl& ctx, const DispatchDesc& d,
                                   const std::vector<uint32_t>& spirv, VkPipelineCache cache) {
  VkDevice device = ctx.device;
  const VolkDeviceTable& vk = ctx.vk;
  check(spirv.size() >= 5 && spirv[0] == 0x07230203u, "dispatch '", d.name, "': '", d.spv,
        "' is not a SPIR-V module");

  VkShaderModuleCreateInfo shader_info = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  shader_info.codeSize = spirv.size() * 4;
  shader_info.pCode = spirv.data();
  VkShaderModule shader = VK_NULL_HANDLE;
  vk_check(vk.vkCreateShaderModule(device, &shader_info, nullptr, &shader), "vkCreateShaderModule", d.name);
  shader_ = Unique<VkShaderModule>(shader, [&vk, device](VkShaderModule h) { vk.vkDestroyShaderModule(device, h, nullptr); });

  std::vector<VkDescriptorSetLayoutBinding> bindings;
  std::set<uint32_t> seen;
  for (const BindingDesc& b : d.bindings) {
    check(seen.insert(b.binding).second, "dispatch '", d.name, "': binding ", b.binding, " is used twice");
    VkDescriptorSetLayoutBinding lb{};
    lb.binding = b.binding;
    lb.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    lb.descriptorCount = 1;
    lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(lb);
  }
  VkDescriptorSetLayoutCreateInfo set_info = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  set_info.bindingCount = uint32_t(bindings.size());
  set_info.pBindings = bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  vk_check(vk.vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout),
           "vkCreateDescriptorSetLayout", d.name);
  set_layout_ = Unique<VkDescriptorSetLayout>(
      set_layout, [&vk, device](VkDescriptorSetLayout h) { vk.vkDestroyDescriptorSetLayout(device, h, nullptr); });

  const uint32_t push_bytes = uint32_t(d.push_constants.size() * 4);
  check(push_bytes <= ctx.limits.max_push_constants_size, "dispatch '", d.name, "': ", push_bytes,
        " bytes of push constants exceed maxPushConstantsSize ", ctx.limits.max_push_constants_size);
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo layout_info = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = push_bytes ? 1 : 0;
  layout_info.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  vk_check(vk.vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout", d.name);
  layout_ = Unique<VkPipelineLayout>(layout, [&vk, device](VkPipelineLayout h) { vk.vkDestroyPipelineLayout(device, h, nullptr); });

  // Each spec constant is one 32-bit word; the pattern is passed through unchanged.
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  for (const SpecConstant& s : d.spec_constants) {
    entries.push_back({s.id, uint32_t(values.size() * 4), 4});
    values.push_back(s.value);
  }
  VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), values.size() * 4, values.data()};

  VkComputePipelineCreateInfo info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = shader;
  info.stage.pName = d.entry_point.c_str();
  info.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  info.layout = layout;
  const std::optional<SubgroupSizePin> pin = subgroup_size_pin(d, ctx.limits, ctx.caps.compute_full_subgroups);
  if (pin) {
    info.stage.pNext = &pin->info;
    info.stage.flags |= pin->flags;
  }
  if (ctx.pipeline_statistics) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipeline pipeline = VK_NULL_HANDLE;
  vk_check(vk.vkCreateComputePipelines(device, cache, 1, &info, nullptr, &pipeline),
           "vkCreateComputePipelines", d.name);
  pipeline_ = Unique<VkPipeline>(pipeline, [&vk, device](VkPipeline h) { vk.vkDestroyPipeline(device, h, nullptr); });
  if (ctx.pipeline_statistics) statistics_ = read_statistics(ctx);
}

std::vector<std::string> DispatchPipeline::read_statistics(Context::Impl& ctx) const {
  const VolkDeviceTable& vk = ctx.vk;
  VkPipelineInfoKHR pipeline_info = vk_struct<VkPipelineInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR);
  pipeline_info.pipeline = pipeline_.get();
  uint32_t executables = 0;
  if (vk.vkGetPipelineExecutablePropertiesKHR(ctx.device, &pipeline_info, &executables, nullptr) != VK_SUCCESS)
    return {};
  std::vector<std::string> out;
  for (uint32_t e = 0; e < executables; ++e) {
    VkPipelineExecutableInfoKHR exec = vk_struct<VkPipelineExecutableInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR);
    exec.pipeline = pipeline_.get();
    exec.executableIndex = e;
    uint32_t count = 0;
    if (vk.vkGetPipelineExecutableStatisticsKHR(ctx.device, &exec, &count, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> stats(
        count, vk_struct<VkPipelineExecutableStatisticKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR));
    if (vk.vkGetPipelineExecutableStatisticsKHR(ctx.device, &exec, &count, stats.data()) != VK_SUCCESS) continue;
    for (const VkPipelineExecutableStatisticKHR& s : stats) {
      std::string value;
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: value = s.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: value = std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: value = std::to_string(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: value = std::to_string(s.value.f64); break;
        default: value = "?";
      }
      out.push_back(cat(s.name, "=", value));
    }
  }
  return out;
}

}  // namespace vkc::rt
