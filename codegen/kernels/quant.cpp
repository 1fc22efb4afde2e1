// Quantize, Dequantize: per tensor or per channel, matching the reference bit for bit:
//   quantize:   q = saturate(roundEven(float(x) / scale) + zero_point), NaN -> 0
//   dequantize: x = float(q - zero_point) * scale (one f32 rounding of an exact product)
//
// 8-bit tensors use 8-bit storage where the target has it; otherwise they are accessed as packed
// uint words. Packed access reads (and, for quantize results, writes) whole words, so on such
// targets the runtime must bind every 8-bit tensor with its range rounded up to a multiple of 4.
#include "codegen/glsl_types.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

constexpr uint32_t kWorkgroup = 256;

bool is_8bit(DType t) { return t == DType::i8 || t == DType::u8; }

// One bound tensor: declaration plus a GLSL function `<name>_at(uint i)` returning its element in
// the compute type (float or int).
struct Operand {
  std::string decl, fn;
};

Operand read_operand(uint32_t binding, DType t, const std::string& name, bool packed) {
  Operand o;
  if (is_8bit(t) && packed) {
    o.decl = cat("layout(std430, set = 0, binding = ", binding, ") restrict readonly buffer Buffer",
                 binding, " { uint data[]; } ", name, ";\n");
    // bitfieldExtract on int sign-extends (i8); on uint it zero-extends (u8).
    std::string word = cat(name, ".data[i >> 2u]");
    o.fn = t == DType::i8
               ? cat("int ", name, "_at(uint i) { return bitfieldExtract(int(", word, "), int((i & 3u) * 8u), 8); }\n")
               : cat("int ", name, "_at(uint i) { return int(bitfieldExtract(", word, ", int((i & 3u) * 8u), 8)); }\n");
    return o;
  }
  o.decl = glsl_buffer(binding, t, false, name);
  o.fn = cat(glsl_compute_type(t), " ", name, "_at(uint i) { return ", glsl_compute_type(t), "(", name,
             ".data[i]); }\n");
  return o;
}

}  // namespace

std::vector<EmittedKernel> emit_quant(const DispatchGroup& group, const KernelContext& ctx,
                                      std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  check(group.ops.size() == 1, "internal: ", op.describe(), " was fused with other ops");
  const std::string what = op.describe();
  const bool quantize = op.kind == ir::OpKind::Quantize;
  const ir::Value* x = op.operand(0);
  const ir::Value* scale = op.operand(1);
  const ir::Value* zp = op.num_operands() > 2 ? op.operand(2) : nullptr;
  const ir::Value* out = op.result();
  const int64_t total = shape_numel(x->type.shape);
  check_32bit(total, what);

  // Per-channel parameters: channel of flat index i is (i / inner) % channels.
  bool per_channel = !(scale->type.shape.empty() || (scale->type.rank() == 1 && scale->type.shape[0] == 1));
  int64_t inner = 1, channels = 1;
  if (per_channel) {
    int64_t axis = op.attr_int("axis");
    if (axis < 0) axis += x->type.rank();
    channels = x->type.shape[size_t(axis)];
    for (size_t d = size_t(axis) + 1; d < x->type.shape.size(); ++d) inner *= x->type.shape[d];
  }

  std::set<DType> types;
  auto packed_for = [&](DType t) {
    if (!is_8bit(t)) {
      require_storable(t, ctx.target, what);
      types.insert(t);
      return false;
    }
    if (gpu_storable(t, ctx.target)) {
      types.insert(t);
      return false;
    }
    return true;
  };

  EmittedKernel k;
  k.kernel = quantize ? "quantize" : "dequantize";
  std::string buffers, fns;
  uint32_t b = 0;
  bool any_packed = false;
  for (auto [v, name] : {std::pair{x, "x"}, std::pair{scale, "scale"}, std::pair{zp, "zp"}}) {
    if (v == nullptr) continue;
    bool packed = packed_for(v->type.dtype);
    any_packed |= packed;
    Operand o = read_operand(b++, v->type.dtype, name, packed);
    buffers += o.decl;
    fns += o.fn;
    k.bindings.push_back({ctx.tensor(v), false});
  }
  DType rt = out->type.dtype;
  bool out_packed = packed_for(rt);
  any_packed |= out_packed;
  if (out_packed)
    buffers += cat("layout(std430, set = 0, binding = ", b, ") restrict writeonly buffer Buffer", b,
                   " { uint data[]; } result;\n");
  else
    buffers += glsl_buffer(b, rt, true, "result");
  k.bindings.push_back({ctx.tensor(out), true});

  fns += per_channel ? cat("uint channel_of(uint i) { return (i / ", inner, "u) % ", channels, "u; }\n")
                     : "uint channel_of(uint i) { return 0u; }\n";
  std::string zp_term = zp ? "zp_at(c)" : "0";
  if (quantize) {
    double lo = rt == DType::i8 ? -128 : 0, hi = rt == DType::i8 ? 127 : 255;
    fns += cat("int quantize_at(uint i) {\n"
               "  uint c = channel_of(i);\n"
               "  float q = x_at(i) / scale_at(c);\n"
               "  q = roundEven(q) + float(", zp_term, ");\n"
               "  return isnan(q) ? 0 : int(clamp(q, ", lo, ".0, ", hi, ".0));\n"
               "}\n");
  } else {
    fns += cat("float dequantize_at(uint i) {\n"
               "  uint c = channel_of(i);\n"
               "  return float(x_at(i) - ", zp_term, ") * scale_at(c);\n"
               "}\n");
  }

  std::string body;
  uint64_t invocations = uint64_t(total);
  if (quantize && out_packed) {
    // Four consecutive elements per invocation, packed little-endian into one word.
    invocations = (uint64_t(total) + 3) / 4;
    body = cat("  uint word = 0u;\n"
               "  for (uint j = 0u; j < 4u; ++j) {\n"
               "    uint i = gid * 4u + j;\n"
               "    if (i < ", total, "u) word |= (uint(quantize_at(i)) & 0xffu) << (j * 8u);\n"
               "  }\n"
               "  result.data[gid] = word;\n");
    k.strategy = "packed 8-bit words, 4 elements per invocation";
  } else if (quantize) {
    body = cat("  result.data[gid] = ", glsl_storage_type(rt), "(quantize_at(gid));\n");
    k.strategy = "one invocation per element";
  } else {
    body = "  result.data[gid] = dequantize_at(gid);\n";
    k.strategy = any_packed ? "one invocation per element, packed 8-bit reads" : "one invocation per element";
  }
  plan_linear(k, invocations, kWorkgroup, ctx.target, what);
  k.glsl = instantiate_shader("quant", {{"EXTENSIONS", glsl_extensions(types)},
                                        {"WG_SIZE", cat(k.workgroup_size[0])},
                                        {"BUFFERS", buffers},
                                        {"FUNCTIONS", fns},
                                        {"INDEX", folded_global_index(k.workgroup_size[0])},
                                        {"TOTAL", cat(invocations)},
                                        {"BODY", body}});
  if (any_packed)
    k.notes = "8-bit tensors accessed as packed words: bindings must cover whole words";
  k.flops = double(total) * 3;
  k.bytes = double(x->type.size_bytes() + out->type.size_bytes());
  k.tiles["elements"] = total;
  return {k};
}

}  // namespace vkc::codegen::kernels
