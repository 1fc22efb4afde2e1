// One compute pipeline per dispatch: shader module, descriptor set layout, pipeline layout (with
// the dispatch's push-constant range) and the pipeline specialized with its spec constants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "module/manifest.h"
#include "runtime/context_internal.h"
#include "runtime/vk_util.h"

namespace vkc::rt {

// How a dispatch's compute stage pins its subgroup size (DispatchDesc::required_subgroup_size):
// the create info to chain and whether to require full subgroups too. Nothing where the dispatch
// pins none, or where the device has exactly that one size and no subgroupSizeControl.
struct SubgroupSizePin {
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT info{};
  VkPipelineShaderStageCreateFlags flags = 0;  // REQUIRE_FULL_SUBGROUPS where the device offers it
};
// Throws vkc::Error (one line naming the dispatch) where the device cannot give that size; the
// module's device check (module/device_fit.h) refuses such a module before this is reached.
std::optional<SubgroupSizePin> subgroup_size_pin(const DispatchDesc& d, const TargetLimits& device,
                                                 bool compute_full_subgroups);

class DispatchPipeline {
 public:
  // `cache` (optional) is a VkPipelineCache shared by a module's pipelines (runtime/pipeline_cache.h).
  DispatchPipeline(Context::Impl& ctx, const DispatchDesc& dispatch, const std::vector<uint32_t>& spirv,
                   VkPipelineCache cache = VK_NULL_HANDLE);

  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
  // "name=value" per statistic the driver reported (Context::Impl::pipeline_statistics), else empty.
  const std::vector<std::string>& statistics() const { return statistics_; }

 private:
  Unique<VkShaderModule> shader_;
  Unique<VkDescriptorSetLayout> set_layout_;
  Unique<VkPipelineLayout> layout_;
  Unique<VkPipeline> pipeline_;
  std::vector<std::string> statistics_;

  std::vector<std::string> read_statistics(Context::Impl& ctx) const;
};

}  // namespace vkc::rt
