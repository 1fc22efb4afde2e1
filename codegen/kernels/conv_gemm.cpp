// The tiled GEMM kernel of the implicit_gemm and im2col conv strategies.
#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels::conv {
namespace {

// float load_a(uint grp, uint m, uint k): row m (image n, output position p) and column k of the
// group's A matrix; 0 outside [M, K] so partial tiles need no special case.
std::string load_a_fn(const ConvGemmShape& s, int64_t channels_per_group, bool from_columns) {
  std::string f = cat("float load_a(uint grp, uint m, uint k) {\n  if (m >= ", u32(s.m), " || k >= ",
                      u32(s.k), ") return 0.0;\n  uint n = m / ", u32(s.positions),
                      ";\n  uint p = m % ", u32(s.positions), ";\n");
  if (from_columns)
    return f + cat("  return float(cols.data[((n * ", u32(s.groups), " + grp) * ", u32(s.positions),
                   " + p) * ", u32(s.k), " + k]);\n}\n");
  return f + cat("  uint c;\n  uvec3 kk;\n  decode_k(k, c, kk);\n  return gather_x(n, grp * ",
                 u32(channels_per_group), " + c, decode_out(p), kk);\n}\n");
}

// float load_b(uint grp, uint k, uint nn): filter tap for GEMM column k and output channel nn.
std::string load_b_fn(const ConvGemmShape& s) {
  return cat("float load_b(uint grp, uint k, uint nn) {\n  if (k >= ", u32(s.k), " || nn >= ", u32(s.n),
             ") return 0.0;\n  uint c;\n  uvec3 kk;\n  decode_k(k, c, kk);\n",
             "  return load_w(grp, nn, c, kk);\n}\n");
}

// void store_c(uint grp, uint m, uint nn, float v): adds the bias and hands one output element to
// store_result (the fused epilogue, codegen/fusion.h).
std::string store_c_fn(const ConvGemmShape& s) {
  return cat("void store_c(uint grp, uint m, uint nn, float v) {\n  if (m >= ", u32(s.m), " || nn >= ",
             u32(s.n), ") return;\n  uint f = grp * ", u32(s.n), " + nn;\n  store_result(out_offset(m / ",
             u32(s.positions), ", f, decode_out(m % ", u32(s.positions), ")), v + bias_of(f));\n}\n");
}

}  // namespace

EmittedKernel emit_conv_gemm(const ConvOperands& c, const ConvPlan& plan, const KernelContext& ctx,
                             const std::string& columns_tensor) {
  const ir::ConvGeometry& g = c.g;
  ConvGemmShape s = conv_gemm_shape(g);
  bool from_columns = !columns_tensor.empty();
  EmittedKernel k;
  k.kernel = from_columns ? "conv_gemm_columns" : "conv_implicit_gemm";
  k.strategy = plan.strategy;
  // Binding 0.. is A's source: the input through its fused prologue (implicit GEMM) or the im2col
  // matrix (whose kernel applied the prologue); then the filter, the bias and the fused epilogue.
  FusedCode xl;
  std::string buffers;
  if (from_columns) {
    buffers = glsl_buffer(0, c.dtype, false, "cols");
    k.bindings = {{columns_tensor, false}};
  } else {
    xl = operand_loader(*c.group, c.input, "x_at", 0, ctx);
    buffers = xl.buffers;
    k.bindings = xl.bindings;
  }
  FusedCode wl = operand_loader(*c.group, c.filter, "w_at", uint32_t(k.bindings.size()), ctx);
  buffers += wl.buffers;
  k.bindings.insert(k.bindings.end(), wl.bindings.begin(), wl.bindings.end());
  if (c.bias) {
    buffers += glsl_buffer(uint32_t(k.bindings.size()), c.dtype, false, "b");
    k.bindings.push_back({ctx.tensor(c.bias), false});
  }
  FusedCode st = result_store(*c.group, uint32_t(k.bindings.size()), ctx);
  buffers += st.buffers;
  k.bindings.insert(k.bindings.end(), st.bindings.begin(), st.bindings.end());
  std::set<DType> types{c.dtype};
  for (const FusedCode* f : {&xl, &wl, &st}) types.insert(f->types.begin(), f->types.end());

  std::string helpers = xl.functions + wl.functions + st.functions + decode_out_fn(g) + decode_k_fn(g) +
                        load_filter_fn(g, c.filter->type.shape, "w_at") + bias_fn(c.bias != nullptr, "b") +
                        out_offset_fn(g, c.output->type.shape);
  if (!from_columns) helpers += gather_input_fn(g, c.input->type.shape, "x_at", "float");
  helpers += load_a_fn(s, g.in_channels_per_group(), from_columns) + load_b_fn(s) + store_c_fn(s);

  const GemmTile& t = plan.tile;
  uint64_t m_tiles = (uint64_t(s.m) + t.tm - 1) / t.tm, n_tiles = (uint64_t(s.n) + t.tn - 1) / t.tn;
  check_32bit_elements(plan.tile_count, "the tile grid", c.what);
  k.glsl = instantiate_shader("conv_gemm", {{"EXTENSIONS", glsl_extensions(types)},
                                            {"THREADS", std::to_string(t.invocations())},
                                            {"BUFFERS", buffers},
                                            {"HELPERS", helpers},
                                            {"TM", std::to_string(t.tm)},
                                            {"TN", std::to_string(t.tn)},
                                            {"TK", std::to_string(t.tk)},
                                            {"RM", std::to_string(t.rm)},
                                            {"RN", std::to_string(t.rn)},
                                            {"GEMM_K", std::to_string(s.k)},
                                            {"M_TILES", std::to_string(m_tiles)},
                                            {"N_TILES", std::to_string(n_tiles)},
                                            {"TILES", std::to_string(plan.tile_count)}});
  k.workgroup_size = plan.workgroup_size;
  k.workgroup_count = plan.workgroup_count;
  k.workgroup_memory_bytes = plan.workgroup_memory_bytes;
  k.tiles = plan.tiles;
  k.flops = conv_flops(g);
  k.bytes = conv_min_bytes(c);
  if (from_columns)  // the GEMM reads the columns instead of the input
    k.bytes += double(s.groups) * double(s.m) * double(s.k) * double(dtype_size(c.dtype)) -
               double(c.input->type.size_bytes());
  k.notes = plan.notes;
  return k;
}

}  // namespace vkc::codegen::kernels::conv
