// Loader and instance creation, with the validation layer when asked for.
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/validation_internal.h"
#include "runtime/vk_util.h"
#include "support/error.h"

namespace vkc::rt {

namespace {

const char* const kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool layer_available(const char* name) {
  uint32_t count = 0;
  vk_check(vkEnumerateInstanceLayerProperties(&count, nullptr), "vkEnumerateInstanceLayerProperties");
  std::vector<VkLayerProperties> layers(count);
  vk_check(vkEnumerateInstanceLayerProperties(&count, layers.data()), "vkEnumerateInstanceLayerProperties");
  for (uint32_t i = 0; i < count; ++i)
    if (std::strcmp(layers[i].layerName, name) == 0) return true;
  return false;
}

// Instance extensions offered by the loader/ICDs (layer == nullptr) or by one layer.
std::vector<std::string> instance_extensions(const char* layer) {
  uint32_t count = 0;
  vk_check(vkEnumerateInstanceExtensionProperties(layer, &count, nullptr),
           "vkEnumerateInstanceExtensionProperties");
  std::vector<VkExtensionProperties> props(count);
  vk_check(vkEnumerateInstanceExtensionProperties(layer, &count, props.data()),
           "vkEnumerateInstanceExtensionProperties");
  std::vector<std::string> names;
  for (uint32_t i = 0; i < count; ++i) names.emplace_back(props[i].extensionName);
  return names;
}

bool contains(const std::vector<std::string>& names, const char* name) {
  for (const std::string& n : names)
    if (n == name) return true;
  return false;
}

}  // namespace

void load_vulkan_loader() {
  static std::once_flag once;
  static VkResult result = VK_SUCCESS;
  std::call_once(once, [] { result = volkInitialize(); });
  check(result == VK_SUCCESS, "Vulkan loader (libvulkan.so.1) not found");
}

InstanceHandles create_instance(ValidationLog* log, bool gpu_assisted) {
  load_vulkan_loader();
  InstanceHandles handles;
  uint32_t loader_version = volkGetInstanceVersion();
  // As new as the loader allows, up to 1.3: modules compiled for a vulkan1.3 target (SPIR-V 1.6)
  // may only run on an instance created for 1.3.
  handles.api_version = loader_version >= VK_API_VERSION_1_3   ? VK_API_VERSION_1_3
                        : loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2
                                                               : VK_API_VERSION_1_1;
  check(loader_version >= VK_API_VERSION_1_1, "the Vulkan loader supports only Vulkan ",
        VK_API_VERSION_MAJOR(loader_version), ".", VK_API_VERSION_MINOR(loader_version),
        "; vkc needs 1.1");

  VkApplicationInfo app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "vkc";
  app.pEngineName = "vkc";
  app.apiVersion = handles.api_version;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  VkInstanceCreateInfo info = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;

  // Portability drivers (MoltenVK) are listed only when the application says it can cope.
  std::vector<std::string> available = instance_extensions(nullptr);
  if (contains(available, "VK_KHR_portability_enumeration")) {
    extensions.push_back("VK_KHR_portability_enumeration");
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  // Synchronization validation always; GPU-assisted validation (shader instrumentation that
  // reports out-of-bounds accesses) only on request, since it slows every dispatch.
  std::vector<VkValidationFeatureEnableEXT> enabled = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  if (gpu_assisted) enabled.push_back(VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT);
  VkValidationFeaturesEXT features = vk_struct<VkValidationFeaturesEXT>(VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT);
  if (log) {
    check(layer_available(kValidationLayer),
          "VKC_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed");
    layers.push_back(kValidationLayer);
    std::vector<std::string> layer_exts = instance_extensions(kValidationLayer);
    check(contains(available, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
              contains(layer_exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME),
          "validation requested but VK_EXT_debug_utils is not available");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    messenger_info = messenger_create_info(log);
    info.pNext = &messenger_info;
    if (contains(layer_exts, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      features.enabledValidationFeatureCount = uint32_t(enabled.size());
      features.pEnabledValidationFeatures = enabled.data();
      messenger_info.pNext = &features;
    }
  }
  info.enabledLayerCount = uint32_t(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();

  VkResult created = vkCreateInstance(&info, nullptr, &handles.instance);
  // The loader answers INCOMPATIBLE_DRIVER when it found no driver at all.
  check(created != VK_ERROR_INCOMPATIBLE_DRIVER,
        "no Vulkan device found (install mesa-vulkan-drivers for the lavapipe CPU device)");
  vk_check(created, "vkCreateInstance");
  // Only instance-level pointers are global; device functions go through a per-device table.
  volkLoadInstanceOnly(handles.instance);
  if (log) {
    try {
      create_messenger(handles, log);
    } catch (...) {
      destroy_instance(handles);
      throw;
    }
  }
  return handles;
}

void destroy_instance(InstanceHandles& handles) {
  if (handles.messenger && handles.destroy_messenger)
    handles.destroy_messenger(handles.instance, handles.messenger, nullptr);
  handles.messenger = VK_NULL_HANDLE;
  if (handles.instance) vkDestroyInstance(handles.instance, nullptr);
  handles.instance = VK_NULL_HANDLE;
}

}  // namespace vkc::rt
