// vkc::Device: the public face of rt::Context.
#include "api/impl.h"

namespace vkc {

namespace {

DeviceInfo public_info(const rt::DeviceInfo& d) {
  return {d.index, d.name, d.type, d.vendor_id, d.device_id, d.driver, d.api_version, d.tensor_cores, d.cooperative_matrix_shapes};
}

DeviceLimits public_limits(const TargetLimits& t) {
  DeviceLimits l;
  l.max_shared_memory_bytes = t.max_compute_shared_memory_size;
  l.max_workgroup_invocations = t.max_compute_work_group_invocations;
  l.max_workgroup_size = t.max_compute_work_group_size;
  l.max_workgroup_count = t.max_compute_work_group_count;
  l.max_storage_buffer_range = t.max_storage_buffer_range;
  l.max_push_constants_size = t.max_push_constants_size;
  l.subgroup_size = t.subgroup_size;
  l.shader_float16 = t.shader_float16;
  l.shader_int8 = t.shader_int8;
  l.shader_int64 = t.shader_int64;
  l.vulkan_version = t.vulkan_version;
  return l;
}

}  // namespace

std::vector<DeviceInfo> Device::enumerate() {
  std::vector<DeviceInfo> out;
  for (const rt::DeviceInfo& d : rt::Context::enumerate_devices()) out.push_back(public_info(d));
  return out;
}

Device::Device(const DeviceOptions& options) : impl_(std::make_shared<Impl>()) {
  rt::ContextOptions co;
  co.device = options.select;
  co.robust_buffer_access = options.robust_buffer_access;
  if (options.validation) {
    co.validation = *options.validation;
    co.validation_from_env = false;
  }
  impl_->context = std::make_unique<rt::Context>(co);
  impl_->info = public_info(impl_->context->device_info());
  impl_->limits = public_limits(impl_->context->limits());
}

const DeviceInfo& Device::info() const { return impl_->info; }
const DeviceLimits& Device::limits() const { return impl_->limits; }
std::vector<std::string> Device::cooperative_matrix_gate() const {
  std::vector<std::string> lines;
  for (const rt::GateResult& r : impl_->context->cooperative_matrix_gate()) lines.push_back(rt::describe(r));
  return lines;
}
bool Device::validation_enabled() const { return impl_->context->validation_enabled(); }
std::vector<std::string> Device::validation_messages() const { return impl_->context->validation_messages(); }
void Device::clear_validation_messages() { impl_->context->clear_validation_messages(); }

}  // namespace vkc
