// NumPy .npy read/write (format versions 1.0-3.0) for little-endian f32/f16/i32/i64/i8/u8/bool in C
// order. Anything else (big-endian, Fortran order, object arrays, other dtypes, truncated data) is
// rejected with a one-line vkc::Error naming the file and the problem.
#pragma once

#include <string>

#include "support/tensor.h"

namespace vkc {

HostTensor read_npy(const std::string& path);
HostTensor parse_npy(const std::vector<uint8_t>& bytes, const std::string& what);
void write_npy(const std::string& path, const HostTensor& tensor);
std::vector<uint8_t> serialize_npy(const HostTensor& tensor);

}  // namespace vkc
