#include "codegen/glsl_types.h"

#include <charconv>
#include <cmath>

#include "support/error.h"

namespace vkc::codegen {

bool gpu_storable(DType t, const TargetLimits& target) {
  switch (t) {
    case DType::f32:
    case DType::i32: return true;
    case DType::f16: return target.storage_buffer_16bit && target.shader_float16;
    case DType::i64: return target.shader_int64;
    case DType::i8:
    case DType::u8:
    case DType::boolean: return target.storage_buffer_8bit && target.shader_int8;
  }
  return false;
}

void require_storable(DType t, const TargetLimits& target, const std::string& what) {
  if (gpu_storable(t, target)) return;
  const char* needs = t == DType::f16   ? "storageBuffer16BitAccess and shaderFloat16"
                      : t == DType::i64 ? "shaderInt64"
                                        : "storageBuffer8BitAccess and shaderInt8";
  throw Error(cat(what, ": element type ", dtype_name(t), " is not supported on target '",
                  target.name, "' (needs ", needs, ")"));
}

std::string glsl_storage_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f16: return "float16_t";
    case DType::i64: return "int64_t";
    case DType::i32: return "int";
    case DType::i8: return "int8_t";
    case DType::u8: return "uint8_t";
    case DType::boolean: return "uint8_t";
  }
  return "float";
}

std::string glsl_compute_type(DType t) {
  if (is_float(t)) return "float";
  if (t == DType::i64) return "int64_t";
  return "int";
}

std::string glsl_extensions(const std::set<DType>& types) {
  std::string s;
  bool int8 = false, f16 = false, i64 = false;
  for (DType t : types) {
    int8 |= t == DType::i8 || t == DType::u8 || t == DType::boolean;
    f16 |= t == DType::f16;
    i64 |= t == DType::i64;
  }
  if (int8) s += "#extension GL_EXT_shader_8bit_storage : require\n"
                 "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
  if (f16) s += "#extension GL_EXT_shader_16bit_storage : require\n"
                "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n";
  if (i64) s += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
  return s;
}

std::string glsl_buffer(uint32_t binding, DType t, bool writes, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ",
             writes ? "writeonly " : "readonly ", "buffer Buffer", binding, " { ",
             glsl_storage_type(t), " data[]; } ", instance, ";\n");
}

std::string glsl_uvec4_buffer(uint32_t binding, const std::string& instance, bool writes) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", writes ? "writeonly " : "readonly ",
             "buffer Buffer", binding, " { uvec4 data[]; } ", instance, ";\n");
}

std::string glsl_literal(DType t, double value) {
  if (is_float(t)) {
    if (std::isnan(value)) return "uintBitsToFloat(0x7fc00000u)";
    if (std::isinf(value)) return value > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, float(value));
    std::string s(buf, res.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  if (t == DType::i64) return cat("int64_t(", int64_t(value), "l)");
  return cat("int(", int64_t(value), ")");
}

}  // namespace vkc::codegen
