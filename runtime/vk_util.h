// Small Vulkan helpers shared by the runtime: result checking and an owning handle wrapper.
#pragma once

#include <volk.h>

#include <functional>
#include <string>
#include <utility>

namespace vkc::rt {

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.; unknown codes print as "VkResult(-123)".
std::string vk_result_name(VkResult result);

// Throws vkc::Error "CALL failed: VK_ERROR_X (detail)" unless result is VK_SUCCESS (or one of the
// non-error codes). VK_ERROR_DEVICE_LOST gets a message that says what it means.
void vk_check(VkResult result, const char* call, const std::string& detail = {});

// A zeroed Vulkan structure with its sType set (brace-initializing only sType trips
// -Wmissing-field-initializers).
template <typename T>
T vk_struct(VkStructureType type) {
  T s{};
  s.sType = type;
  return s;
}

// Owns one Vulkan handle and destroys it with the given function. Why not vulkan_raii.hpp: the
// runtime calls through a per-device volk table, and a lambda deleter keeps that explicit.
template <typename T>
class Unique {
 public:
  Unique() = default;
  Unique(T handle, std::function<void(T)> destroy) : handle_(handle), destroy_(std::move(destroy)) {}
  ~Unique() { reset(); }
  Unique(Unique&& o) noexcept : handle_(std::exchange(o.handle_, T(VK_NULL_HANDLE))), destroy_(std::move(o.destroy_)) {}
  Unique& operator=(Unique&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, T(VK_NULL_HANDLE));
      destroy_ = std::move(o.destroy_);
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T(VK_NULL_HANDLE); }
  void reset() {
    if (handle_ != T(VK_NULL_HANDLE) && destroy_) destroy_(handle_);
    handle_ = T(VK_NULL_HANDLE);
  }

 private:
  T handle_ = T(VK_NULL_HANDLE);
  std::function<void(T)> destroy_;
};

}  // namespace vkc::rt
