// NumPy .npy read/write (format versions 1.0-3.0) for little-endian f32/f16/i32/i64/i8/u8/bool.
// Fortran-order files are read into C order (lossless). Anything else (big-endian, object arrays,
// other dtypes, truncated data) is rejected with a one-line vkc::Error naming the file and the
// problem; float64 only where the caller says which dtype it needs (read_npy_for).
#pragma once

#include <string>

#include "support/tensor.h"

namespace vkc {

HostTensor read_npy(const std::string& path);
HostTensor parse_npy(const std::vector<uint8_t>& bytes, const std::string& what);
// For a tensor of dtype `want` (vk-run's --input): as read_npy, and float64 data (NumPy's
// default, e.g. np.random.rand) is narrowed to a float `want`. Refused, with the a.astype(...)
// to run, where that could lose what a user must know about: float64 for an integer or bool
// input, or a finite value the float type cannot hold. Each conversion made adds one line to
// `notes` ("FILE: float64 converted to f32", "FILE: Fortran-order array reordered to C order").
HostTensor read_npy_for(const std::string& path, DType want, std::vector<std::string>& notes);
HostTensor parse_npy_for(const std::vector<uint8_t>& bytes, const std::string& what, DType want,
                         std::vector<std::string>& notes);
void write_npy(const std::string& path, const HostTensor& tensor);
std::vector<uint8_t> serialize_npy(const HostTensor& tensor);

}  // namespace vkc
