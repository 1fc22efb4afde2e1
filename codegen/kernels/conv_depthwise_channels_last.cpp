// The channels-last depthwise conv kernel (strategy "depthwise_channels_last",
// shaders/conv_depthwise_channels_last.comp): extents, strides, pads and the element strides of
// each operand's layout baked in, with spatial dims right-aligned into (D, H, W) as in the tiled
// depthwise kernel. Correct for any layout; the planner takes it where channels are innermost.

#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels::conv {

EmittedKernel emit_conv_depthwise_channels_last(const ConvOperands& c, const ConvPlan& plan,
                                                const KernelContext& ctx) {
  const ir::ConvGeometry& g = c.g;
  check(g.spatial_rank >= 1 && g.spatial_rank <= 3, c.what, ": internal: depthwise_channels_last takes 1 to 3 spatial dims");
  EmittedKernel k;
  k.kernel = "conv_depthwise_channels_last";
  k.strategy = conv_strategy_name(plan.strategy);
  ConvIo io = bind_conv_io(c, ctx, k);
  const std::vector<int64_t> xs = ir::logical_strides(c.input->type.shape, g.input_pos),
                             ys = ir::logical_strides(c.output->type.shape, g.output_pos),
                             ws = ir::logical_strides(c.filter->type.shape, g.filter_pos);
  uint64_t runs = uint64_t(g.batch) * uint64_t(g.out_channels) *
                  uint64_t(product(g.out_spatial) / g.out_spatial.back()) *
                  ceil_div(uint64_t(g.out_spatial.back()), plan.run_w);
  std::vector<std::pair<std::string, std::string>> values{
      {"EXTENSIONS", glsl_extensions(io.types)},
      {"WG_SIZE", std::to_string(plan.workgroup_size[0])},
      {"BUFFERS", io.buffers},
      {"HELPERS", io.functions + bias_fn(c.bias != nullptr, "b")},
      {"F", std::to_string(g.out_channels)},
      {"FG", std::to_string(g.out_channels_per_group())},
      {"RUN", std::to_string(plan.run_w)},
      {"TOTAL", std::to_string(runs)},
      {"XN", std::to_string(xs[0])}, {"XC", std::to_string(xs[1])},
      {"YN", std::to_string(ys[0])}, {"YC", std::to_string(ys[1])},
      {"WF", std::to_string(ws[0])}};
  // Canonical component i (0 D, 1 H, 2 W) is spatial dim i - (3 - rank), or missing (extent 1).
  for (int i = 0; i < 3; ++i) {
    const int d = i - (3 - g.spatial_rank);
    auto at = [&](const std::vector<int64_t>& v, int64_t fill) { return std::to_string(d < 0 ? fill : v[size_t(d)]); };
    values.push_back({cat("O", i), at(g.out_spatial, 1)});
    values.push_back({cat("I", i), at(g.in_spatial, 1)});
    values.push_back({cat("K", i), at(g.kernel, 1)});
    values.push_back({cat("S", i), at(g.strides, 1)});
    values.push_back({cat("D", i), at(g.dilations, 1)});
    values.push_back({cat("P", i), at(g.pad_begin, 0)});
    values.push_back({cat("X", i), d < 0 ? "0" : std::to_string(xs[size_t(2 + d)])});
    values.push_back({cat("Y", i), d < 0 ? "0" : std::to_string(ys[size_t(2 + d)])});
    values.push_back({cat("W", i), d < 0 ? "0" : std::to_string(ws[size_t(2 + d)])});
  }
  k.glsl = instantiate_shader(k.kernel, values);
  take_plan(k, c, plan);
  return k;
}

}  // namespace vkc::codegen::kernels::conv
