// conv_integer and matmul_integer: exact i32 sums of products of 8-bit operands on the SIMT cores
// (shaders/integer_product.comp). Both are one integer GEMM, result[row][col] =
// bias[col] + sum_k (a(row, k) - a_zp) * (b(k, col) - b_zp[col]):
//   matmul: rows are lhs rows, cols are rhs columns, z walks the (broadcast) batch;
//   conv:   rows are output pixels (N and spatial), cols the output channels of one group, z walks
//           the groups, k runs over (input channel, kernel position) with padding contributing 0.
// 8-bit tensors use 8-bit storage where the target has it, else packed words (as quant.cpp; an
// 8-bit result is then merged into its words with atomics). With requantize_* attributes the store
// requantizes the sum to 8 bits as ONNX Runtime does (docs/int8.md).
#include <cstring>
#include <set>

#include "codegen/glsl_types.h"
#include "codegen/kernels/integer_common.h"
#include "codegen/kernels/integer_coopmat.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "ir/conv_geometry.h"
#include "ir/matmul_geometry.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace integer {
namespace {
bool is_8bit(DType t) { return t == DType::i8 || t == DType::u8; }
}  // namespace

Reader int_reader(uint32_t binding, DType t, const std::string& name, const TargetLimits& target,
                  std::set<DType>& types) {
  Reader r;
  if (is_8bit(t) && !gpu_storable(t, target)) {
    r.decl = cat("layout(std430, set = 0, binding = ", binding, ") restrict readonly buffer Buffer", binding,
                 " { uint data[]; } ", name, ";\n");
    std::string word = cat(name, ".data[i >> 2u]");
    r.fn = t == DType::i8
               ? cat("int ", name, "_at(uint i) { return bitfieldExtract(int(", word, "), int((i & 3u) * 8u), 8); }\n")
               : cat("int ", name, "_at(uint i) { return int(bitfieldExtract(", word, ", int((i & 3u) * 8u), 8)); }\n");
    return r;
  }
  types.insert(t);
  r.decl = glsl_buffer(binding, t, false, name);
  r.fn = cat("int ", name, "_at(uint i) { return int(", name, ".data[i]); }\n");
  return r;
}

bool is_constant(const ir::Value* v) { return v->producer != nullptr && v->producer->kind == ir::OpKind::Constant; }

std::string ChannelTable::add(const std::vector<int32_t>& v, const std::string& index) {
  const size_t base = values.size();
  values.insert(values.end(), v.begin(), v.end());
  return cat("channel_table.data[", base == 0 ? "" : cat(base, "u + "), index, "]");
}

std::string ChannelTable::declaration(uint32_t binding) {
  return glsl_buffer(binding, DType::i32, false, "channel_table");
}

HostTensor ChannelTable::tensor() const {
  HostTensor t(DType::i32, Shape{int64_t(values.size())});
  std::copy(values.begin(), values.end(), t.as<int32_t>());
  return t;
}

// A constant zero point is written into the shader (no binding: the minimum Vulkan profile allows
// only 4 storage buffers), or per channel into the table where the kernel has one.
std::string zero_point_fn(const std::string& name, const ir::Value* zp, ChannelTable* table) {
  if (!is_constant(zp))
    return cat("int ", name, "(uint col) { return ", name, "_t_at(", zp->type.numel() == 1 ? "0u" : "col", "); }\n");
  const HostTensor& t = *zp->producer->attr_tensor("value");
  if (t.numel() == 1) return cat("int ", name, "(uint col) { return ", t.get_i64(0), "; }\n");
  if (table) {
    std::vector<int32_t> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(int32_t(t.get_i64(i)));
    return cat("int ", name, "(uint col) { return ", table->add(v, "col"), "; }\n");
  }
  std::string values;
  for (int64_t i = 0; i < t.numel(); ++i) values += cat(i ? ", " : "", t.get_i64(i));
  return cat("const int ", name, "_values[", t.numel(), "] = int[](", values, ");\n", "int ", name,
             "(uint col) { return ", name, "_values[col]; }\n");
}

// Requantization: f32(f32(acc) * M[col]) rounded half to even, plus the zero point, saturated; M
// written as exact bit patterns.
std::string store_fn(const ir::Op& op, DType rt, bool packed, ChannelTable* table) {
  if (rt == DType::i32) return "void store(uint i, uint col, int acc) { result.data[i] = acc; }\n";
  const std::vector<double>& m = op.attr_floats("requantize_scale");
  std::vector<int32_t> bits;
  for (double d : m) {
    const float f = float(d);
    int32_t b;
    std::memcpy(&b, &f, 4);
    bits.push_back(b);
  }
  std::string s, scale;
  if (table && m.size() > 1) {
    scale = cat("intBitsToFloat(", table->add(bits, "col"), ")");
  } else {
    std::string values;
    for (size_t i = 0; i < bits.size(); ++i) values += cat(i ? ", " : "", uint32_t(bits[i]), "u");
    s = cat("const uint requant_scale[", m.size(), "] = uint[](", values, ");  // f32 bits\n");
    scale = cat("uintBitsToFloat(requant_scale[", m.size() == 1 ? "0u" : "col", "])");
  }
  const bool i8 = rt == DType::i8;
  s += cat("int requantize(uint col, int acc) {\n"
           "  float v = float(acc) * ", scale, ";\n"
           "  return int(clamp(roundEven(v) + ", op.attr_int("requantize_zero_point"), ".0, ",
           i8 ? "-128.0, 127.0" : "0.0, 255.0", "));\n"
           "}\n");
  if (packed)
    return s + "void store(uint i, uint col, int acc) {\n"
               "  uint shift = (i & 3u) * 8u;\n"
               "  atomicAnd(result.data[i >> 2u], ~(0xffu << shift));\n"
               "  atomicOr(result.data[i >> 2u], (uint(requantize(col, acc)) & 0xffu) << shift);\n"
               "}\n";
  return s + cat("void store(uint i, uint col, int acc) { result.data[i] = ", glsl_storage_type(rt),
                 "(requantize(col, acc)); }\n");
}

}  // namespace integer

namespace {
using namespace integer;

constexpr uint32_t kTile = 4;                  // TM = TN: results per invocation along each axis
constexpr uint32_t kWgX = 8, kWgY = 8;         // invocations per workgroup

struct Gemm {
  int64_t rows = 0, cols = 0, depth = 0, z = 1;  // cols per z (conv: output channels per group)
  std::string setup, loop, store, fns;
};

// K loop body shared by both: av[i] and bv[j] are filled by `load_a` / `load_b`, then summed.
std::string accumulate() {
  return cat("    for (uint i = 0u; i < ", kTile, "u; ++i)\n"
             "      for (uint j = 0u; j < ", kTile, "u; ++j) acc[i][j] += av[i] * bv[j];\n");
}

Gemm plan_matmul(const ir::Op& op) {
  const Shape& a = op.operand(0)->type.shape;
  const Shape& b = op.operand(1)->type.shape;
  const Shape& out = op.result()->type.shape;
  ir::MatrixView va = ir::matrix_view(a, true, op.attr_bool("transpose_a"));
  ir::MatrixView vb = ir::matrix_view(b, false, op.attr_bool("transpose_b"));
  Shape batch(out.begin(), out.end() - 2);
  // Batch offsets of each operand: broadcast dims (extent 1 in the operand) stride 0.
  auto batch_dims = [&](const ir::MatrixView& v) {
    std::vector<StridedDim> dims;
    std::vector<int64_t> st = strides_of(v.batch);
    for (size_t d = 0; d < batch.size(); ++d) {
      int64_t od = int64_t(d) - int64_t(batch.size() - v.batch.size());
      int64_t stride = od >= 0 && v.batch[size_t(od)] != 1 ? st[size_t(od)] * v.matrix_size : 0;
      dims.push_back({batch[d], stride});
    }
    if (dims.empty()) dims.push_back({1, 0});
    return dims;
  };
  Gemm g;
  g.rows = va.rows;
  g.cols = vb.cols;
  g.depth = va.cols;
  g.z = shape_numel(batch);
  g.fns = offset_function("a_batch", batch_dims(va)) + offset_function("b_batch", batch_dims(vb));
  g.setup = cat("  const uint abase = a_batch(z), bbase = b_batch(z);\n"
                "  int bz[", kTile, "];\n"
                "  for (uint j = 0u; j < ", kTile, "u; ++j) bz[j] = b_zp(min(col0 + j, ", g.cols - 1, "u));\n");
  g.loop = cat("  for (uint k = 0u; k < ", g.depth, "u; ++k) {\n"
               "    int av[", kTile, "], bv[", kTile, "];\n"
               "    for (uint i = 0u; i < ", kTile, "u; ++i) {\n"
               "      uint r = row0 + i;\n"
               "      av[i] = r < ", g.rows, "u ? a_at(abase + r * ", va.row_stride, "u + k * ", va.col_stride,
               "u) - a_zp(0u) : 0;\n"
               "    }\n"
               "    for (uint j = 0u; j < ", kTile, "u; ++j) {\n"
               "      uint c = col0 + j;\n"
               "      bv[j] = c < ", g.cols, "u ? b_at(bbase + k * ", vb.row_stride, "u + c * ", vb.col_stride,
               "u) - bz[j] : 0;\n"
               "    }\n",
               accumulate(), "  }\n");
  g.store = cat("  for (uint i = 0u; i < ", kTile, "u; ++i)\n"
                "    for (uint j = 0u; j < ", kTile, "u; ++j) {\n"
                "      uint r = row0 + i, c = col0 + j;\n"
                "      if (r < ", g.rows, "u && c < ", g.cols, "u) store((z * ", g.rows, "u + r) * ", g.cols,
                "u + c, c, acc[i][j]);\n"
                "    }\n");
  return g;
}

Gemm plan_conv(const ir::Op& op, bool has_bias) {
  ir::ConvGeometry geo = ir::conv_geometry(op);
  std::vector<int64_t> xs = ir::logical_strides(op.operand(0)->type.shape, geo.input_pos);
  std::vector<int64_t> ws = ir::logical_strides(op.operand(1)->type.shape, geo.filter_pos);
  std::vector<int64_t> ys = ir::logical_strides(op.result()->type.shape, geo.output_pos);
  // Spatial dims padded to three (D, H, W) like the reference: leading dims extent 1, stride 0.
  const size_t S = size_t(geo.spatial_rank), lead = 3 - S;
  int64_t in[3], outs[3], k[3], s[3], d[3], pb[3], x3[3], w3[3], y3[3];
  for (size_t i = 0; i < 3; ++i) {
    bool real = i >= lead;
    size_t j = i - lead;
    in[i] = real ? geo.in_spatial[j] : 1;
    outs[i] = real ? geo.out_spatial[j] : 1;
    k[i] = real ? geo.kernel[j] : 1;
    s[i] = real ? geo.strides[j] : 1;
    d[i] = real ? geo.dilations[j] : 1;
    pb[i] = real ? geo.pad_begin[j] : 0;
    x3[i] = real ? xs[2 + j] : 0;
    w3[i] = real ? ws[2 + j] : 0;
    y3[i] = real ? ys[2 + j] : 0;
  }
  const int64_t pixels = outs[0] * outs[1] * outs[2];
  const int64_t Cg = geo.in_channels_per_group(), Fg = geo.out_channels_per_group();
  Gemm g;
  g.rows = geo.batch * pixels;
  g.cols = Fg;
  g.depth = Cg * k[0] * k[1] * k[2];
  g.z = geo.groups;
  // Row r = (n, o0, o1, o2): the input window's origin and the output offset.
  g.setup = cat("  uint xbase[", kTile, "], ybase[", kTile, "];\n"
                "  int org0[", kTile, "], org1[", kTile, "], org2[", kTile, "];\n"
                "  for (uint i = 0u; i < ", kTile, "u; ++i) {\n"
                "    uint r = min(row0 + i, ", g.rows - 1, "u);\n"
                "    uint o2 = r % ", outs[2], "u; r /= ", outs[2], "u;\n"
                "    uint o1 = r % ", outs[1], "u; r /= ", outs[1], "u;\n"
                "    uint o0 = r % ", outs[0], "u; uint n = r / ", outs[0], "u;\n"
                "    xbase[i] = n * ", xs[0], "u + z * ", Cg * xs[1], "u;\n"
                "    ybase[i] = n * ", ys[0], "u + o0 * ", y3[0], "u + o1 * ", y3[1], "u + o2 * ", y3[2], "u;\n"
                "    org0[i] = int(o0 * ", s[0], "u) - ", pb[0], ";\n"
                "    org1[i] = int(o1 * ", s[1], "u) - ", pb[1], ";\n"
                "    org2[i] = int(o2 * ", s[2], "u) - ", pb[2], ";\n"
                "  }\n"
                "  int bz[", kTile, "];\n"
                "  uint wbase[", kTile, "];\n"
                "  for (uint j = 0u; j < ", kTile, "u; ++j) {\n"
                "    uint f = z * ", Fg, "u + min(col0 + j, ", Fg - 1, "u);\n"
                "    bz[j] = b_zp(f);\n"
                "    wbase[j] = f * ", ws[0], "u;\n"
                "  }\n");
  g.loop = cat("  for (uint c = 0u; c < ", Cg, "u; ++c)\n"
               "  for (uint k0 = 0u; k0 < ", k[0], "u; ++k0)\n"
               "  for (uint k1 = 0u; k1 < ", k[1], "u; ++k1)\n"
               "  for (uint k2 = 0u; k2 < ", k[2], "u; ++k2) {\n"
               "    int av[", kTile, "], bv[", kTile, "];\n"
               "    for (uint i = 0u; i < ", kTile, "u; ++i) {\n"
               "      int p0 = org0[i] + int(k0 * ", d[0], "u), p1 = org1[i] + int(k1 * ", d[1],
               "u), p2 = org2[i] + int(k2 * ", d[2], "u);\n"
               "      bool inside = row0 + i < ", g.rows, "u && p0 >= 0 && p0 < ", in[0], " && p1 >= 0 && p1 < ", in[1],
               " && p2 >= 0 && p2 < ", in[2], ";\n"
               "      av[i] = inside ? a_at(xbase[i] + c * ", xs[1], "u + uint(p0) * ", x3[0], "u + uint(p1) * ", x3[1],
               "u + uint(p2) * ", x3[2], "u) - a_zp(0u) : 0;\n"
               "    }\n"
               "    for (uint j = 0u; j < ", kTile, "u; ++j)\n"
               "      bv[j] = col0 + j < ", Fg, "u ? b_at(wbase[j] + c * ", ws[1], "u + k0 * ", w3[0], "u + k1 * ", w3[1],
               "u + k2 * ", w3[2], "u) - bz[j] : 0;\n",
               accumulate(), "  }\n");
  g.store = cat("  for (uint j = 0u; j < ", kTile, "u; ++j) {\n"
                "    uint f = z * ", Fg, "u + col0 + j;\n"
                "    if (col0 + j >= ", Fg, "u) continue;\n",
                has_bias ? "    int b = bias.data[f];\n" : "    int b = 0;\n",
                "    for (uint i = 0u; i < ", kTile, "u; ++i)\n"
                "      if (row0 + i < ", g.rows, "u) store(ybase[i] + f * ", ys[1], "u, f, acc[i][j] + b);\n"
                "  }\n");
  return g;
}

}  // namespace

std::vector<EmittedKernel> emit_integer_product(const DispatchGroup& group, const KernelContext& ctx,
                                                std::vector<ScratchTensor>& scratch) {
  const ir::Op& op = *group.anchor;
  check(group.ops.size() == 1, "internal: ", op.describe(), " was fused with other ops");
  const std::string what = op.describe();
  // int8 tensor cores where the op and the target allow them (integer_coopmat.h); the SIMT kernel
  // below everywhere else, with the reason in its notes.
  IntegerCoopPlan coop = plan_integer_coopmat(op, ctx.target, ctx.forced(op));
  if (coop.choice) return emit_integer_coopmat(op, *coop.choice, ctx, scratch);
  const bool conv = op.kind == ir::OpKind::ConvInteger;
  const bool has_bias = conv && op.num_operands() == 5;
  for (const ir::Value* v : op.operands) check_32bit(v->type.numel(), what);
  check_32bit(op.result()->type.numel(), what);

  std::set<DType> types;
  EmittedKernel k;
  k.kernel = conv ? "conv_integer" : "matmul_integer";
  std::string buffers, fns;
  const char* names[] = {"a", "b", "a_zp_t", "b_zp_t"};
  uint32_t b = 0;
  for (int i = 0; i < 4; ++i) {
    const ir::Value* v = op.operand(i);
    if (i >= 2 && is_constant(v)) continue;
    Reader r = int_reader(b++, v->type.dtype, names[i], ctx.target, types);
    buffers += r.decl;
    fns += r.fn;
    k.bindings.push_back({ctx.tensor(v), false});
  }
  if (has_bias) {
    buffers += glsl_buffer(b++, DType::i32, false, "bias");
    k.bindings.push_back({ctx.tensor(op.operand(4)), false});
  }
  // Per-channel constants in a buffer where one more binding fits (after the result's), else in
  // shader arrays (the minimum profile's 4 storage buffers may all be taken).
  ChannelTable table;
  const bool table_fits = k.bindings.size() + 2 <= ctx.target.max_per_stage_descriptor_storage_buffers;
  ChannelTable* tables = table_fits ? &table : nullptr;
  fns += zero_point_fn("a_zp", op.operand(2), tables);
  fns += zero_point_fn("b_zp", op.operand(3), tables);
  const DType rt = op.result()->type.dtype;
  const bool packed_result = rt != DType::i32 && !gpu_storable(rt, ctx.target);
  if (packed_result) {  // 8-bit results without 8-bit storage: bytes merged into words atomically
    buffers += cat("layout(std430, set = 0, binding = ", b, ") restrict buffer Buffer", b, " { uint data[]; } result;\n");
  } else {
    if (rt != DType::i32) types.insert(rt);
    buffers += glsl_buffer(b, rt, true, "result");
  }
  k.bindings.push_back({ctx.tensor(op.result()), true});
  fns += store_fn(op, rt, packed_result, tables);
  if (!table.empty()) {
    buffers += ChannelTable::declaration(b + 1);
    const std::string name = ctx.tensor(op.result()) + ".channel_table";
    k.bindings.push_back({name, false});
    scratch.push_back({name, DType::i32, Shape{int64_t(table.values.size())}, table.tensor()});
  }
  k.notes = "not on int8 tensor cores: " + coop.why;
  if (packed_result) k.notes += "; 8-bit result merged into packed words: its binding must cover whole words";
  check(k.bindings.size() <= ctx.target.max_per_stage_descriptor_storage_buffers, what, ": needs ",
        k.bindings.size(), " storage buffers (zero points that are not constants take one each), target '",
        ctx.target.name, "' allows ", ctx.target.max_per_stage_descriptor_storage_buffers);

  Gemm g = conv ? plan_conv(op, has_bias) : plan_matmul(op);
  fns += g.fns;
  const int64_t tile_rows = kTile * kWgX, tile_cols = kTile * kWgY;
  k.workgroup_size = {kWgX, kWgY, 1};
  const int64_t count[3] = {(g.rows + tile_rows - 1) / tile_rows, (g.cols + tile_cols - 1) / tile_cols, g.z};
  for (int i = 0; i < 3; ++i) {
    check(count[i] <= int64_t(ctx.target.max_compute_work_group_count[size_t(i)]), what, ": ", count[i],
          " workgroups along ", "xyz"[i], " exceed the target's limit of ",
          ctx.target.max_compute_work_group_count[size_t(i)]);
    k.workgroup_count[size_t(i)] = uint32_t(count[i]);
  }
  check(kWgX * kWgY <= ctx.target.max_compute_work_group_invocations, what,
        ": the integer product's workgroup of ", kWgX * kWgY, " invocations exceeds the target's limit");
  k.strategy = cat("SIMT int32 sums, ", kTile, "x", kTile, " results per invocation",
                   rt == DType::i32 ? "" : ", requantized to 8 bits");
  k.glsl = instantiate_shader("integer_product", {{"EXTENSIONS", glsl_extensions(types)},
                                                  {"WG_X", cat(kWgX)},
                                                  {"WG_Y", cat(kWgY)},
                                                  {"TM", cat(kTile)},
                                                  {"TN", cat(kTile)},
                                                  {"BUFFERS", buffers},
                                                  {"FUNCTIONS", fns},
                                                  {"SETUP", g.setup},
                                                  {"LOOP", g.loop},
                                                  {"STORE", g.store}});
  k.tiles["rows"] = g.rows;
  k.tiles["cols"] = g.cols;
  k.tiles["depth"] = g.depth;
  k.flops = 2.0 * double(g.rows) * double(g.cols) * double(g.depth) * double(g.z);
  double bytes = 0;
  for (const ir::Value* v : op.operands) bytes += double(v->type.size_bytes());
  k.bytes = bytes + double(op.result()->type.size_bytes());
  return {k};
}

}  // namespace vkc::codegen::kernels
