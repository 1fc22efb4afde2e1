// Resize: nearest, linear and cubic, any rank, every coordinate mode of ir/resize_geometry.h.
// One invocation per output element.
//
// The reference computes source coordinates in float64; a kernel cannot (shaderFloat64 is
// optional). Linear and cubic results are continuous in the coordinate, so the f32 coordinate
// only costs rounding-level differences. Nearest indices and crop-window bounds are not
// continuous: a coordinate that is x.5 in float64 but x.4999999 in f32 picks another element.
// So for those the emitter decides on the host: crop bounds become exact integer ranges of
// output indices, and for each nearest dim it replays the kernel's f32 arithmetic (two correctly
// rounded f32 operations, which the kernel keeps with `precise`) for every output index; where
// any index differs from the reference, that dim reads a constant table of reference indices
// instead.
//
// A piece of a larger resize (attribute 'window', made by the range split: ir/resize_geometry.h)
// computes the whole op's coordinates for its output indices moved by out_start, and reads its
// operand at the whole op's indices less in_start, clamped into the operand: the reference's
// taps lie inside it (the verifier checks that), and an f32 coordinate that falls a hair outside
// reads an edge tap of near-zero weight instead of memory the piece does not bind.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "codegen/glsl_types.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "ir/resize_geometry.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

using ir::ResizeAxis;
using ir::ResizeGeometry;

constexpr uint32_t kWorkgroup = 128;
// Coordinates and indices go through f32; every integer up to 2^24 is exact there.
constexpr int64_t kMaxDimExtent = int64_t(1) << 24;

std::string flt(double v) { return glsl_literal(DType::f32, v); }

// The f32 nearest to v, spelled by its bits: a decimal literal goes through the GLSL compiler's
// double parse and then to float, and that double rounding could move the constant the host
// replay (kernel_nearest_index) relies on.
std::string exact_flt(double v) {
  float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return cat("uintBitsToFloat(", bits, "u)");
}

// The kernel's nearest index, replayed on the host. A product or sum of two floats computed in
// double and rounded to float is the correctly rounded f32 result (double has more than
// 2 * 24 + 2 significand bits), which is what the kernel's precise f32 mul and add produce.
int64_t kernel_nearest_index(const ResizeGeometry& g, const ResizeAxis& a, int64_t x) {
  const float slope = float(a.slope), offset = float(a.offset);
  float p = float(double(float(x)) * double(slope));
  float xf = float(double(p) + double(offset));
  float r = 0;
  switch (g.rounding) {
    case ir::ResizeRounding::RoundPreferFloor: r = std::ceil(float(double(xf) - 0.5)); break;
    case ir::ResizeRounding::RoundPreferCeil: r = std::floor(float(double(xf) + 0.5)); break;
    case ir::ResizeRounding::Floor: r = std::floor(xf); break;
    case ir::ResizeRounding::Ceil: r = std::ceil(xf); break;
  }
  return int64_t(std::clamp(r, 0.0f, float(a.in - 1)));
}

// A dim of a piece whose indices are not the whole op's (attribute 'window').
bool windowed(const ResizeAxis& a) {
  return a.out_start != 0 || a.in_start != 0 || a.piece_out != a.out || a.piece_in != a.in;
}

// The whole op's output index along dim d, as GLSL.
std::string whole_index(const ResizeAxis& a, size_t d) {
  return a.out_start == 0 ? cat("o", d) : cat("(o", d, " + ", a.out_start, "u)");
}

// A whole-input index (GLSL int expression, already within [0, in)) as an index into the operand.
std::string operand_index(const ResizeAxis& a, const std::string& index) {
  if (!windowed(a)) return index;
  return cat("clamp(", index, " - ", a.in_start, ", 0, ", a.piece_in - 1, ")");
}

std::string rounding_code(ir::ResizeRounding r, const std::string& x, const std::string& h,
                          std::string& pre) {
  switch (r) {
    case ir::ResizeRounding::RoundPreferFloor:
      pre = cat("  precise float ", h, " = ", x, " - 0.5;\n");
      return cat("ceil(", h, ")");
    case ir::ResizeRounding::RoundPreferCeil:
      pre = cat("  precise float ", h, " = ", x, " + 0.5;\n");
      return cat("floor(", h, ")");
    case ir::ResizeRounding::Floor: return cat("floor(", x, ")");
    case ir::ResizeRounding::Ceil: return cat("ceil(", x, ")");
  }
  return x;
}

// tf_crop_and_resize: the output indices whose reference coordinate lies in [0, in - 1], as a
// GLSL condition on o<d> ("" when every index is inside). The coordinate is affine in the output
// index, so the set is one range.
std::string crop_condition(const ResizeGeometry& g, size_t d, const std::string& what) {
  const ResizeAxis& a = g.axes[d];
  auto inside = [&](int64_t p) {  // p: the op's own output index (of its window)
    return ir::resize_coordinate_inside(ir::resize_source_coordinate(g, d, a.out_start + p), a.in);
  };
  int64_t lo = -1, hi = -2;
  for (int64_t x = 0; x < a.piece_out; ++x)
    if (inside(x)) {
      if (lo < 0) lo = x;
      hi = x;
    }
  for (int64_t x = std::max<int64_t>(lo, 0); x <= hi; ++x)
    check(inside(x), "internal: ", what, ": the crop window of dim ", d, " is not one range of output indices");
  if (lo < 0) return "false";
  if (lo == 0 && hi == a.piece_out - 1) return "";
  return cat("o", d, " >= ", lo, "u && o", d, " <= ", hi, "u");
}

// Nearest: declares int i<d>, the input index along dim d.
std::string nearest_dim(const ResizeGeometry& g, size_t d, std::string& tables, std::string& notes) {
  const ResizeAxis& a = g.axes[d];
  if (a.identity)
    return a.out_start == a.in_start ? cat("  int i", d, " = int(o", d, ");\n")
                                     : cat("  int i", d, " = int(o", d, ") + ", a.out_start - a.in_start, ";\n");
  std::vector<int64_t> reference(size_t(a.piece_out));  // operand indices
  bool formula_exact = true;
  for (int64_t p = 0; p < a.piece_out; ++p) {
    const int64_t x = a.out_start + p;
    const int64_t i = ir::resize_nearest_index(g, ir::resize_source_coordinate(g, d, x), a.in);
    reference[size_t(p)] = std::clamp<int64_t>(i - a.in_start, 0, a.piece_in - 1);
    formula_exact = formula_exact && kernel_nearest_index(g, a, x) == i;
  }
  if (!formula_exact) {
    tables += cat("const int nearest", d, "[", a.piece_out, "] = int[](");
    for (size_t x = 0; x < reference.size(); ++x) tables += cat(x ? ", " : "", reference[x]);
    tables += ");\n";
    notes += cat(notes.empty() ? "" : "; ", "dim ", d, " reads a table of ", a.piece_out,
                 " indices (f32 coordinates would round differently from the reference)");
    return cat("  int i", d, " = nearest", d, "[o", d, "];\n");
  }
  std::string x = cat("x", d), pre;
  std::string s = cat("  precise float ", x, " = float(", whole_index(a, d), ") * ", exact_flt(a.slope), " + ",
                      exact_flt(a.offset), ";\n");
  std::string rounded = rounding_code(g.rounding, x, cat("h", d), pre);
  return s + pre +
         cat("  int i", d, " = ", operand_index(a, cat("int(clamp(", rounded, ", 0.0, ", flt(double(a.in - 1)), "))")), ";\n");
}

// Linear / cubic: declares int i<d>[T] and float w<d>[T], the taps along dim d.
std::string interpolation_dim(const ResizeGeometry& g, size_t d, int taps) {
  const ResizeAxis& a = g.axes[d];
  if (a.identity)
    return a.out_start == a.in_start ? cat("  int i", d, "[1] = int[](int(o", d, "));\n")
                                     : cat("  int i", d, "[1] = int[](int(o", d, ") + ", a.out_start - a.in_start, ");\n");
  std::string r = cat("r", d), b = cat("b", d), w = cat("w", d), i = cat("i", d);
  std::string s = cat("  precise float x", d, " = float(", whole_index(a, d), ") * ", exact_flt(a.slope), " + ",
                      exact_flt(a.offset), ";\n");
  s += cat("  float f", d, " = floor(x", d, ");\n");
  s += cat("  float ", r, " = x", d, " - f", d, ";\n");
  // Clamped before the conversion (out-of-range float to int is undefined); beyond this range
  // every tap is outside the input anyway.
  s += cat("  int ", b, " = int(clamp(f", d, ", -8.0, ", flt(double(a.in + 8)), "));\n");
  s += cat("  float ", w, "[", taps, "];\n  int ", i, "[", taps, "];\n");
  if (taps == 2) {
    s += cat("  ", w, "[0] = 1.0 - ", r, ";\n  ", w, "[1] = ", r, ";\n");
  } else {
    const double A = g.cubic_coeff_a;
    auto far = [&](const std::string& t) {
      return cat("((", flt(A), " * ", t, " - ", flt(5 * A), ") * ", t, " + ", flt(8 * A), ") * ", t, " - ", flt(4 * A));
    };
    auto near = [&](const std::string& t) {
      return cat("(", flt(A + 2), " * ", t, " - ", flt(A + 3), ") * ", t, " * ", t, " + 1.0");
    };
    s += cat("  ", w, "[0] = ", far(cat("(1.0 + ", r, ")")), ";\n");
    s += cat("  ", w, "[1] = ", near(r), ";\n");
    s += cat("  ", w, "[2] = ", near(cat("(1.0 - ", r, ")")), ";\n");
    s += cat("  ", w, "[3] = ", far(cat("(2.0 - ", r, ")")), ";\n");
  }
  const int first = -(taps / 2 - 1);
  s += cat("  for (int t = 0; t < ", taps, "; ++t) {\n    int j = ", b, " + t + (", first, ");\n");
  if (g.exclude_outside) s += cat("    if (j < 0 || j >= ", a.in, ") ", w, "[t] = 0.0;\n");
  s += cat("    ", i, "[t] = ", operand_index(a, cat("clamp(j, 0, ", a.in - 1, ")")), ";\n  }\n");
  if (g.exclude_outside) {
    s += cat("  float sum", d, " = 0.0;\n  for (int t = 0; t < ", taps, "; ++t) sum", d, " += ", w, "[t];\n");
    s += cat("  for (int t = 0; t < ", taps, "; ++t) ", w, "[t] /= sum", d, ";\n");
  }
  return s;
}

// How elements of `t` are copied bit-exactly by the nearest kernel: 4- and 8-byte types as uint /
// uvec2 words (no int64 or float16 support needed), narrower ones through the storage extensions.
std::string word_type(DType t, const TargetLimits& target, const std::string& what) {
  switch (dtype_size(t)) {
    case 4: return "uint";
    case 8: return "uvec2";
    default: require_storable(t, target, what); return glsl_storage_type(t);
  }
}

// extrapolation_value as a word with exactly the bits the reference stores (HostTensor::set_f64).
std::string fill_word(DType t, double value) {
  HostTensor fill(t, {});
  fill.set_f64(0, value);
  uint32_t w[2] = {0, 0};
  std::memcpy(w, fill.data(), std::min<size_t>(dtype_size(t), 8));
  switch (dtype_size(t)) {
    case 4: return cat(w[0], "u");
    case 8: return cat("uvec2(", w[0], "u, ", w[1], "u)");
    default: break;
  }
  if (t == DType::f16) return cat("float16_t(", flt(fill.get_f64(0)), ")");
  return cat(glsl_storage_type(t), "(", fill.get_i64(0), ")");
}

std::string buffer_decl(uint32_t binding, const std::string& type, bool writes, const std::string& name) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ",
             writes ? "writeonly " : "readonly ", "buffer Buffer", binding, " { ", type,
             " data[]; } ", name, ";\n");
}

}  // namespace

std::vector<EmittedKernel> emit_resize(const DispatchGroup& group, const KernelContext& ctx,
                                       std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  check(group.ops.size() == 1, "internal: ", op.describe(), " was fused with other ops");
  const std::string what = op.describe();
  const ResizeGeometry g = ir::resize_geometry(op);
  const bool nearest = g.interpolation == ir::ResizeInterpolation::Nearest;
  const std::string strategy = nearest ? "gather" : "interpolate";
  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == strategy, what, ": unknown strategy '", forced,
        "' (resize in this mode has: ", strategy, ")");
  const ir::Value* in = op.operand(0);
  const ir::Value* out = op.result();
  const DType t = in->type.dtype;
  const int64_t total = shape_numel(out->type.shape);
  check_32bit(std::max(total, shape_numel(in->type.shape)), what);
  for (size_t d = 0; d < g.axes.size(); ++d)
    check(g.axes[d].in <= kMaxDimExtent && g.axes[d].out <= kMaxDimExtent, what, ": dim ", d, " is ",
          g.axes[d].in, " -> ", g.axes[d].out, ", the resize kernel supports at most ",
          kMaxDimExtent, " per dim (its coordinates are f32)");
  const std::vector<int64_t> xs = strides_of(in->type.shape);
  const size_t rank = g.axes.size();

  std::string body = unravel_code(out->type.shape, "gid", "o");
  std::string tables, notes, inside = "true";
  if (g.extrapolates()) {
    inside.clear();
    for (size_t d = 0; d < rank; ++d) {
      if (g.axes[d].identity) continue;
      std::string c = crop_condition(g, d, what);
      if (!c.empty()) inside += cat(inside.empty() ? "" : " && ", "(", c, ")");
    }
    if (inside.empty()) inside = "true";
    body += cat("  bool inside = ", inside, ";\n");
  }
  const bool may_extrapolate = inside != "true";

  EmittedKernel k;
  k.kernel = "resize";
  k.strategy = strategy;
  k.bindings = {{ctx.tensor(in), false}, {ctx.tensor(out), true}};
  plan_linear(k, uint64_t(total), kWorkgroup, ctx.target, what);
  std::string buffers, extensions;
  int64_t taps_total = 1;
  if (nearest) {
    std::string word = word_type(t, ctx.target, what);
    buffers = buffer_decl(0, word, false, "src") + buffer_decl(1, word, true, "result");
    extensions = dtype_size(t) >= 4 ? "" : glsl_extensions({t});
    std::string offset;
    for (size_t d = 0; d < rank; ++d) {
      body += nearest_dim(g, d, tables, notes);
      offset += cat(d ? " + " : "", "i", d, " * ", xs[d]);
    }
    std::string load = cat("src.data[", offset, "]");
    body += may_extrapolate ? cat("  result.data[gid] = inside ? ", load, " : ", fill_word(t, g.extrapolation_value), ";\n")
                            : cat("  result.data[gid] = ", load, ";\n");
  } else {
    require_storable(t, ctx.target, what);
    buffers = glsl_buffer(0, t, false, "src") + glsl_buffer(1, t, true, "result");
    extensions = glsl_extensions({t});
    std::string weight = "1.0", offset, indent = "  ", loops;
    for (size_t d = 0; d < rank; ++d) {
      int taps = g.axes[d].identity ? 1 : g.taps_per_dim();
      taps_total *= taps;
      body += interpolation_dim(g, d, taps);
      loops += cat(indent, "for (int t", d, " = 0; t", d, " < ", taps, "; ++t", d, ")\n");
      indent += "  ";
      if (!g.axes[d].identity) weight += cat(" * w", d, "[t", d, "]");
      offset += cat(d ? " + " : "", "i", d, "[t", d, "] * ", xs[d]);
    }
    body += "  float acc = 0.0;\n" + loops;
    body += cat(indent, "acc += ", weight, " * float(src.data[", offset, "]);\n");
    std::string value = may_extrapolate ? cat("(inside ? acc : ", flt(g.extrapolation_value), ")") : "acc";
    body += cat("  result.data[gid] = ", glsl_storage_type(t), "(", value, ");\n");
  }
  k.glsl = instantiate_shader("resize", {{"EXTENSIONS", extensions},
                                         {"WG_SIZE", cat(k.workgroup_size[0])},
                                         {"BUFFERS", buffers},
                                         {"TABLES", tables},
                                         {"INDEX", folded_global_index(k.workgroup_size[0])},
                                         {"TOTAL", cat(total)},
                                         {"BODY", body}});
  k.flops = nearest ? 0.0 : 2.0 * double(total) * double(taps_total);
  k.bytes = double(in->type.size_bytes() + out->type.size_bytes());
  k.tiles["taps"] = taps_total;
  k.notes = notes;
  return {k};
}

}  // namespace vkc::codegen::kernels
