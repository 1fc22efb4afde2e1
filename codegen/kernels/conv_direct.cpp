// Direct and depthwise conv kernels: one invocation per output element, global memory only.
#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels::conv {

EmittedKernel emit_conv_direct(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx) {
  const ir::ConvGeometry& g = c.g;
  bool depthwise = plan.strategy == ConvStrategy::depthwise;
  EmittedKernel k;
  k.kernel = depthwise ? "conv_depthwise" : "conv_direct";
  k.strategy = depthwise ? "depthwise" : "direct";
  ConvIo io = bind_conv_io(c, ctx, k);
  std::string helpers = io.functions + gather_input_fn(g, c.input->type.shape, "x_at", "float") +
                        load_filter_fn(g, c.filter->type.shape, "w_at") + bias_fn(c.bias != nullptr, "b");
  std::vector<int64_t> taps(3, 1);
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) taps[i] = g.kernel[i];
  std::vector<std::pair<std::string, std::string>> values{
      {"EXTENSIONS", glsl_extensions(io.types)},
      {"WG_SIZE", std::to_string(plan.workgroup_size[0])},
      {"BUFFERS", io.buffers},
      {"HELPERS", helpers},
      {"TOTAL", std::to_string(c.output->type.numel())},
      {"DECODE", decode_physical_output(g, c.output->type.shape, "gid")},
      {"FG", std::to_string(g.out_channels_per_group())},
      {"K0", std::to_string(taps[0])},
      {"K1", std::to_string(taps[1])},
      {"K2", std::to_string(taps[2])}};
  if (!depthwise) values.push_back({"CG", std::to_string(g.in_channels_per_group())});
  k.glsl = instantiate_shader(k.kernel, values);
  take_plan(k, c, plan);
  return k;
}

}  // namespace vkc::codegen::kernels::conv
