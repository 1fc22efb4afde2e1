// A bitonic compare-exchange step through global memory: the strides of a long-row sort that
// exceed one workgroup's chunk. The shader is the same for every step; k and j are push constants.
#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {

EmittedKernel emit_sort_global_step(const std::string& keys, const std::string& indices, int64_t pairs,
                                    uint32_t row_mask, uint32_t k, uint32_t j, const KernelContext& ctx,
                                    const std::string& what) {
  check(pairs * 2 <= int64_t(UINT32_MAX), what, ": ", pairs * 2, " sort slots exceed 32-bit indexing");
  EmittedKernel kernel;
  kernel.kernel = "sort_global_step";
  kernel.strategy = "global bitonic step";
  kernel.bindings = {{keys, true}, {indices, true}};
  kernel.push_constants = {k, j};
  uint32_t wg = fit_workgroup_size_x(256, ctx.target);
  kernel.workgroup_size = {wg, 1, 1};
  kernel.workgroup_count = linear_grid(uint64_t(pairs), wg, ctx.target, what);
  kernel.glsl = instantiate_shader("sort_global_step", {{"WG_SIZE", std::to_string(wg)},
                                                        {"ROW_MASK", std::to_string(row_mask)},
                                                        {"PAIRS", std::to_string(pairs)},
                                                        {"KEYS", shader_source("sort_keys.glsl")}});
  kernel.tiles["k"] = k;
  kernel.tiles["j"] = j;
  kernel.flops = double(pairs);
  kernel.bytes = double(pairs) * 16 * 2;
  return kernel;
}

}  // namespace vkc::codegen::kernels
