// optimize_spirv and validate_spirv: thin wrappers over SPIRV-Tools that pick the target's
// environment and turn its diagnostics into one-line vkc::Errors. (The reflection half of
// spirv_tools.h lives in spirv_reflect.cpp.)
#include "codegen/spirv_tools.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include "codegen/spirv_env.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

spv_target_env target_env(const TargetLimits& t) {
  return kernel_vulkan_minor(t) == 1 ? SPV_ENV_VULKAN_1_1 : SPV_ENV_VULKAN_1_2;
}

// Keeps the first error-level message, flattened to one line (the validator sometimes appends
// the offending instruction on following lines).
struct FirstError {
  std::string text;
  spvtools::MessageConsumer consumer() {
    return [this](spv_message_level_t level, const char*, const spv_position_t& pos,
                  const char* message) {
      if (level > SPV_MSG_ERROR || !text.empty()) return;  // fatal/internal/error only
      std::string m = message ? message : "";
      for (char& c : m)
        if (c == '\n' || c == '\r') c = ' ';
      while (!m.empty() && m.back() == ' ') m.pop_back();
      text = pos.index ? cat(m, " (word ", pos.index, ")") : m;
    };
  }
  std::string or_unknown() const { return text.empty() ? "no message from SPIRV-Tools" : text; }
};

}  // namespace

std::vector<uint32_t> optimize_spirv(const std::vector<uint32_t>& words, const TargetLimits& target,
                                     const std::string& kernel_name) {
  FirstError err;
  spvtools::Optimizer opt(target_env(target));
  opt.SetMessageConsumer(err.consumer());
  opt.RegisterPerformancePasses();
  std::vector<uint32_t> out;
  // The optimizer validates its input first; a failure here is still a compiler bug upstream.
  if (!opt.Run(words.data(), words.size(), &out))
    throw Error(cat("internal: kernel '", kernel_name, "' failed SPIR-V optimization: ",
                    err.or_unknown()));
  return out;
}

void validate_spirv(const std::vector<uint32_t>& words, const TargetLimits& target,
                    const std::string& kernel_name) {
  FirstError err;
  spvtools::SpirvTools tools(target_env(target));
  tools.SetMessageConsumer(err.consumer());
  if (!tools.Validate(words.data(), words.size()))
    throw Error(cat("internal: kernel '", kernel_name, "' failed SPIR-V validation: ",
                    err.or_unknown()));
}

}  // namespace vkc::codegen
