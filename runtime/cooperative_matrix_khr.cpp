#include "runtime/cooperative_matrix_khr.h"

#include <sstream>

#include "module/target_limits.h"

namespace vkc::rt::coopmat_khr {

namespace {
using GetPropertiesFn = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, Properties*);

const char* component_name(uint32_t t) {
  switch (t) {
    case kFloat16: return "f16";
    case kFloat32: return "f32";
    case kFloat64: return "f64";
    case kSint8: return "i8";
    case kSint16: return "i16";
    case kSint32: return "i32";
    case kSint64: return "i64";
    case kUint8: return "u8";
    case kUint16: return "u16";
    case kUint32: return "u32";
    case kUint64: return "u64";
    case kBfloat16: return "bf16";
    case kFloat8E4M3: return "fp8e4m3";
    case kFloat8E5M2: return "fp8e5m2";
  }
  return nullptr;  // a type newer than this list: named by its number
}
}  // namespace

std::vector<Properties> offered_shapes(VkInstance instance, VkPhysicalDevice device) {
  auto get = reinterpret_cast<GetPropertiesFn>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (!get) return {};
  uint32_t count = 0;
  if (get(device, &count, nullptr) != VK_SUCCESS || count == 0) return {};
  std::vector<Properties> shapes(count);
  if (get(device, &count, shapes.data()) < 0) return {};
  shapes.resize(count);
  return shapes;
}

bool offers_loop_shape(const std::vector<Properties>& shapes) {
  for (const Properties& p : shapes)
    for (const char* loop : kCoopMatLoopShapes)
      if (shape_name(p) == loop) return true;  // the name says subgroup scope only where it is
  return false;
}

std::string shape_name(const Properties& p) {
  auto component_name = [](uint32_t t) {
    const char* name = coopmat_khr::component_name(t);
    return name ? std::string(name) : "t" + std::to_string(t);
  };
  std::ostringstream s;
  s << p.MSize << "x" << p.NSize << "x" << p.KSize << " " << component_name(p.AType) << "*"
    << component_name(p.BType) << "+" << component_name(p.CType);
  if (p.ResultType != p.CType) s << "->" << component_name(p.ResultType);
  if (p.scope != kScopeSubgroup) s << " (scope " << p.scope << ")";
  return s.str();
}

}  // namespace vkc::rt::coopmat_khr
