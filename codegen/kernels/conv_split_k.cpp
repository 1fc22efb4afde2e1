// The reduce dispatch of the split_k conv strategy: sums the K slices' partial sums, then bias and
// fused epilogue (the GEMM dispatch is conv_gemm.cpp with plan.split_k slices).
#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels::conv {

EmittedKernel emit_conv_split_k_reduce(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx,
                                       const std::string& partial_tensor) {
  const ir::ConvGeometry& g = c.g;
  uint64_t total = uint64_t(c.output->type.numel());
  check(plan.split_k > 1 && plan.partial_elements == total * plan.split_k, c.what,
        ": internal: split-K reduce plan mismatch");
  EmittedKernel k;
  k.kernel = "conv_split_k_reduce";
  k.strategy = conv_strategy_name(plan.strategy);
  k.bindings.push_back({partial_tensor, false});
  std::string buffers = glsl_buffer(0, DType::f32, false, "partial");
  if (c.bias) {
    buffers += glsl_buffer(uint32_t(k.bindings.size()), c.dtype, false, "b");
    k.bindings.push_back({ctx.tensor(c.bias), false});
  }
  FusedCode st = result_store(*c.group, uint32_t(k.bindings.size()), ctx);
  buffers += st.buffers;
  k.bindings.insert(k.bindings.end(), st.bindings.begin(), st.bindings.end());
  std::set<DType> types{c.dtype, DType::f32};
  types.insert(st.types.begin(), st.types.end());
  k.glsl = instantiate_shader(
      "split_k_reduce",
      {{"EXTENSIONS", glsl_extensions(types)},
       {"WG_SIZE", std::to_string(plan.reduce_workgroup_size[0])},
       {"BUFFERS", buffers},
       {"HELPERS", st.functions + bias_fn(c.bias != nullptr, "b")},
       {"INDEX", folded_global_index(plan.reduce_workgroup_size[0])},
       {"TOTAL", std::to_string(total)},
       {"SPLITS", std::to_string(plan.split_k)},
       // gid is the output's physical (C-order) index
       {"FINISH", decode_physical_output(g, c.output->type.shape, "gid") + "  store_result(gid, acc + bias_of(f));"}});
  k.workgroup_size = plan.reduce_workgroup_size;
  k.workgroup_count = plan.reduce_workgroup_count;
  k.workgroup_memory_bytes = 0;
  k.tiles = {{"split_k", plan.split_k}, {"outputs_per_invocation", 1}};
  k.flops = double(plan.partial_elements);  // one add per partial sum
  k.bytes = 4.0 * double(plan.partial_elements) + double(c.output->type.size_bytes()) +
            (c.bias ? double(c.bias->type.size_bytes()) : 0.0);
  return k;
}

}  // namespace vkc::codegen::kernels::conv
