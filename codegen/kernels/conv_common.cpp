#include "codegen/kernels/conv_common.h"

#include "codegen/conv_phases.h"
#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::kernels::conv {

std::string u32(int64_t v) { return cat(v, "u"); }

ConvOperands resolve_conv(const DispatchGroup& group, const KernelContext& ctx) {
  ConvOperands c;
  c.op = group.anchor;
  const ir::Op& op = *c.op;
  c.what = op.describe();
  c.group = &group;
  c.g = ir::conv_geometry(op);
  c.input = op.operand(0);
  if (op.kind != ir::OpKind::Im2Col) {
    c.filter = op.operand(1);
    if (op.num_operands() > 2) c.bias = op.operand(2);
  }
  c.output = op.result();
  c.dtype = c.output->type.dtype;
  require_storable(c.dtype, ctx.target, c.what);
  check_32bit_elements(uint64_t(c.input->type.numel()), "the input", c.what);
  if (c.filter) check_32bit_elements(uint64_t(c.filter->type.numel()), "the filter", c.what);
  check_32bit_elements(uint64_t(c.output->type.numel()), "the result", c.what);
  return c;
}

ConvIo bind_conv_io(const ConvOperands& c, const KernelContext& ctx, EmittedKernel& k) {
  ConvIo io;
  FusedCode xl = operand_loader(*c.group, c.input, "x_at", uint32_t(k.bindings.size()), ctx);
  k.bindings.insert(k.bindings.end(), xl.bindings.begin(), xl.bindings.end());
  FusedCode wl = operand_loader(*c.group, c.filter, "w_at", uint32_t(k.bindings.size()), ctx);
  k.bindings.insert(k.bindings.end(), wl.bindings.begin(), wl.bindings.end());
  io.buffers = xl.buffers + wl.buffers;
  if (c.bias) {
    io.buffers += glsl_buffer(uint32_t(k.bindings.size()), c.dtype, false, "b");
    k.bindings.push_back({ctx.tensor(c.bias), false});
  }
  FusedCode st = result_store(*c.group, uint32_t(k.bindings.size()), ctx);
  io.buffers += st.buffers;
  k.bindings.insert(k.bindings.end(), st.bindings.begin(), st.bindings.end());
  io.types = {c.dtype};
  for (const FusedCode* f : {&xl, &wl, &st}) io.types.insert(f->types.begin(), f->types.end());
  io.functions = xl.functions + wl.functions + st.functions;
  return io;
}

std::string gather_input_fn(const ir::ConvGeometry& g, const Shape& input_shape,
                            const std::string& reader, const std::string& value_type, bool by_phase) {
  std::vector<int64_t> xs = ir::logical_strides(input_shape, g.input_pos);
  std::string zero = value_type + "(0)";
  if (by_phase) {  // o is the position q within the phase; tap j reads input q + base(r) - j
    std::string s = cat("struct XRow { uint off; ivec3 p0; };\n",
                        "XRow x_row(uint n, uvec3 q) {\n  XRow r;\n  r.off = n * ", u32(xs[0]),
                        ";\n  r.p0 = ivec3(0);\n  uvec3 ph = phase_r();\n");
    for (size_t i = 0; i < size_t(g.spatial_rank); ++i)
      s += cat("  r.p0[", i, "] = int(q[", i, "] + phase_base(ph[", i, "], ", u32(g.strides[i]), ", ",
               u32(g.pad_begin[i]), "));\n");
    s += "  return r;\n}\n";
    s += cat(value_type, " gather_row(XRow r, uint c, uvec3 j) {\n  uint off = r.off + c * ", u32(xs[1]),
             ";\n  int p;\n");
    for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
      s += cat("  p = r.p0[", i, "] - int(j[", i, "]);\n");
      s += cat("  if (p < 0 || p >= ", g.in_spatial[i], ") return ", zero, ";\n");
      s += cat("  off += uint(p) * ", u32(xs[2 + i]), ";\n");
    }
    return s + cat("  return ", value_type, "(", reader, "(off));\n}\n");
  }
  // x_row: what depends only on the output element (image offset and the tap-0 position), so a
  // kernel that reads many taps of one output position (the tiled GEMM's A rows) decodes it once.
  std::string s = cat("struct XRow { uint off; ivec3 p0; };\n",
                      "XRow x_row(uint n, uvec3 o) {\n  XRow r;\n  r.off = n * ", u32(xs[0]),
                      ";\n  r.p0 = ivec3(0);\n");
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
    if (!g.transposed)
      s += cat("  r.p0[", i, "] = int(o[", i, "] * ", u32(g.strides[i]), ") - ", g.pad_begin[i], ";\n");
    else
      s += cat("  r.p0[", i, "] = int(o[", i, "]) + ", g.pad_begin[i], ";\n");
  }
  s += "  return r;\n}\n";
  s += cat(value_type, " gather_row(XRow r, uint c, uvec3 k) {\n  uint off = r.off + c * ", u32(xs[1]),
           ";\n  int p;\n");
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
    std::string ki = cat("k[", i, "]");
    if (!g.transposed) {
      s += cat("  p = r.p0[", i, "] + int(", ki, " * ", u32(g.dilations[i]), ");\n");
      s += cat("  if (p < 0 || p >= ", g.in_spatial[i], ") return ", zero, ";\n");
    } else {
      s += cat("  p = r.p0[", i, "] - int(", ki, " * ", u32(g.dilations[i]), ");\n");
      s += cat("  if (p < 0) return ", zero, ";\n");
      if (g.strides[i] > 1)
        s += cat("  if (p % ", g.strides[i], " != 0) return ", zero, ";\n  p /= ", g.strides[i], ";\n");
      s += cat("  if (p >= ", g.in_spatial[i], ") return ", zero, ";\n");
    }
    s += cat("  off += uint(p) * ", u32(xs[2 + i]), ";\n");
  }
  s += cat("  return ", value_type, "(", reader, "(off));\n}\n");
  if (!g.transposed) {  // the same read's offset of channel 0, for a row whose tap is known once
    s += "bool row_tap(XRow r, uvec3 k, out uint off) {\n  off = r.off;\n  int p;\n";
    for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
      s += cat("  p = r.p0[", i, "] + int(k[", i, "] * ", u32(g.dilations[i]), ");\n");
      s += cat("  if (p < 0 || p >= ", g.in_spatial[i], ") return false;\n");
      s += cat("  off += uint(p) * ", u32(xs[2 + i]), ";\n");
    }
    s += "  return true;\n}\n";
  }
  s += cat(value_type, " gather_x(uint n, uint c, uvec3 o, uvec3 k) { return gather_row(x_row(n, o), c, k); }\n");
  return s;
}

std::string load_filter_fn(const ir::ConvGeometry& g, const Shape& filter_shape,
                           const std::string& reader, bool by_phase) {
  std::vector<int64_t> ws = ir::logical_strides(filter_shape, g.filter_pos);
  // w_row: the offset of (group, output channel, input channel 0, tap 0); w_tap adds the rest.
  std::string s = "uint w_row(uint grp, uint fl) {\n";
  if (!g.transposed) {
    s += cat("  return (grp * ", u32(g.out_channels_per_group()), " + fl) * ", u32(ws[0]), ";\n}\n");
  } else {
    s += cat("  return fl * ", u32(ws[0]), " + grp * ", u32(g.in_channels_per_group() * ws[1]), ";\n}\n");
  }
  if (by_phase) {  // tap j of phase r is kernel tap r + s*j; past the kernel it reads zero
    s += "float w_tap(uint row, uint c, uvec3 j) {\n  uvec3 k = phase_r();\n";
    for (size_t i = 0; i < size_t(g.spatial_rank); ++i)
      s += cat("  k[", i, "] += j[", i, "] * ", u32(g.strides[i]), ";\n  if (k[", i, "] >= ", u32(g.kernel[i]),
               ") return 0.0;\n");
  } else {
    s += "float w_tap(uint row, uint c, uvec3 k) {\n";
  }
  s += cat("  return float(", reader, "(row + c * ", u32(ws[1]));
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) s += cat(" + k[", i, "] * ", u32(ws[2 + i]));
  s += "));\n}\n";
  s += "float load_w(uint grp, uint fl, uint c, uvec3 k) { return w_tap(w_row(grp, fl), c, k); }\n";
  return s;
}

std::string decode_out_fn(const ir::ConvGeometry& g, bool by_phase) {
  const std::vector<int64_t> extents = by_phase ? conv_phases(g).positions : g.out_spatial;
  std::string s = "uvec3 decode_out(uint p) {\n  uvec3 o = uvec3(0u);\n";
  for (size_t i = size_t(g.spatial_rank); i-- > 1;)
    s += cat("  o[", i, "] = p % ", u32(extents[i]), "; p /= ", u32(extents[i]), ";\n");
  s += "  o[0] = p;\n  return o;\n}\n";
  return s;
}

std::string decode_k_fn(const ir::ConvGeometry& g, bool by_phase) {
  ir::Im2ColColumns cols = ir::im2col_columns(g);
  std::string sp = ir::spatial_letters(g.spatial_rank);
  if (by_phase)  // the same column order over a phase's taps
    for (size_t j = 0; j < cols.order.size(); ++j)
      if (cols.order[j] != 'C') cols.extents[j] = conv_phases(g).taps[sp.find(cols.order[j])];
  std::string s = "void decode_k(uint k, out uint c, out uvec3 kk) {\n  c = 0u;\n  kk = uvec3(0u);\n";
  for (size_t j = cols.order.size(); j-- > 0;) {
    std::string dst = cols.order[j] == 'C' ? "c" : cat("kk[", sp.find(cols.order[j]), "]");
    if (j == 0) {
      s += cat("  ", dst, " = k;\n");
    } else {
      s += cat("  ", dst, " = k % ", u32(cols.extents[j]), "; k /= ", u32(cols.extents[j]), ";\n");
    }
  }
  return s + "}\n";
}

std::string decode_tap_fn(const ir::ConvGeometry& g, bool by_phase) {
  const std::vector<int64_t> extents = by_phase ? conv_phases(g).taps : g.kernel;  // a phase's taps j
  std::string s = "uvec3 decode_tap(uint t) {\n  uvec3 kk = uvec3(0u);\n";
  for (size_t i = size_t(g.spatial_rank); i-- > 1;)
    s += cat("  kk[", i, "] = t % ", u32(extents[i]), "; t /= ", u32(extents[i]), ";\n");
  return s + "  kk[0] = t;\n  return kk;\n}\n";
}

std::string out_offset_fn(const ir::ConvGeometry& g, const Shape& output_shape) {
  std::vector<int64_t> ys = ir::logical_strides(output_shape, g.output_pos);
  std::string s = cat("uint out_offset(uint n, uint f, uvec3 o) {\n  return n * ", u32(ys[0]),
                      " + f * ", u32(ys[1]));
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) s += cat(" + o[", i, "] * ", u32(ys[2 + i]));
  return s + ";\n}\n";
}

std::string phase_fns(const ir::ConvGeometry& g) {
  const ConvPhases ph = conv_phases(g);
  if (!ph.on)
    return "uint cgrp() { return grp; }\nbool out_at(uint p, out uvec3 o) {\n  o = decode_out(p);\n  return true;\n}\n";
  std::string s = cat("uint cgrp() { return grp / ", u32(ph.count), "; }\n",
                      "uvec3 phase_r() {\n  uint ph = grp % ", u32(ph.count), ";\n  uvec3 r = uvec3(0u);\n");
  for (size_t i = size_t(g.spatial_rank); i-- > 0;)
    s += cat("  r[", i, "] = ph % ", u32(g.strides[i]), "; ph /= ", u32(g.strides[i]), ";\n");
  s += "  return r;\n}\n";
  // The first output of phase r, (r - pb) mod s, and base(r) = (first + pb - r) / s, an exact
  // division: output first + s*q gathers input q + base(r) - j.
  s += "uint phase_first(uint r, uint s, uint pb) { return (r + s - pb % s) % s; }\n";
  s += "uint phase_base(uint r, uint s, uint pb) { return (phase_first(r, s, pb) + pb - r) / s; }\n";
  s += "bool out_at(uint p, out uvec3 o) {\n  o = decode_out(p);\n  uvec3 r = phase_r();\n";
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i)
    s += cat("  o[", i, "] = phase_first(r[", i, "], ", u32(g.strides[i]), ", ", u32(g.pad_begin[i]), ") + o[", i,
             "] * ", u32(g.strides[i]), ";\n  if (o[", i, "] >= ", u32(g.out_spatial[i]), ") return false;\n");
  return s + "  return true;\n}\n";
}

std::string bias_fn(bool has_bias, const std::string& buffer) {
  if (!has_bias) return "float bias_of(uint f) { return 0.0; }\n";
  return cat("float bias_of(uint f) { return float(", buffer, ".data[f]); }\n");
}

std::string decode_physical_output(const ir::ConvGeometry& g, const Shape& output_shape,
                                   const std::string& linear) {
  std::string s = cat("  uint rem = ", linear, ";\n");
  for (size_t d = output_shape.size(); d-- > 1;)
    s += cat("  uint q", d, " = rem % ", u32(output_shape[d]), "; rem /= ", u32(output_shape[d]), ";\n");
  s += "  uint q0 = rem;\n";
  s += cat("  uint n = q", g.output_pos[0], ";\n  uint f = q", g.output_pos[1], ";\n  uvec3 o = uvec3(");
  for (size_t i = 0; i < 3; ++i) {
    if (i) s += ", ";
    s += i < size_t(g.spatial_rank) ? cat("q", g.output_pos[2 + i]) : std::string("0u");
  }
  return s + ");\n";
}

void take_plan(EmittedKernel& k, const ConvOperands& c, const ConvPlan& plan) {
  k.workgroup_size = plan.workgroup_size;
  k.workgroup_count = plan.workgroup_count;
  k.workgroup_memory_bytes = plan.workgroup_memory_bytes;
  k.tiles = plan.tiles;
  k.flops = conv_flops(c.g);
  k.bytes = conv_min_bytes(c);
  k.notes = plan.notes;
}

double conv_flops(const ir::ConvGeometry& g) {
  double taps = double(product(g.kernel));
  if (g.transposed)  // every input element scatters into Fg channels x taps
    return 2.0 * double(g.batch) * double(g.in_channels) * double(product(g.in_spatial)) *
           double(g.out_channels_per_group()) * taps;
  return 2.0 * double(g.batch) * double(g.out_channels) * double(product(g.out_spatial)) *
         double(g.in_channels_per_group()) * taps;
}

double conv_min_bytes(const ConvOperands& c) {
  double b = double(c.input->type.size_bytes()) + double(c.output->type.size_bytes());
  if (c.filter) b += double(c.filter->type.size_bytes());
  if (c.bias) b += double(c.bias->type.size_bytes());
  return b;
}

}  // namespace vkc::codegen::kernels::conv
