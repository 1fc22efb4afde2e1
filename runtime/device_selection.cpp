// Listing the Vulkan devices and choosing one (by index, name or device type).
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "runtime/context_internal.h"
#include "runtime/vk_util.h"
#include "support/error.h"

namespace vkc::rt {

namespace {

int type_rank(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "virtual") return 2;
  if (type == "cpu") return 3;
  return 4;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string device_list(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const DeviceInfo& d : devices) {
    if (!s.empty()) s += ", ";
    s += cat(d.index, ": ", d.name, " [", d.type, "]");
  }
  return s;
}

}  // namespace

uint32_t choose_device(const std::vector<DeviceInfo>& devices, const std::string& spec) {
  check(!devices.empty(), "no Vulkan device found (install mesa-vulkan-drivers for the lavapipe CPU device)");
  std::vector<uint32_t> candidates;
  if (spec.empty()) {
    for (uint32_t i = 0; i < devices.size(); ++i) candidates.push_back(i);
  } else if (std::all_of(spec.begin(), spec.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    unsigned long index = spec.size() > 9 ? devices.size() : std::stoul(spec);
    check(index < devices.size(), "Vulkan device index ", spec, " is out of range; devices: ",
          device_list(devices));
    return uint32_t(index);
  } else {
    for (uint32_t i = 0; i < devices.size(); ++i)
      if (lower(devices[i].name).find(lower(spec)) != std::string::npos) candidates.push_back(i);
    check(!candidates.empty(), "no Vulkan device matches '", spec, "'; devices: ", device_list(devices));
  }
  // Stable: among equally ranked devices, the first listed wins.
  return *std::min_element(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
    return type_rank(devices[a].type) < type_rank(devices[b].type);
  });
}

std::vector<DeviceInfo> Context::enumerate_devices() {
  InstanceHandles handles = create_instance(nullptr);
  std::vector<DeviceInfo> out;
  try {
    uint32_t count = 0;
    vk_check(vkEnumeratePhysicalDevices(handles.instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    vk_check(vkEnumeratePhysicalDevices(handles.instance, &count, devices.data()), "vkEnumeratePhysicalDevices");
    for (uint32_t i = 0; i < count; ++i)
      out.push_back(make_device_info(i, query_capabilities(handles.instance, devices[i], handles.api_version)));
  } catch (...) {
    destroy_instance(handles);
    throw;
  }
  destroy_instance(handles);
  check(!out.empty(), "no Vulkan device found (install mesa-vulkan-drivers for the lavapipe CPU device)");
  return out;
}

}  // namespace vkc::rt
