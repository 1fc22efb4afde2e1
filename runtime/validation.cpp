// Validation-layer message collection.
#include <algorithm>

#include "runtime/validation_internal.h"
#include "runtime/vk_util.h"
#include "support/error.h"

namespace vkc::rt {

void ValidationLog::add(std::string message) {
  // Messages become vkc::Error texts, which are one line by convention.
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::lock_guard<std::mutex> lock(mutex_);
  messages_.push_back(std::move(message));
}

std::vector<std::string> ValidationLog::messages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return messages_;
}

void ValidationLog::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  messages_.clear();
}

bool ValidationLog::empty() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return messages_.empty();
}

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                          void* user) {
  // Called from whichever thread made the Vulkan call; must not throw.
  try {
    // The layer's own text already says "Validation Error: [ VUID ]"; loader messages do not.
    const char* level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
    std::string text = cat("Vulkan validation ", level, ": ",
                           data && data->pMessage ? data->pMessage : "(no message)");
    static_cast<ValidationLog*>(user)->add(std::move(text));
  } catch (...) {
  }
  return VK_FALSE;  // never abort the call: the error surfaces from execute() instead
}

}  // namespace

VkDebugUtilsMessengerCreateInfoEXT messenger_create_info(ValidationLog* log) {
  VkDebugUtilsMessengerCreateInfoEXT info = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_message;
  info.pUserData = log;
  return info;
}

void create_messenger(InstanceHandles& handles, ValidationLog* log) {
  // Fetched per instance: the extension is enabled on this instance only.
  auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(handles.instance, "vkCreateDebugUtilsMessengerEXT"));
  auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(handles.instance, "vkDestroyDebugUtilsMessengerEXT"));
  check(create && destroy, "VK_EXT_debug_utils is enabled but its functions are missing");
  VkDebugUtilsMessengerCreateInfoEXT info = messenger_create_info(log);
  vk_check(create(handles.instance, &info, nullptr, &handles.messenger),
           "vkCreateDebugUtilsMessengerEXT");
  handles.destroy_messenger = destroy;
}

}  // namespace vkc::rt
