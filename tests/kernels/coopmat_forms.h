// The tensor-core forms a device can run (KHR, NV) and what the GPU tests of the tensor-core
// kernels share: planning for one form, checking the form a module declares, the fp16 tolerance.
#pragma once

#include <algorithm>
#include <string>

#include "common/gpu_harness.h"

namespace vkc::test {

// The forms a device can run: KHR (preferred, what an unadjusted compile picks) and NV.
enum class Form { khr, nv };
inline const char* form_name(Form f) { return f == Form::khr ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix"; }
inline bool device_has(Form f) {
  const TargetLimits& l = shared_context().limits();
  return f == Form::khr ? l.cooperative_matrix_khr : l.cooperative_matrix_nv;
}
inline bool device_has_coopmat() { return device_has(Form::khr) || device_has(Form::nv); }
inline std::string no_coopmat_reason() {
  return "device '" + shared_context().device_info().name +
         "' has no cooperative-matrix fp16 product, KHR or NV (these run on the GPU machine)";
}
// Why a test of form `f` skips on this device.
inline std::string no_form_reason(Form f) {
  return "device '" + shared_context().device_info().name + "' has no " + form_name(f) +
         " fp16 16x16x16 product (these run on the GPU machine)";
}
// Plans for the device with only `f` left, so that the kernels use that form.
inline void keep_only(GpuRunOptions& o, Form f) {
  o.adjust_target = [f](TargetLimits& t) {
    (f == Form::khr ? t.cooperative_matrix_nv : t.cooperative_matrix_khr) = false;
  };
}
// The capability the module's tensor-core dispatches declare.
inline bool declares(const ModuleImage& m, Form f) {
  const std::string cap = f == Form::khr ? "CooperativeMatrixKHR" : "CooperativeMatrixNV";
  bool any = false;
  for (const DispatchDesc& d : m.manifest.dispatches)
    if (d.kernel.find("coopmat") != std::string::npos) {
      any = true;
      if (std::find(d.spirv.capabilities.begin(), d.spirv.capabilities.end(), cap) ==
          d.spirv.capabilities.end())
        return false;
    }
  return any;
}

inline GpuRunOptions fp16_tolerance() {
  GpuRunOptions o;
  o.rel_tol = 1e-2;  // float16 operands and results, float32 sums (issue 9's bar)
  o.abs_tol = 1e-2;
  return o;
}

}  // namespace vkc::test
