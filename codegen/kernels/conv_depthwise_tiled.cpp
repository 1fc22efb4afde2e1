// The tiled depthwise conv kernel (strategy "depthwise_tiled", shaders/conv_depthwise_tiled.comp):
// the index helpers it needs, with spatial dims right-aligned into (D, H, W) as the planner
// (codegen/conv_planner_depthwise) sees them, and every extent, stride and pad baked in.
#include <array>

#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels::conv {
namespace {

// Per canonical (D, H, W) component: the conv's spatial dim, or -1 for a missing leading dim.
std::array<int, 3> spatial_dims(const ir::ConvGeometry& g) {
  std::array<int, 3> d{-1, -1, -1};
  for (int i = 0; i < g.spatial_rank; ++i) d[size_t(3 - g.spatial_rank + i)] = i;
  return d;
}

int64_t at_or(const std::vector<int64_t>& v, int dim, int64_t fill) { return dim < 0 ? fill : v[size_t(dim)]; }

// ivec3 input_origin(uvec3 o0): the input position that output position o0 sees through tap 0.
std::string input_origin_fn(const ir::ConvGeometry& g) {
  std::array<int, 3> d = spatial_dims(g);
  std::string s = "ivec3 input_origin(uvec3 o0) {\n  return ivec3(";
  for (size_t i = 0; i < 3; ++i) {
    if (i) s += ", ";
    s += d[i] < 0 ? std::string("0") : cat("int(o0[", i, "] * ", u32(g.strides[size_t(d[i])]), ") - ", g.pad_begin[size_t(d[i])]);
  }
  return s + ");\n}\n";
}

// float stage_x(uint n, uint c, ivec3 base, uvec3 i): element i of the input window starting at
// `base` for channel c of image n, read through the fused prologue x_at; 0 in the padding.
std::string stage_x_fn(const ir::ConvGeometry& g, const Shape& input_shape) {
  std::vector<int64_t> xs = ir::logical_strides(input_shape, g.input_pos);
  std::array<int, 3> d = spatial_dims(g);
  std::string s = cat("float stage_x(uint n, uint c, ivec3 base, uvec3 i) {\n  uint off = n * ", u32(xs[0]),
                      " + c * ", u32(xs[1]), ";\n  int p;\n");
  for (size_t i = 0; i < 3; ++i) {
    if (d[i] < 0) continue;
    s += cat("  p = base[", i, "] + int(i[", i, "]);\n  if (p < 0 || p >= ", g.in_spatial[size_t(d[i])],
             ") return 0.0;\n  off += uint(p) * ", u32(xs[size_t(2 + d[i])]), ";\n");
  }
  return s + "  return float(x_at(off));\n}\n";
}

// float w_one(uint grp, uint fl, uint tap): filter tap `tap` (row-major over D, H, W) of output
// channel fl of group grp, read through the fused prologue w_at; 0 past the group's channels, so
// a partial channel block needs no other special case.
std::string w_one_fn(const ir::ConvGeometry& g, const Shape& filter_shape) {
  std::vector<int64_t> ws = ir::logical_strides(filter_shape, g.filter_pos);
  std::array<int, 3> d = spatial_dims(g);
  int64_t fg = g.out_channels_per_group();
  std::string s = cat("float w_one(uint grp, uint fl, uint tap) {\n  if (fl >= ", u32(fg),
                      ") return 0.0;\n  uint off = (grp * ", u32(fg), " + fl) * ", u32(ws[0]), ";\n");
  for (size_t i = 3; i-- > 0;) {
    if (d[i] < 0) continue;
    int64_t k = g.kernel[size_t(d[i])];
    s += cat("  off += tap % ", u32(k), " * ", u32(ws[size_t(2 + d[i])]), ";\n  tap /= ", u32(k), ";\n");
  }
  return s + "  return float(w_at(off));\n}\n";
}

// WVEC stage_w(uint grp, uint f, uint tap): taps of output channels f .. f + lanes - 1.
std::string stage_w_fn(uint32_t lanes) {
  if (lanes == 1) return "float stage_w(uint grp, uint f, uint tap) { return w_one(grp, f, tap); }\n";
  return "vec4 stage_w(uint grp, uint f, uint tap) {\n"
         "  return vec4(w_one(grp, f, tap), w_one(grp, f + 1u, tap), w_one(grp, f + 2u, tap), "
         "w_one(grp, f + 3u, tap));\n}\n";
}

// bool in_output(uvec3 o): o lies inside the output (partial tiles at the far edges).
std::string in_output_fn(const ir::ConvGeometry& g) {
  std::array<int, 3> d = spatial_dims(g);
  std::string s = "bool in_output(uvec3 o) {\n  return true";
  for (size_t i = 0; i < 3; ++i)
    if (d[i] >= 0) s += cat(" && o[", i, "] < ", u32(g.out_spatial[size_t(d[i])]));
  return s + ";\n}\n";
}

// void store_out(uint n, uint f, uvec3 o, float v): adds the bias and hands the element to the
// fused epilogue at its physical offset.
std::string store_out_fn(const ir::ConvGeometry& g, const Shape& output_shape) {
  std::vector<int64_t> ys = ir::logical_strides(output_shape, g.output_pos);
  std::array<int, 3> d = spatial_dims(g);
  std::string s = cat("void store_out(uint n, uint f, uvec3 o, float v) {\n  store_result(n * ", u32(ys[0]),
                      " + f * ", u32(ys[1]));
  for (size_t i = 0; i < 3; ++i)
    if (d[i] >= 0) s += cat(" + o[", i, "] * ", u32(ys[size_t(2 + d[i])]));
  return s + ", v + bias_of(f));\n}\n";
}

// Staging loops are fully unrolled up to this many rounds per invocation (all loads in flight at
// once); beyond it, the code size would outgrow the benefit.
constexpr uint64_t kMaxUnrolledRounds = 32;

std::string unroll_if_short(uint64_t elements, uint32_t invocations) {
  return ceil_div(elements, invocations) <= kMaxUnrolledRounds ? "[[unroll]]" : "";
}

}  // namespace

EmittedKernel emit_conv_depthwise_tiled(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx) {
  const ir::ConvGeometry& g = c.g;
  const DepthwiseTile& t = plan.depthwise;
  EmittedKernel k;
  k.kernel = "conv_depthwise_tiled";
  k.strategy = conv_strategy_name(plan.strategy);
  ConvIo io = bind_conv_io(c, ctx, k);
  std::string helpers = io.functions + bias_fn(c.bias != nullptr, "b") + input_origin_fn(g) +
                        stage_x_fn(g, c.input->type.shape) + w_one_fn(g, c.filter->type.shape) +
                        stage_w_fn(t.lanes) + in_output_fn(g) + store_out_fn(g, c.output->type.shape);
  std::array<int, 3> d = spatial_dims(g);
  std::vector<std::pair<std::string, std::string>> values{
      {"EXTENSIONS", glsl_extensions(io.types)},
      {"WG_SIZE", std::to_string(t.invocations)},
      {"BUFFERS", io.buffers},
      {"HELPERS", helpers},
      {"SLOTS", std::to_string(t.slots)},
      {"FB", std::to_string(t.channels)},
      {"LANES", std::to_string(t.lanes)},
      {"WVEC", t.lanes == 4 ? "vec4" : "float"},
      {"ACC_LANE", t.lanes == 4 ? "acc[j][c / 4u][c % 4u]" : "acc[j][c]"},
      {"CHANNEL_BLOCKS", std::to_string(t.channel_blocks)},
      {"GROUPS", std::to_string(g.groups)},
      {"FG", std::to_string(g.out_channels_per_group())},
      {"WORKGROUPS", std::to_string(t.workgroups)},
      {"X_UNROLL", unroll_if_short(t.input_elements(), t.invocations)},
      {"W_UNROLL", unroll_if_short(uint64_t(t.taps) * t.channels / t.lanes, t.invocations)}};
  values.push_back({"STRIPS", std::to_string(t.strips)});
  values.push_back({"DIRECT", t.direct ? "1" : "0"});
  for (size_t i = 0; i < 3; ++i) {
    if (i > 0) values.push_back({cat("T", i), std::to_string(t.out[i])});  // T0 is 1 (one D slice)
    values.push_back({cat("I", i), std::to_string(t.in[i])});
    values.push_back({cat("TILES", i), std::to_string(t.tiles[i])});
    values.push_back({cat("K", i), std::to_string(at_or(g.kernel, d[i], 1))});
    if (i > 0) values.push_back({cat("S", i), std::to_string(at_or(g.strides, d[i], 1))});
    values.push_back({cat("D", i), std::to_string(at_or(g.dilations, d[i], 1))});
  }
  k.glsl = instantiate_shader(k.kernel, values);
  take_plan(k, c, plan);
  return k;
}

}  // namespace vkc::codegen::kernels::conv
