#include "codegen/kernels/kernel_util.h"

#include "codegen/grid.h"
#include "support/error.h"

namespace vkc::codegen::kernels {

std::string folded_global_index(uint32_t workgroup_size, const std::string& var) {
  return cat("  uint ", var, " = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ",
             workgroup_size, "u;\n");
}

std::string folded_workgroup_index(const std::string& var) {
  return cat("  uint ", var, " = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;\n");
}

std::string unravel_code(const Shape& shape, const std::string& var, const std::string& prefix,
                         const std::string& indent) {
  if (shape.empty()) return "";
  std::string tmp = prefix + "_rem";
  std::string s = cat(indent, "uint ", tmp, " = ", var, ";\n");
  for (size_t d = shape.size(); d-- > 0;) {
    if (d == 0) s += cat(indent, "uint ", prefix, "0 = ", tmp, ";\n");
    else
      s += cat(indent, "uint ", prefix, d, " = ", tmp, " % ", shape[d], "u; ", tmp, " /= ", shape[d],
               "u;\n");
  }
  return s;
}

std::string offset_function(const std::string& name, const std::vector<StridedDim>& dims) {
  std::string s = cat("uint ", name, "(uint i) {\n  uint off = 0u;\n");
  for (size_t d = dims.size(); d-- > 0;) {
    if (d == 0) s += cat("  off += i * ", dims[d].stride, "u;\n");
    else s += cat("  off += (i % ", dims[d].extent, "u) * ", dims[d].stride, "u; i /= ", dims[d].extent, "u;\n");
  }
  return s + "  return off;\n}\n";
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

std::string int_literal(int64_t v) {
  if (v == INT32_MIN) return "(-2147483647 - 1)";
  return cat(v);
}

std::string uint_literal(uint64_t v) { return cat(v, "u"); }

void plan_linear(EmittedKernel& k, uint64_t total, uint32_t preferred_workgroup,
                 const TargetLimits& target, const std::string& what) {
  uint32_t wg = fit_workgroup_size_x(preferred_workgroup, target);
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(total, wg, target, what);
}

void check_32bit(int64_t elements, const std::string& what) {
  check(elements <= int64_t(INT32_MAX), what, ": ", elements,
        " elements exceed 32-bit indexing (at most 2147483647)");
}

void check_32bit_elements(uint64_t elements, const std::string& name, const std::string& what) {
  check(elements <= UINT32_MAX, what, ": ", name, " has ", elements,
        " elements, above the 32-bit indexing limit of 4294967295");
}

}  // namespace vkc::codegen::kernels
