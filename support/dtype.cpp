#include "support/dtype.h"

namespace vkc {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::i64: return 8;
    case DType::i32: return 4;
    case DType::i8: return 1;
    case DType::u8: return 1;
    case DType::boolean: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::i64: return "i64";
    case DType::i32: return "i32";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

bool is_float(DType t) { return t == DType::f32 || t == DType::f16; }
bool is_integer(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::i8 || t == DType::u8;
}
bool is_signed(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::i64 || t == DType::i32 || t == DType::i8;
}

}  // namespace vkc
