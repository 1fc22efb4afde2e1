// The last passes of sort / topk: each used result is gathered from the sorted positions in
// `order`. Results nothing uses get no pass, so no buffer is bound (or allocated) for them.
#include <set>

#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

EmittedKernel gather_kernel(const std::string& strategy, const std::string& order, const SortRows& rows,
                            int64_t len, const ir::Value* result, const std::string& buffers,
                            const std::string& store, const std::set<DType>& types,
                            const KernelContext& ctx, const std::string& what) {
  int64_t total = shape_numel(result->type.shape);
  check(total <= int64_t(UINT32_MAX), what, ": ", total, " elements exceed 32-bit indexing");
  EmittedKernel k;
  k.kernel = "sort_gather";
  k.strategy = strategy;
  uint32_t wg = fit_workgroup_size_x(256, ctx.target);
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(total), wg, ctx.target, what);
  k.glsl = instantiate_shader(
      "sort_gather",
      {{"EXTENSIONS", glsl_extensions(types)},
       {"WG_SIZE", std::to_string(wg)},
       {"BUFFERS", cat("layout(std430, set = 0, binding = 0) restrict readonly buffer Order { uint "
                       "data[]; } order;\n", buffers)},
       {"TOTAL", std::to_string(total)},
       {"INNER", std::to_string(rows.inner)},
       {"LEN", std::to_string(len)},
       {"STORE", store}});
  k.bindings.insert(k.bindings.begin(), KernelBinding{order, false});
  k.bytes = double(total) * 4 + double(result->type.size_bytes()) * 2;
  return k;
}

}  // namespace

EmittedKernel emit_sort_gather_values(const std::string& order, const SortRows& rows, int64_t len,
                                      const ir::Value* source, const ir::Value* result,
                                      const KernelContext& ctx, const std::string& what) {
  DType t = source->type.dtype;
  require_storable(t, ctx.target, what);
  std::string buffers = glsl_buffer(1, t, false, "source") + glsl_buffer(2, t, true, "result");
  std::string store = cat("  result.data[e] = source.data[o * ", rows.n * rows.inner, "u + position * ",
                          rows.inner, "u + c];\n");
  EmittedKernel k = gather_kernel("gather sorted elements", order, rows, len, result, buffers, store,
                                  {t}, ctx, what);
  k.bindings.push_back({ctx.tensor(source), false});
  k.bindings.push_back({ctx.tensor(result), true});
  return k;
}

EmittedKernel emit_sort_gather_indices(const std::string& order, const SortRows& rows, int64_t len,
                                       const ir::Value* result, const KernelContext& ctx,
                                       const std::string& what) {
  DType t = result->type.dtype;
  std::string buffers, store;
  std::set<DType> types;
  if (t == DType::i64 && !ctx.target.shader_int64) {
    // No 64-bit integers in the shader: write each index as its (low, high) words; positions are
    // below 2^32, so the high word is zero. The bytes are exactly the little-endian int64.
    buffers = "layout(std430, set = 0, binding = 1) restrict writeonly buffer Result { uint data[]; } result;\n";
    store = "  result.data[2u * e] = position;\n  result.data[2u * e + 1u] = 0u;\n";
  } else {
    check(t == DType::i64 || t == DType::i32, "internal: ", what, ": index type ", dtype_name(t));
    types.insert(t);
    buffers = glsl_buffer(1, t, true, "result");
    store = cat("  result.data[e] = ", glsl_storage_type(t), "(position);\n");
  }
  EmittedKernel k = gather_kernel("write sorted indices", order, rows, len, result, buffers, store,
                                  types, ctx, what);
  k.bindings.push_back({ctx.tensor(result), true});
  return k;
}

}  // namespace vkc::codegen::kernels
