// Im2Col as its own dispatch, and the column-matrix kernel of the conv "im2col" strategy.
// Two kernels: "tiled" (shaders/im2col_tiled.comp, a workgroup-memory transpose; the default) and
// "gather" (shaders/im2col.comp, one pass without workgroup memory), which runs when no tile fits
// the target's workgroup memory or invocations, or when forced.
#include <optional>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/conv_common.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace conv {
namespace {

// A tile of `positions` rows x `columns` columns of the column matrix, staged as the compute type
// (4 or 8 bytes) with an odd row stride (shaders/im2col_tiled.comp says why).
struct Im2ColTile {
  uint32_t workgroup = 0, positions = 0, columns = 0, element_bytes = 4;
  uint32_t stride() const { return columns | 1u; }
  uint32_t memory_bytes() const { return positions * stride() * element_bytes; }
};

// The largest tile that fits: up to 64 columns (a warp stores whole 128-byte lines) and about 4096
// elements, positions a power of two dividing the workgroup so that each invocation gathers for
// one position. Halved until it fits; none fits only below one staged row (260 bytes at 64 columns).
std::optional<Im2ColTile> plan_im2col_tile(int64_t k, DType dtype, const TargetLimits& target) {
  Im2ColTile t;
  t.workgroup = fit_workgroup_size_x(256, target);
  t.element_bytes = dtype == DType::i64 ? 8 : 4;
  t.columns = uint32_t(std::min<int64_t>(k, 64));
  t.positions = 1;
  while (t.positions * 2 <= t.workgroup && t.positions * 2 * t.columns <= 4096) t.positions *= 2;
  for (; t.positions >= 1; t.positions /= 2)
    if (t.memory_bytes() <= target.max_compute_shared_memory_size) return t;
  return std::nullopt;
}

EmittedKernel emit_im2col_gather(const ConvOperands& c, const KernelContext& ctx, const std::string& columns_tensor) {
  const ir::ConvGeometry& g = c.g;
  ConvGemmShape s = conv_gemm_shape(g);
  uint64_t total = uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k);
  EmittedKernel k;
  k.kernel = "im2col";
  // Runs of 4 columns per invocation (shaders/im2col.comp says why); stored as one vector when
  // every run starts on a 16-byte boundary (4-byte elements, K a multiple of 4).
  constexpr int64_t kRun = 4;
  const bool vector_store = dtype_size(c.dtype) == 4 && s.k % kRun == 0;
  const int64_t chunks = ceil_div(s.k, kRun);
  const uint64_t invocations = uint64_t(s.groups) * uint64_t(s.m) * uint64_t(chunks);
  k.strategy = vector_store ? "gather, 4 columns per invocation, vector stores" : "gather, 4 columns per invocation";
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

EmittedKernel emit_im2col_tiled(const ConvOperands& c, const KernelContext& ctx, const std::string& columns_tensor,
                                const Im2ColTile& t) {
  const ir::ConvGeometry& g = c.g;
  ConvGemmShape s = conv_gemm_shape(g);
  uint64_t total = uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k);
  EmittedKernel k;
  k.kernel = "im2col_tiled";
  k.strategy = "tiled";
  std::string value = glsl_compute_type(c.dtype);
  FusedCode xl = operand_loader(*c.group, c.input, "x_at", 0, ctx);
  k.bindings = xl.bindings;
  k.bindings.push_back({columns_tensor, true});
  std::string buffers = xl.buffers + glsl_buffer(uint32_t(xl.bindings.size()), c.dtype, true, "cols");
  std::string helpers = xl.functions + decode_out_fn(g) + decode_k_fn(g) +
                        gather_input_fn(g, c.input->type.shape, "x_at", value);
  std::set<DType> types = xl.types;
  types.insert(c.dtype);
  const uint64_t k_tiles = ceil_div(uint64_t(s.k), t.columns);
  const uint64_t p_tiles = ceil_div(uint64_t(s.positions), t.positions);
  const uint64_t workgroups = uint64_t(c.g.batch) * uint64_t(s.groups) * p_tiles * k_tiles;
  k.workgroup_size = {t.workgroup, 1, 1};
  k.workgroup_count = linear_grid(workgroups, 1, ctx.target, c.what);
  k.workgroup_memory_bytes = t.memory_bytes();
  k.glsl = instantiate_shader("im2col_tiled", {{"EXTENSIONS", glsl_extensions(types)},
                                               {"WG_SIZE", std::to_string(t.workgroup)},
                                               {"BUFFERS", buffers},
                                               {"HELPERS", helpers},
                                               {"VALUE", value},
                                               {"STORE_TYPE", glsl_storage_type(c.dtype)},
                                               {"TP", std::to_string(t.positions)},
                                               {"TK", std::to_string(t.columns)},
                                               {"STRIDE", std::to_string(t.stride())},
                                               {"P", std::to_string(s.positions)},
                                               {"K", std::to_string(s.k)},
                                               {"G", std::to_string(s.groups)},
                                               {"CG", std::to_string(g.in_channels_per_group())},
                                               {"K_TILES", std::to_string(k_tiles)},
                                               {"P_TILES", std::to_string(p_tiles)},
                                               {"WORKGROUPS", std::to_string(workgroups)}});
  k.bytes = double(c.input->type.size_bytes()) + double(total) * double(dtype_size(c.dtype));
  k.tiles = {{"rows", s.groups * s.m}, {"columns", s.k}, {"tile_positions", t.positions},
             {"tile_columns", t.columns}};
  return k;
}

}  // namespace

EmittedKernel emit_im2col_kernel(const ConvOperands& c, const KernelContext& ctx, const std::string& columns_tensor,
                                 const std::string& forced) {
  ConvGemmShape s = conv_gemm_shape(c.g);
  check_32bit_elements(uint64_t(s.groups) * uint64_t(s.m) * uint64_t(s.k), "the im2col matrix", c.what);
  check(forced.empty() || forced == "tiled" || forced == "gather", c.what, ": unknown im2col strategy '", forced,
        "' (tiled or gather)");
  std::optional<Im2ColTile> tile = plan_im2col_tile(s.k, c.dtype, ctx.target);
  check(forced != "tiled" || tile.has_value(), c.what, ": strategy 'tiled' does not apply: no im2col tile fits ",
        ctx.target.max_compute_shared_memory_size, " bytes of workgroup memory");
  if (forced == "gather" || !tile) return emit_im2col_gather(c, ctx, columns_tensor);
  return emit_im2col_tiled(c, ctx, columns_tensor, *tile);
}

}  // namespace conv

std::vector<EmittedKernel> emit_im2col(const DispatchGroup& group, const KernelContext& ctx,
                                       std::vector<ScratchTensor>&) {
  conv::ConvOperands c = conv::resolve_conv(group, ctx);
  check(c.output->type.dtype == c.input->type.dtype, c.what, ": result type differs from the input's");
  return {conv::emit_im2col_kernel(c, ctx, ctx.tensor(c.output), ctx.forced(*c.op))};
}

}  // namespace vkc::codegen::kernels
