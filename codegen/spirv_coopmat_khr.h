// VK_KHR_cooperative_matrix SPIR-V from the VK_NV_cooperative_matrix form that glslang 12 emits.
//
// AMD and Intel expose only the KHR extension, NVIDIA both. Debian 12's glslang (12) has no
// GL_KHR_cooperative_matrix, and its SPIRV-Tools (2023.1) can neither optimize nor validate the KHR
// opcodes, so a tensor-core kernel is compiled, optimized and validated in the NV form and then
// rewritten word by word (issue 22):
//   - capability CooperativeMatrixNV (5357) -> CooperativeMatrixKHR (6022), and the extension name;
//   - OpTypeCooperativeMatrixNV (5358) -> OpTypeCooperativeMatrixKHR (4456) with a Use operand
//     (0 MatrixA, 1 MatrixB, 2 MatrixAccumulator) read off the operand slot each type fills in
//     OpCooperativeMatrixMulAddNV;
//   - OpCooperativeMatrixLoadNV / StoreNV (5359 / 5360) -> 4457 / 4458 with a MemoryLayout operand
//     (0 RowMajor, 1 ColumnMajor, from NV's constant bool "column major") before the stride;
//   - OpCooperativeMatrixMulAddNV (5361) -> 4459 with the signedness operands of integer matrices;
//   - OpCooperativeMatrixLengthNV (5362) -> 4460.
// The NV form must give A and B distinct types: in NV, a 16x16 float16 A and B are one type, which
// KHR cannot express. Kernels declare B's scope through a specialization constant (same value,
// Subgroup), which makes glslang emit a second type; the rewrite points it back at the plain
// Subgroup constant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkc::codegen {

// Opcodes and operands of the KHR form that Debian 12's headers lack (SPIR-V registry values).
namespace spv_khr {
inline constexpr uint32_t kCapabilityCooperativeMatrixKHR = 6022;
inline constexpr uint32_t kOpTypeCooperativeMatrixKHR = 4456;
inline constexpr uint32_t kOpCooperativeMatrixLoadKHR = 4457;
inline constexpr uint32_t kOpCooperativeMatrixStoreKHR = 4458;
inline constexpr uint32_t kOpCooperativeMatrixMulAddKHR = 4459;
inline constexpr uint32_t kOpCooperativeMatrixLengthKHR = 4460;
enum MatrixUse : uint32_t { kMatrixA = 0, kMatrixB = 1, kMatrixAccumulator = 2 };
enum MatrixLayout : uint32_t { kRowMajor = 0, kColumnMajor = 1 };
// Cooperative Matrix Operands bits of OpCooperativeMatrixMulAddKHR.
inline constexpr uint32_t kASigned = 0x1, kBSigned = 0x2, kCSigned = 0x4, kResultSigned = 0x8;
}  // namespace spv_khr

// The KHR module for an NV one (validated NV SPIR-V in; `kernel_name` names it in errors). A
// module without NV cooperative matrices comes back unchanged. Throws vkc::Error "internal: ..."
// when the module is not in the form described above (one type in two roles, a layout that is
// not a constant bool).
std::vector<uint32_t> cooperative_matrix_nv_to_khr(const std::vector<uint32_t>& nv_words,
                                                   const std::string& kernel_name);

}  // namespace vkc::codegen
