// The precision a module is compiled in (vk-compile/vk-run --precision, CompileOptions::precision):
// fp32 stores every float tensor as the model declares it; fp16 stores f32 activations and
// weights as f16 (ir/passes/convert_to_fp16.cpp says which ops stay f32). Recorded in the
// manifest ("precision", docs/module-format.md).
#pragma once

#include <string>

namespace vkc {

// fp32: the model's dtypes. fp16: float32 tensors stored and computed as float16. fp16x3: float32
// tensors, and float32 matrix products on float16 tensor cores, each operand split into two float16
// pieces and three of their products summed in float32 (the pieces hold about 22 of float32's 24
// bits, with the operands scaled by powers of two as they are split: products measured on the H200
// reach a relative error of about 1e-6 for operands near 1, 2e-6 near 1e-3, 2e-5 near 1e-4,
// docs/api.md; values beyond float16's range once scaled computed in float32); elsewhere, and on
// targets without tensor cores, as fp32.
enum class Precision { fp32, fp16, fp16x3 };

const char* precision_name(Precision p);
// "fp32", "fp16" or "fp16x3"; anything else throws vkc::Error "WHAT: unknown precision 'X' (expected
// fp32, fp16 or fp16x3)".
Precision parse_precision(const std::string& text, const std::string& what);

// The bound the docs promise for fp16 (max abs error over max abs output against the float64
// reference, on the samples and the conformance subset).
inline constexpr double kFp16ErrorBound = 5e-3;

}  // namespace vkc
