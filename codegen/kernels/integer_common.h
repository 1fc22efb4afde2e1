// Private to the integer product kernels (integer_product.cpp on the SIMT cores,
// integer_coopmat.cpp on tensor cores): operand readers, zero points and the requantizing store
// they share (docs/int8.md).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "module/target_limits.h"
#include "support/dtype.h"
#include "support/tensor.h"

namespace vkc::codegen::kernels::integer {

// Declares operand `name` at `binding` (decl) and "int <name>_at(uint i)" reading element i (fn):
// 8-bit storage where the target has it, else packed words.
struct Reader {
  std::string decl, fn;
};
Reader int_reader(uint32_t binding, DType t, const std::string& name, const TargetLimits& target,
                  std::set<DType>& types);

bool is_constant(const ir::Value* v);

// Per-channel constants (requantization scales as f32 bits, zero points, folded zero-point sums)
// as one i32 buffer that the compiler stores with the module's constants (ScratchTensor::constant)
// and the kernel binds as `channel_table`. Shader arrays of them have no room for wide layers: the
// H200's driver failed to create the pipeline of a QDQ matmul with 4096 per-column scales.
struct ChannelTable {
  std::vector<int32_t> values;
  // Appends `v` and returns the GLSL expression of entry `index` (a GLSL uint expression) of it.
  std::string add(const std::vector<int32_t>& v, const std::string& index);
  bool empty() const { return values.empty(); }
  // The GLSL declaration at `binding`, and the tensor holding the values.
  static std::string declaration(uint32_t binding);
  HostTensor tensor() const;
};

// "int <name>(uint col)": the zero point of column `col` (per tensor: element 0); a constant one
// is written into the shader (per channel: into `table` where one is given, else a shader array),
// else read from the buffer <name>_t.
std::string zero_point_fn(const std::string& name, const ir::Value* zp, ChannelTable* table);

// "void store(uint i, uint col, int acc)": the sum, or its requantization (requantize_*
// attributes, ORT's arithmetic) to the 8-bit result type `rt`; `packed`: merged into words.
// Per-channel scales go to `table` where one is given, else into a shader array.
std::string store_fn(const ir::Op& op, DType rt, bool packed, ChannelTable* table);

}  // namespace vkc::codegen::kernels::integer
