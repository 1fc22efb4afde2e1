#include "codegen/kernels/gemm_operands.h"

#include <algorithm>

#include "codegen/fusion.h"
#include "codegen/kernels/kernel_util.h"
#include "support/error.h"

namespace vkc::codegen::kernels {

using Operand = ir::MatrixView;

namespace {

// Whether `v` is computed by the group's fused prologue (else the kernel reads its buffer).
bool behind_prologue(const DispatchGroup& group, const ir::Value* v) {
  return v->producer != nullptr &&
         std::find(group.prologue.begin(), group.prologue.end(), v->producer) != group.prologue.end();
}

}  // namespace

// a_load / b_load for the FMA and one-element tensor-core loops: one element through the
// operands' fused prologues (a_at / b_at).
std::string scalar_operand_fns(int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b) {
  return cat("void a_begin(uint m) {}\nfloat a_load(uint m, uint k) {\n  return (m < ", M, "u && k < ", K,
             "u) ? float(a_at(abase + m * ", a.row_stride, "u + k * ", a.col_stride, "u)) : 0.0;\n}\n",
             "void b_begin(uint n) {}\nfloat b_load(uint n, uint k) {\n  return (k < ", K, "u && n < ", N,
             "u) ? float(b_at(bbase + k * ", b.row_stride, "u + n * ", b.col_stride, "u)) : 0.0;\n}\n");
}

// How the tensor-core loop's 16-byte staging (VEC 8) gets an operand's 8 float16 values along its
// contiguous dim: read in place (a raw float16 buffer: one 16-byte load) or gathered one by one
// through the operand's fused prologue and packed (the fp16 precision mode's transformers put
// transposes, casts and GELU's elementwise chain in front of their matmuls; on the FMA loop those
// matmuls took 82% of ViT-B/16's time, bench/RESULTS.md session 21). Either way the operand's
// contiguous dim, its other stride and its batch stride must be multiples of 8, so that every run
// of 8 starting at a multiple of 8 lies wholly inside or outside the matrix (and, in place, is
// aligned); the product's operands must be float16, or float32 for the loop's float16 pieces.
Staging8 staging8(const DispatchGroup& group, const Operand& o, const ir::Value* v) {
  if ((v->type.dtype != DType::f16 && v->type.dtype != DType::f32) || o.matrix_size % 8 != 0) return Staging8::none;
  const bool fits = o.col_stride == 1 ? o.cols % 8 == 0 && o.row_stride % 8 == 0
                    : o.row_stride == 1 ? o.rows % 8 == 0 && o.col_stride % 8 == 0
                                        : false;
  if (!fits) return Staging8::none;
  return behind_prologue(group, v) ? Staging8::gathered : Staging8::in_place;
}

// a_load8 / b_load8 for the tensor-core loop (shaders/gemm_coopmat.glsl, VEC 8): the 8 values of
// the operand's contiguous dim from (m, k) / (k, n), where staging8 allows: a 16-byte load of a8 /
// b8 in place, or 8 reads of a_at / b_at gathered.
std::string vec8_operand_fns(int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b, Staging8 as,
                             Staging8 bs) {
  auto fn = [](const std::string& name, const std::string& bounds, const std::string& index, Staging8 st,
               const std::string& buffer, const std::string& at) {
    std::string body = cat("uvec4 ", name, " {\n  if (!(", bounds, ")) return uvec4(0u);\n  const uint i = ", index, ";\n");
    if (st == Staging8::in_place) return body + cat("  return ", buffer, ".data[i / 8u];\n}\n");
    return body + cat("  return uvec4(packHalf2x16(vec2(", at, "(i), ", at, "(i + 1u))), packHalf2x16(vec2(", at, "(i + 2u), ",
                      at, "(i + 3u))),\n               packHalf2x16(vec2(", at, "(i + 4u), ", at, "(i + 5u))), packHalf2x16(vec2(",
                      at, "(i + 6u), ", at, "(i + 7u))));\n}\n");
  };
  return fn("a_load8(uint m, uint k)", cat("m < ", M, "u && k < ", K, "u"),
            cat("abase + m * ", a.row_stride, "u + k * ", a.col_stride, "u"), as, "a8", "a_at") +
         fn("b_load8(uint n, uint k)", cat("k < ", K, "u && n < ", N, "u"),
            cat("bbase + k * ", b.row_stride, "u + n * ", b.col_stride, "u"), bs, "b8", "b_at");
}

std::string split_operand_fns(int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b, Staging8 as,
                              Staging8 bs) {
  auto fns = [](char o, const std::string& bounds, const std::string& index, Staging8 st) {
    const std::string buffer = cat(o, "8"), at = cat(o, "_at"), args = o == 'a' ? "uint m, uint k" : "uint n, uint k";
    std::string load = cat("mat2x4 ", o, "_load8f(", args, ") {\n  if (!(", bounds, ")) return mat2x4(0.0);\n  const uint i = ",
                           index, ";\n");
    std::string elem = cat("float ", o, "_elem(", args, ") {\n  if (!(", bounds, ")) return 0.0;\n  const uint i = ", index, ";\n");
    if (st == Staging8::in_place) {
      load += cat("  return mat2x4(uintBitsToFloat(", buffer, ".data[i / 4u]), uintBitsToFloat(", buffer,
                  ".data[i / 4u + 1u]));\n}\n");
      elem += cat("  return uintBitsToFloat(", buffer, ".data[i / 4u][i % 4u]);\n}\n");
    } else {
      load += cat("  return mat2x4(", at, "(i), ", at, "(i + 1u), ", at, "(i + 2u), ", at, "(i + 3u), ", at, "(i + 4u), ", at,
                  "(i + 5u), ", at, "(i + 6u), ", at, "(i + 7u));\n}\n");
      elem += cat("  return float(", at, "(i));\n}\n");
    }
    return load + elem;
  };
  return fns('a', cat("m < ", M, "u && k < ", K, "u"), cat("abase + m * ", a.row_stride, "u + k * ", a.col_stride, "u"), as) +
         fns('b', cat("k < ", K, "u && n < ", N, "u"), cat("bbase + k * ", b.row_stride, "u + n * ", b.col_stride, "u"), bs);
}

// Whether the FMA loop can stage operand `o` four float32 columns per 16-byte load: read in place
// (no fused prologue), columns of stride 1 and a multiple of 4 of them, the row stride and the
// batch stride multiples of 4, so every quad starting at a multiple of 4 is aligned (views start
// 16-byte aligned, storage_plan.h) and wholly inside or outside the matrix.
bool staging4(const DispatchGroup& group, const Operand& o, const ir::Value* v) {
  if (v->type.dtype != DType::f32 || o.matrix_size % 4 != 0) return false;
  if (o.col_stride != 1 || o.cols % 4 != 0 || o.row_stride % 4 != 0) return false;
  return !behind_prologue(group, v);
}

namespace {

// The operand functions of the FMA loop with B staged four columns at a time (staging4;
// gemm_core.glsl's B_VEC): a_load as scalar_operand_fns, b_load4 the quad B[k, n..n+3] from the
// uvec4 view b4. The bounds test is a branch around the load, as in the scalar loads: loads
// made unconditional (index clamped, result selected) measured 10-80% slower on the H200.
std::string vec4_b_operand_fns(int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b) {
  std::string scalar = scalar_operand_fns(M, N, K, a, b);
  return scalar.substr(0, scalar.find("void b_begin")) +
         cat("vec4 b_load4(uint n, uint k) {\n  if (!(k < ", K, "u && n < ", N, "u)) return vec4(0.0);\n",
             "  return uintBitsToFloat(b4.data[(bbase + k * ", b.row_stride, "u + n * ", b.col_stride, "u) / 4u]);\n}\n");
}

}  // namespace

bool LhsView::quads(int64_t K) const {
  if (view.strides.back() != 1 || K % 4 != 0 || view.offset % 4 != 0) return false;
  return std::all_of(view.strides.begin(), view.strides.end() - 1, [](int64_t s) { return s % 4 == 0; });
}

// A row-major lhs whose fused prologue is index maps only (a transpose of a [batch, tokens,
// features] activation: ViT's sequence-first projections), read in place through the composed
// view's strides (fusion.h, prologue_view) instead of through the prologue's per-element index
// function (an unravel over the operand's shape per staged element). The view's last stride is the
// k stride; the rows' offsets come from `a_row`.
std::optional<LhsView> lhs_view(const DispatchGroup& group, const Operand& a, const ir::Value* av) {
  if (a.col_stride != 1 || av->type.dtype != DType::f32 || av->type.shape.empty()) return std::nullopt;
  if (!behind_prologue(group, av)) return std::nullopt;  // no prologue: read in place already
  std::optional<PrologueView> pv = prologue_view(group, av);
  if (!pv || !pv->view.forward() || pv->source->type.numel() > int64_t(UINT32_MAX)) return std::nullopt;
  return LhsView{pv->source, pv->view};
}

namespace {

// a_begin / a_load (and with `quads` a_load4) reading the lhs through `lv`: row R of the operand
// (its leading dims unravelled, batches included) starts at a_row(R), and a batch entry's rows
// start at abase / K (abase is a multiple of its M x K matrix).
std::string lhs_view_fns(int64_t M, int64_t K, const LhsView& lv, bool quads) {
  const Shape& s = lv.view.shape;
  std::vector<StridedDim> rows;
  for (size_t d = 0; d + 1 < s.size(); ++d) rows.push_back({s[d], lv.view.strides[d]});
  std::string f = offset_function("a_row_offset", rows) +
                  cat("uint a_row(uint m) { return ", lv.view.offset, "u + a_row_offset(abase / ", K, "u + m); }\n");
  if (quads)
    return f + cat("void a_begin(uint m) {}\nvec4 a_load4(uint m, uint k) {\n  if (!(m < ", M, "u && k < ", K,
                   "u)) return vec4(0.0);\n  return uintBitsToFloat(a4.data[(a_row(m) + k) / 4u]);\n}\n");
  return f + cat("uint arow;\nvoid a_begin(uint m) { arow = a_row(m); }\nfloat a_load(uint m, uint k) {\n  return (m < ", M,
                 "u && k < ", K, "u) ? float(a_src(arow + k * ", lv.view.strides.back(), "u)) : 0.0;\n}\n");
}

}  // namespace

// The FMA loop's operand functions: scalar_operand_fns, with a_load4 (A[m, k..k+3] from the uvec4
// view a4; gemm_core.glsl's A_4X4) where `a4` and b_load4 (vec4_b_operand_fns) where `b4`.
std::string operand_fns(int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b, bool a4, bool b4,
                        const std::optional<LhsView>& lv) {
  std::string scalar = scalar_operand_fns(M, N, K, a, b);
  std::string bpart = b4 ? vec4_b_operand_fns(M, N, K, a, b) : scalar;
  bpart = bpart.substr(bpart.find(b4 ? "vec4 b_load4" : "void b_begin"));
  if (lv) return lhs_view_fns(M, K, *lv, a4) + bpart;
  std::string apart = a4 ? cat("void a_begin(uint m) {}\nvec4 a_load4(uint m, uint k) {\n  if (!(m < ", M, "u && k < ", K,
                               "u)) return vec4(0.0);\n  return uintBitsToFloat(a4.data[(abase + m * ", a.row_stride,
                               "u + k) / 4u]);\n}\n")
                         : scalar.substr(0, scalar.find("void b_begin"));
  return apart + bpart;
}

}  // namespace vkc::codegen::kernels
