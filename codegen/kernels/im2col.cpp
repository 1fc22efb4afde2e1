// Im2Col as its own dispatch, and the column-matrix kernel of the conv "im2col" strategy.
#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace conv {

EmittedKernel emit_im2col_kernel(const ConvOperands& c, const KernelContext& ctx,
                                 const std::string& columns_tensor) {
  const ir::ConvGeometry& g = c.g;
  ConvGemmShape s = conv_gemm_shape(g);
  uint64_t total = uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k);
  check_32bit_elements(total, "the im2col matrix", c.what);
  EmittedKernel k;
  k.kernel = "im2col";
  // Runs of 4 columns per invocation (shaders/im2col.comp says why); stored as one vector when
  // every run starts on a 16-byte boundary (4-byte elements, K a multiple of 4).
  constexpr int64_t kRun = 4;
  const bool vector_store = dtype_size(c.dtype) == 4 && s.k % kRun == 0;
  const int64_t chunks = (s.k + kRun - 1) / kRun;
  const uint64_t invocations = uint64_t(s.groups) * uint64_t(s.m) * uint64_t(chunks);
  k.strategy = vector_store ? "4 columns per invocation, vector stores" : "4 columns per invocation";
  std::string type = glsl_storage_type(c.dtype);
  // The input is read through the conv's fused prologue, if any (codegen/fusion.h).
  FusedCode xl = operand_loader(*c.group, c.input, "x_at", 0, ctx);
  k.bindings = xl.bindings;
  k.bindings.push_back({columns_tensor, true});
  const uint32_t out_binding = uint32_t(xl.bindings.size());
  std::string buffers = xl.buffers;
  std::string store;
  if (vector_store) {
    std::string vec = c.dtype == DType::f32 ? "vec4" : "ivec4";
    buffers += cat("layout(std430, set = 0, binding = ", out_binding, ") restrict writeonly buffer Buffer",
                   out_binding, " { ", vec, " data[]; } cols;\n");
    store = cat("  cols.data[(row * ", u32(s.k), " + k0) / 4u] = ", vec, "(v[0], v[1], v[2], v[3]);\n");
  } else {
    buffers += glsl_buffer(out_binding, c.dtype, true, "cols");
    store = cat("  [[unroll]] for (uint j = 0u; j < ", kRun, "u; ++j)\n    if (k0 + j < ", u32(s.k),
                ") cols.data[row * ", u32(s.k), " + k0 + j] = v[j];\n");
  }
  std::string helpers = xl.functions + decode_out_fn(g) + decode_k_fn(g) +
                        gather_input_fn(g, c.input->type.shape, "x_at", type);
  std::set<DType> types = xl.types;
  types.insert(c.dtype);
  uint32_t wg = fit_workgroup_size_x(128, ctx.target);
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(invocations, wg, ctx.target, c.what);
  k.glsl = instantiate_shader("im2col", {{"EXTENSIONS", glsl_extensions(types)},
                                         {"WG_SIZE", std::to_string(wg)},
                                         {"BUFFERS", buffers},
                                         {"HELPERS", helpers},
                                         {"INVOCATIONS", std::to_string(invocations)},
                                         {"CHUNKS", std::to_string(chunks)},
                                         {"RUN", std::to_string(kRun)},
                                         {"TYPE", type},
                                         {"STORE", store},
                                         {"K", std::to_string(s.k)},
                                         {"P", std::to_string(s.positions)},
                                         {"G", std::to_string(s.groups)},
                                         {"CG", std::to_string(g.in_channels_per_group())}});
  k.bytes = double(c.input->type.size_bytes()) + double(total) * double(dtype_size(c.dtype));
  k.tiles = {{"rows", s.groups * s.m}, {"columns", s.k}};
  return k;
}

}  // namespace conv

std::vector<EmittedKernel> emit_im2col(const DispatchGroup& group, const KernelContext& ctx,
                                       std::vector<ScratchTensor>&) {
  conv::ConvOperands c = conv::resolve_conv(group, ctx);
  check(c.output->type.dtype == c.input->type.dtype, c.what, ": result type differs from the input's");
  return {conv::emit_im2col_kernel(c, ctx, ctx.tensor(c.output))};
}

}  // namespace vkc::codegen::kernels
