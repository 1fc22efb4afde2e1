// The one rank limit: every tensor vkc reads (IR text, ONNX model) or compiles has rank 0..kMaxRank.
#pragma once

#include <cstdint>

namespace vkc::ir {

// 6 is what the kernels are built and tested for: the verifier has always refused higher ranks
// before codegen, and the kernel tests cover shapes up to rank 6. The generated index code loops
// over dims, so a higher limit needs every kernel tested at that rank first. The IR text lexer
// (which used to allow 16), the ONNX importer and docs/module-format.md all use this value.
inline constexpr int64_t kMaxRank = 6;

}  // namespace vkc::ir
