// How tensors of each element type appear in generated GLSL.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "module/target_limits.h"
#include "support/dtype.h"

namespace vkc::codegen {

// Element types a kernel can read and write directly on `target` (f32 and i32 everywhere; f16,
// i64 and 8-bit types when the target has the storage features).
bool gpu_storable(DType t, const TargetLimits& target);
// Throws vkc::Error "<what>: element type X is not supported on target Y (needs FEATURE)".
void require_storable(DType t, const TargetLimits& target, const std::string& what);

std::string glsl_storage_type(DType t);  // "float", "int", "int64_t", "float16_t", "int8_t", "uint8_t"
std::string glsl_compute_type(DType t);  // "float" for floats, "int64_t" for i64, "int" otherwise

// "#extension ..." lines for the storage types used.
std::string glsl_extensions(const std::set<DType>& types);

// layout(std430, set = 0, binding = B) restrict readonly buffer T_B { float data[]; } tB;
std::string glsl_buffer(uint32_t binding, DType t, bool writes, const std::string& instance);
// The same buffer viewed as uvec4s (16 bytes: 8 float16 values) for vector loads or stores.
std::string glsl_uvec4_buffer(uint32_t binding, const std::string& instance, bool writes = false);

// A GLSL literal of the compute type: "1.5" / "3" / "int64_t(3)".
std::string glsl_literal(DType t, double value);

}  // namespace vkc::codegen
