#include "codegen/spirv_env.h"

#include "support/error.h"

namespace vkc::codegen {

int kernel_vulkan_minor(const TargetLimits& t) {
  if (t.vulkan_version == "1.1") return 1;
  if (t.vulkan_version == "1.2" || t.vulkan_version == "1.3") return 2;
  throw Error(cat("target '", t.name, "': vulkan_version must be 1.1, 1.2 or 1.3, found ",
                  t.vulkan_version));
}

}  // namespace vkc::codegen
