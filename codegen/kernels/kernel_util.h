// GLSL snippets and plan helpers shared by the non-elementwise kernel families (contraction,
// pooling, reductions, data movement, quantization).
//
// Shapes are static, so index arithmetic is generated with literal extents and strides; the
// driver then sees divisions by constants.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "module/target_limits.h"
#include "support/dtype.h"

namespace vkc::codegen::kernels {

// "uint gid = ..." for a 1-D problem launched through linear_grid (the grid may be folded into y).
std::string folded_global_index(uint32_t workgroup_size, const std::string& var = "gid");
// "uint wg = ..." the linear workgroup index of a grid folded by linear_grid.
std::string folded_workgroup_index(const std::string& var = "wg");

// GLSL lines declaring `prefix`0..`prefix`(r-1) (uint) as the C-order coordinates of the linear
// index `var` in `shape`. `var` is consumed through a temporary.
std::string unravel_code(const Shape& shape, const std::string& var, const std::string& prefix,
                         const std::string& indent = "  ");

// One dim of a strided walk: `extent` positions `stride` elements apart.
struct StridedDim {
  int64_t extent, stride;
};
// GLSL "uint NAME(uint i)" returning the element offset of the i-th position (C order) of `dims`.
std::string offset_function(const std::string& name, const std::vector<StridedDim>& dims);

// C-order strides of a shape.
std::vector<int64_t> strides_of(const Shape& shape);

// A GLSL int literal that is valid for every 32-bit value (INT_MIN has no direct spelling).
std::string int_literal(int64_t v);
std::string uint_literal(uint64_t v);

// Fills workgroup_size and a folded workgroup_count for `total` invocations of one 1-D kernel.
void plan_linear(EmittedKernel& k, uint64_t total, uint32_t preferred_workgroup,
                 const TargetLimits& target, const std::string& what);

// Throws "<what>: N elements exceed 32-bit indexing" when a tensor is too large for uint indices.
void check_32bit(int64_t elements, const std::string& what);
// Throws vkc::Error "<what>: <name> has N elements, above 32-bit indexing" beyond 2^32-1 elements.
void check_32bit_elements(uint64_t elements, const std::string& name, const std::string& what);

}  // namespace vkc::codegen::kernels
