// Element types shared by the IR, the module format, host tensors and the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vkc {

enum class DType : uint8_t { f32, f16, i64, i32, i8, u8, boolean };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::i64, DType::i32,
                                       DType::i8,  DType::u8,  DType::boolean};

// Bytes per element as stored in host memory and in .npy files.
size_t dtype_size(DType t);
// The IR/text name: "f32", "f16", "i64", "i32", "i8", "u8", "bool".
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
bool is_float(DType t);
bool is_integer(DType t);  // i64, i32, i8, u8 (not bool)
bool is_signed(DType t);

}  // namespace vkc
