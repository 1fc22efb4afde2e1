#include "runtime/vk_util.h"

#include "support/error.h"

namespace vkc::rt {

std::string vk_result_name(VkResult result) {
  switch (result) {
#define VKC_RESULT(name) \
  case name: return #name;
    VKC_RESULT(VK_SUCCESS)
    VKC_RESULT(VK_NOT_READY)
    VKC_RESULT(VK_TIMEOUT)
    VKC_RESULT(VK_EVENT_SET)
    VKC_RESULT(VK_EVENT_RESET)
    VKC_RESULT(VK_INCOMPLETE)
    VKC_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    VKC_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VKC_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    VKC_RESULT(VK_ERROR_DEVICE_LOST)
    VKC_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    VKC_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    VKC_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    VKC_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    VKC_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    VKC_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    VKC_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VKC_RESULT(VK_ERROR_FRAGMENTED_POOL)
    VKC_RESULT(VK_ERROR_UNKNOWN)
    VKC_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    VKC_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    VKC_RESULT(VK_ERROR_FRAGMENTATION)
    VKC_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    VKC_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    VKC_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
    VKC_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef VKC_RESULT
    default: return cat("VkResult(", int(result), ")");
  }
}

void vk_check(VkResult result, const char* call, const std::string& detail) {
  if (result >= 0) return;  // VK_SUCCESS and the positive status codes are not failures
  std::string suffix = detail.empty() ? "" : cat(" (", detail, ")");
  if (result == VK_ERROR_DEVICE_LOST)
    throw Error(cat(call, " failed: VK_ERROR_DEVICE_LOST: the GPU device was lost (driver reset or "
                          "crash, often an out-of-bounds access or a hang in a shader)",
                    suffix));
  throw Error(cat(call, " failed: ", vk_result_name(result), suffix));
}

}  // namespace vkc::rt
