// Element storage as raw words, for kernels that move elements without converting them (data
// movement, indexing): bit-exact for every dtype. Defined in codegen/kernels/data_movement.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "module/target_limits.h"
#include "support/dtype.h"

namespace vkc::codegen::kernels {

// How elements of `t` appear in buffers: 4- and 8-byte types as uint / uvec2 words (bit-exact and
// available on every target, i64 included), 8/16-bit types through the storage extensions (the
// target must have them; the error names `what`).
std::string word_type(DType t, const TargetLimits& target, const std::string& what);
// The "#extension" lines word_type(t) needs.
std::string word_extensions(DType t);
// layout(std430, set = 0, binding = B) restrict readonly|writeonly buffer BufferB { TYPE data[]; } NAME;
std::string buffer_decl(uint32_t binding, const std::string& type, bool writes, const std::string& name);

}  // namespace vkc::codegen::kernels
