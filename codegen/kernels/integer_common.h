// Private to the integer product kernels (integer_product.cpp on the SIMT cores,
// integer_coopmat.cpp on tensor cores): operand readers, zero points and the requantizing store
// they share (docs/int8.md).
#pragma once

#include <set>
#include <string>

#include "ir/graph.h"
#include "module/target_limits.h"
#include "support/dtype.h"

namespace vkc::codegen::kernels::integer {

// Declares operand `name` at `binding` (decl) and "int <name>_at(uint i)" reading element i (fn):
// 8-bit storage where the target has it, else packed words.
struct Reader {
  std::string decl, fn;
};
Reader int_reader(uint32_t binding, DType t, const std::string& name, const TargetLimits& target,
                  std::set<DType>& types);

bool is_constant(const ir::Value* v);

// "int <name>(uint col)": the zero point of column `col` (per tensor: element 0); a constant one
// is written into the shader, else read from the buffer <name>_t.
std::string zero_point_fn(const std::string& name, const ir::Value* zp);

// "void store(uint i, uint col, int acc)": the sum, or its requantization (requantize_*
// attributes, ORT's arithmetic) to the 8-bit result type `rt`; `packed`: merged into words.
std::string store_fn(const ir::Op& op, DType rt, bool packed);

}  // namespace vkc::codegen::kernels::integer
