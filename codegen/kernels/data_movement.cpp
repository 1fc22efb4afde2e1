// Transpose, Pad, Reverse, Slice, Concat, Broadcast: gathers, one invocation per output element.
// 8- and 16-bit elements on a target without their storage extension (vulkan-min) move inside
// 32-bit words instead: one invocation per output word, which gathers its 4 (2) elements from
// the source words and writes the word whole. Tensors start at aligned offsets (16 bytes at
// least), so the last word's bytes past a tensor's end are padding, never another tensor's.
//
// Every op here is an affine map from output coordinates to an input offset (plus, for pad, a
// bounds test per dim), so a single generator covers them all, and a chain of them (transpose ->
// slice, with reshape views between) composes into one such map: one gather for the chain.
// Concat binds at most maxPerStageDescriptorStorageBuffers - 1 inputs per dispatch and splits the
// rest into further dispatches that write disjoint ranges of the output.
#include <algorithm>
#include <cstring>
#include <optional>

#include "codegen/glsl_types.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/kernels/word_storage.h"
#include "codegen/shader_library.h"
#include "codegen/strided_view.h"
#include "ir/slice_geometry.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels {

std::string word_type(DType t, const TargetLimits& target, const std::string& what) {
  switch (dtype_size(t)) {
    case 4: return "uint";
    case 8: return "uvec2";
    default: require_storable(t, target, what); return glsl_storage_type(t);
  }
}

std::string word_extensions(DType t) {
  return dtype_size(t) >= 4 ? std::string() : glsl_extensions({t});
}

std::string buffer_decl(uint32_t binding, const std::string& type, bool writes, const std::string& name) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ",
             writes ? "writeonly " : "readonly ", "buffer Buffer", binding, " { ", type,
             " data[]; } ", name, ";\n");
}

namespace {

constexpr uint32_t kWorkgroup = 256;

// The pad value as a word literal with exactly the bits the reference stores (set_f64 rounding and
// saturation included).
std::string fill_literal(DType t, double value) {
  HostTensor fill(t, {});
  fill.set_f64(0, value);
  const auto* bytes = static_cast<const uint8_t*>(fill.data());
  switch (dtype_size(t)) {
    case 4: {
      uint32_t w;
      std::memcpy(&w, bytes, 4);
      return cat(w, "u");
    }
    case 8: {
      uint32_t w[2];
      std::memcpy(w, bytes, 8);
      return cat("uvec2(", w[0], "u, ", w[1], "u)");
    }
    default: break;
  }
  if (t == DType::f16) return cat("float16_t(", glsl_literal(DType::f32, fill.get_f64(0)), ")");
  return cat(glsl_storage_type(t), "(", fill.get_i64(0), ")");
}

// Elements of `t` that move inside 32-bit words on `target` (0: they move as words of their own).
uint32_t per_word(DType t, const TargetLimits& target) {
  return dtype_size(t) < 4 && !gpu_storable(t, target) ? uint32_t(4 / dtype_size(t)) : 0;
}

// The raw bits of a pad value of a sub-word type, as a uint literal.
std::string fill_bits(DType t, double value) {
  HostTensor fill(t, {});
  fill.set_f64(0, value);
  uint32_t w = 0;
  std::memcpy(&w, fill.data(), dtype_size(t));
  return cat(w, "u");
}

// The packed form's body: element e of output word gid is gathered by `element` (GLSL that sets
// `uint v` from element index `q`), then the word is written whole.
std::string packed_body(uint32_t per, int64_t total, const std::string& element) {
  const uint32_t bits = 32 / per;
  return cat("  uint word = 0u;\n", "  [[unroll]] for (uint e = 0u; e < ", per, "u; ++e) {\n", "    uint q = gid * ", per,
             "u + e;\n", "    if (q >= ", total, "u) break;\n", "    uint v = 0u;\n", element, "    word |= (v & ",
             (1u << bits) - 1u, "u) << (", bits, "u * e);\n", "  }\n", "  result.data[gid] = word;\n");
}

// GLSL reading element `src` (an index expression) of buffer `buf` of packed words.
std::string packed_read(const std::string& buf, const std::string& src, uint32_t per) {
  return cat("(", buf, ".data[(", src, ") / ", per, "u] >> (", 32 / per, "u * ((", src, ") % ", per, "u)))");
}

// Output coordinate d maps to input position c * mult + offset; `bounded` dims (pad) skip the
// read when that position falls outside [0, extent).
struct DimMap {
  int64_t step = 1;  // position = c * step + offset (step 0: broadcast)
  int64_t offset = 0;
  int64_t stride = 0;  // input stride of this position
  bool bounded = false;
  int64_t extent = 0;
};

// GLSL computing `src` (int, from `base`) and, when some dim is bounded, `inside` (bool).
std::string gather_code(const Shape& out_shape, const std::vector<DimMap>& dims, int64_t base = 0) {
  std::string s = unravel_code(out_shape, "gid", "c");
  s += cat("  int src = ", int_literal(base), ";\n");
  bool any_bounded = false;
  for (const DimMap& m : dims) any_bounded |= m.bounded;
  if (any_bounded) s += "  bool inside = true;\n";
  for (size_t d = 0; d < dims.size(); ++d) {
    const DimMap& m = dims[d];
    if (m.bounded) {
      s += cat("  { int p = int(c", d, ") * ", m.step, " + ", int_literal(m.offset), "; inside = inside && p >= 0 && p < ",
               m.extent, "; src += p * ", m.stride, "; }\n");
    } else if (m.step * m.stride != 0 || m.offset != 0) {
      s += cat("  src += (int(c", d, ") * ", int_literal(m.step), " + ", int_literal(m.offset), ") * ",
               int_literal(m.stride), ";\n");
    }
  }
  return s;
}

EmittedKernel gather_kernel(const std::string& family, const ir::Value* in, const ir::Value* out,
                            const std::vector<DimMap>& dims, const std::string& fill,
                            const KernelContext& ctx, const std::string& what, int64_t base = 0) {
  DType t = out->type.dtype;
  int64_t total = shape_numel(out->type.shape);
  check_32bit(std::max(total, shape_numel(in->type.shape)), what);
  const uint32_t per = per_word(t, ctx.target);
  std::string word = per ? "uint" : word_type(t, ctx.target, what);
  EmittedKernel k;
  k.kernel = family;
  k.strategy = per ? cat("gather, ", per, " per 32-bit word") : "gather";
  k.bindings = {{ctx.tensor(in), false}, {ctx.tensor(out), true}};
  std::string body;
  if (per) {
    std::string element = "    {\n    uint gid = q;\n" + gather_code(out->type.shape, dims, base);
    std::string read = packed_read("src_buf", "uint(src)", per);
    element += fill.empty() ? cat("    v = ", read, ";\n    }\n")
                            : cat("    v = inside ? ", read, " : ", fill, ";\n    }\n");
    body = packed_body(per, total, element);
  } else {
    body = gather_code(out->type.shape, dims, base);
    if (fill.empty()) body += "  result.data[gid] = src_buf.data[src];\n";
    else body += cat("  result.data[gid] = inside ? src_buf.data[inside ? src : 0] : ", fill, ";\n");
  }
  const int64_t invocations = per ? ceil_div(total, int64_t(per)) : total;
  plan_linear(k, uint64_t(invocations), kWorkgroup, ctx.target, what);
  k.glsl = instantiate_shader(
      "data_movement",
      {{"EXTENSIONS", per ? "#extension GL_EXT_control_flow_attributes : require" : word_extensions(t)},
       {"WG_SIZE", cat(k.workgroup_size[0])},
       {"BUFFERS", buffer_decl(0, word, false, "src_buf") + buffer_decl(1, word, true, "result")},
       {"INDEX", folded_global_index(k.workgroup_size[0])},
       {"TOTAL", cat(invocations)},
       {"BODY", body}});
  k.bytes = double(in->type.size_bytes() + out->type.size_bytes());
  k.tiles["elements"] = total;
  return k;
}

int64_t axis_of(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }


std::vector<EmittedKernel> emit_concat(const ir::Op& op, const KernelContext& ctx, const std::string& what) {
  const ir::Value* out = op.result();
  const Shape& shape = out->type.shape;
  DType t = out->type.dtype;
  size_t axis = size_t(axis_of(op.attr_int("axis"), int64_t(shape.size())));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t out_block = shape[axis] * inner;
  check_32bit(shape_numel(shape), what);

  // Operands with elements, each with its block offset inside an output block.
  struct Part { const ir::Value* v; int64_t offset, block; };
  std::vector<Part> parts;
  int64_t offset = 0;
  for (int i = 0; i < op.num_operands(); ++i) {
    const ir::Value* v = op.operand(i);
    int64_t block = v->type.shape[axis] * inner;
    if (block > 0) parts.push_back({v, offset, block});
    offset += block;
  }
  const size_t per_dispatch =
      std::min<size_t>(16, std::max<uint32_t>(2, ctx.target.max_per_stage_descriptor_storage_buffers) - 1);
  if (const uint32_t per = per_word(t, ctx.target)) {
    // Packed words: one dispatch writes every word, so no two dispatches share one.
    check(parts.size() <= per_dispatch, what, ": ", parts.size(), " ", dtype_name(t), " operands packed in 32-bit words on target '",
          ctx.target.name, "' (no ", dtype_size(t) * 8, "-bit storage) need one dispatch, which binds at most ", per_dispatch);
    const int64_t total = outer * out_block;
    EmittedKernel k;
    k.kernel = "concat";
    k.strategy = cat("gather, ", per, " per 32-bit word");
    std::string buffers, element = cat("    uint o = q / ", out_block, "u, j = q % ", out_block, "u;\n");
    for (size_t i = 0; i < parts.size(); ++i) {
      buffers += buffer_decl(uint32_t(i), "uint", false, cat("in", i));
      k.bindings.push_back({ctx.tensor(parts[i].v), false});
      std::string cond = i + 1 < parts.size() ? cat("if (j < ", parts[i].offset + parts[i].block, "u) ") : "";
      element += cat("    ", i > 0 ? "else " : "", cond, "v = ",
                     packed_read(cat("in", i), cat("o * ", parts[i].block, "u + j - ", parts[i].offset, "u"), per), ";\n");
      k.bytes += double(parts[i].v->type.size_bytes()) * 2;
    }
    buffers += buffer_decl(uint32_t(parts.size()), "uint", true, "result");
    k.bindings.push_back({ctx.tensor(out), true});
    const int64_t words = ceil_div(total, int64_t(per));
    plan_linear(k, uint64_t(words), kWorkgroup, ctx.target, what);
    k.glsl = instantiate_shader("data_movement", {{"EXTENSIONS", "#extension GL_EXT_control_flow_attributes : require"},
                                                  {"WG_SIZE", cat(k.workgroup_size[0])},
                                                  {"BUFFERS", buffers},
                                                  {"INDEX", folded_global_index(k.workgroup_size[0])},
                                                  {"TOTAL", cat(words)},
                                                  {"BODY", packed_body(per, total, element)}});
    k.tiles["elements"] = total;
    if (total == 0) return {};
    return {std::move(k)};
  }
  const std::string word = word_type(t, ctx.target, what);
  std::vector<EmittedKernel> kernels;
  for (size_t first = 0; first < parts.size(); first += per_dispatch) {
    size_t last = std::min(parts.size(), first + per_dispatch);
    int64_t chunk_offset = parts[first].offset;
    int64_t chunk_block = 0;
    for (size_t i = first; i < last; ++i) chunk_block += parts[i].block;
    int64_t total = outer * chunk_block;
    EmittedKernel k;
    k.kernel = "concat";
    k.strategy = parts.size() > per_dispatch ? cat("gather, inputs ", first, "..", last - 1) : "gather";
    std::string buffers, body;
    body += cat("  uint o = gid / ", chunk_block, "u;\n  uint j = gid % ", chunk_block, "u;\n");
    body += cat("  uint dst = o * ", out_block, "u + ", chunk_offset, "u + j;\n");
    int64_t start = 0;
    for (size_t i = first; i < last; ++i) {
      uint32_t b = uint32_t(i - first);
      buffers += buffer_decl(b, word, false, cat("in", b));
      k.bindings.push_back({ctx.tensor(parts[i].v), false});
      std::string cond = i + 1 < last ? cat("if (j < ", start + parts[i].block, "u) ") : "";
      body += cat("  ", i > first ? "else " : "", cond, "{ result.data[dst] = in", b, ".data[o * ",
                  parts[i].block, "u + (j - ", start, "u)]; }\n");
      k.bytes += double(parts[i].v->type.size_bytes()) * 2;
      start += parts[i].block;
    }
    uint32_t out_binding = uint32_t(last - first);
    buffers += buffer_decl(out_binding, word, true, "result");
    k.bindings.push_back({ctx.tensor(out), true});
    plan_linear(k, uint64_t(total), kWorkgroup, ctx.target, what);
    k.glsl = instantiate_shader("data_movement", {{"EXTENSIONS", word_extensions(t)},
                                                  {"WG_SIZE", cat(k.workgroup_size[0])},
                                                  {"BUFFERS", buffers},
                                                  {"INDEX", folded_global_index(k.workgroup_size[0])},
                                                  {"TOTAL", cat(total)},
                                                  {"BODY", body}});
    k.tiles["elements"] = total;
    kernels.push_back(std::move(k));
  }
  check(!kernels.empty() || shape_numel(shape) == 0, "internal: ", what, " produced no dispatch");
  return kernels;
}

// A chain of index maps with reshape views between them (dispatch formation groups them where
// they compose into one strided view of the first op's operand): one gather through the view.
EmittedKernel index_map_chain(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Value* in = group.ops.front()->operand(0);
  const ir::Value* out = group.anchor->result();
  check(group.ops.back() == group.anchor, "internal: ", what, " is not the last op of its gather");
  std::optional<StridedView> view =
      compose_index_maps(in->type.shape, std::vector<const ir::Op*>(group.ops.begin(), group.ops.end()));
  check(view && view->shape == out->type.shape, "internal: ", group.describe(), " is not one strided view");
  std::vector<DimMap> dims(view->shape.size());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = {1, 0, view->strides[d]};
  std::string family;
  for (const ir::Op* op : group.ops)
    if (!is_view_op(op->kind)) family += (family.empty() ? "" : "_") + std::string(ir::op_name(op->kind));
  return gather_kernel(family, in, out, dims, "", ctx, what, view->offset);
}

}  // namespace

std::vector<EmittedKernel> emit_data_movement(const DispatchGroup& group, const KernelContext& ctx,
                                              std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  const std::string what = op.describe();
  if (group.ops.size() > 1) return {index_map_chain(group, ctx, what)};
  if (op.kind == ir::OpKind::Concat) return emit_concat(op, ctx, what);

  const ir::Value* in = op.operand(0);
  const ir::Value* out = op.result();
  const Shape& is = in->type.shape;
  const Shape& os = out->type.shape;
  const int64_t rank = int64_t(is.size());
  std::vector<int64_t> stride = strides_of(is);
  std::vector<DimMap> dims(os.size());
  std::string fill;
  std::string family;
  switch (op.kind) {
    case ir::OpKind::Transpose: {
      family = "transpose";
      const std::vector<int64_t>& perm = op.attr_ints("perm");
      for (size_t d = 0; d < os.size(); ++d) dims[d] = {1, 0, stride[size_t(axis_of(perm[d], rank))]};
      break;
    }
    case ir::OpKind::Pad: {
      family = "pad";
      const std::vector<int64_t>& pads = op.attr_ints("pads");
      bool any = false;
      for (size_t d = 0; d < os.size(); ++d) {
        bool bounded = pads[d] > 0 || pads[size_t(rank) + d] > 0;
        any |= bounded;
        dims[d] = {1, -pads[d], stride[d], bounded, is[d]};
      }
      if (any)
        fill = per_word(out->type.dtype, ctx.target) ? fill_bits(out->type.dtype, op.attr_float("value"))
                                                     : fill_literal(out->type.dtype, op.attr_float("value"));
      break;
    }
    case ir::OpKind::Reverse: {
      family = "reverse";
      for (size_t d = 0; d < os.size(); ++d) dims[d] = {1, 0, stride[d]};
      for (int64_t a : op.attr_ints("axes")) {
        size_t d = size_t(axis_of(a, rank));
        dims[d].step = -1;
        dims[d].offset = is[d] - 1;
      }
      break;
    }
    case ir::OpKind::Slice: {
      family = "slice";
      for (size_t d = 0; d < os.size(); ++d) dims[d] = {1, 0, stride[d]};
      for (const ir::SlicedAxis& s : ir::sliced_axes(op, is)) {
        dims[s.axis].step = s.step;
        dims[s.axis].offset = s.start;
      }
      break;
    }
    case ir::OpKind::Broadcast: {
      family = "broadcast";
      size_t lead = os.size() - is.size();
      for (size_t d = 0; d < os.size(); ++d) {
        bool real = d >= lead && is[d - lead] != 1;
        dims[d] = {real ? 1 : 0, 0, real ? stride[d - lead] : 0};
      }
      break;
    }
    default: throw Error(cat("internal: ", what, " is not a data movement op"));
  }
  return {gather_kernel(family, in, out, dims, fill, ctx, what)};
}

}  // namespace vkc::codegen::kernels
