// Gather, GatherElements, GatherND, ScatterND, ScatterElements with indices read at run time: one
// invocation per output element (shaders/indexing.comp).
//
// Gathers read one data element per output element (zero where the index is out of range).
// Scatters are deterministic without atomics: matching updates are applied in index order, as the
// reference does (duplicates: the last update wins for reduction 'none'). scatter_elements is
// computed by the OWNER of each output element, which scans the indices along the axis that can
// address it. scatter_nd picks the cheaper of an owner scan (every tuple per result element) and
// an update scan (a copy of the data, then per update element the first tuple of each addressed
// slice folds all its duplicates), by the tuples each would decode (docs/ops.md).
#include <algorithm>

#include "codegen/glsl_types.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/kernels/word_storage.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

using K = ir::OpKind;

constexpr uint32_t kWorkgroup = 256;

size_t axis_of(int64_t a, size_t rank) { return size_t(a < 0 ? a + int64_t(rank) : a); }

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t d = from; d < to; ++d) n *= s[d];
  return n;
}

// "int index_at(uint i, uint n)": entry i of the indices buffer resolved against a dim of n.
std::string index_function(DType t) {
  std::string read = t == DType::i64
                         ? "  uint lo = indices.data[2u * i];\n  uint hi = indices.data[2u * i + 1u];\n"
                         : "  uint lo = indices.data[i];\n  uint hi = (lo >> 31) != 0u ? 0xFFFFFFFFu : 0u;\n";
  return "int index_at(uint i, uint n) {\n" + read + "  return vkc_resolve(lo, hi, n);\n}\n";
}

std::string zero_word(const std::string& word) {
  if (word == "uint") return "0u";
  if (word == "uvec2") return "uvec2(0u)";
  return word + "(0)";
}

// How a kernel holds elements of the data: as raw words (moves, reduction 'none') or as values of
// the compute type (scatter reductions).
struct Element {
  std::string storage;  // buffer element type
  std::string compute;  // register type
  std::string extensions;
  bool arithmetic = false;

  std::string load(const std::string& e) const { return arithmetic ? compute + "(" + e + ")" : e; }
  std::string store(const std::string& e) const { return arithmetic ? storage + "(" + e + ")" : e; }
};

Element element_of(DType t, bool arithmetic, const KernelContext& ctx, const std::string& what) {
  if (!arithmetic) return {word_type(t, ctx.target, what), word_type(t, ctx.target, what), word_extensions(t), false};
  require_storable(t, ctx.target, what);
  return {glsl_storage_type(t), glsl_compute_type(t), glsl_extensions({t}), true};
}

// `v = v (reduction) w` with the result rounded to the element type at every step, like the
// reference (a no-op for 32- and 64-bit types).
std::string combine_code(const std::string& reduction, const Element& e, DType t, const std::string& w) {
  if (reduction == "none") return cat("v = ", w, ";");
  std::string x;
  if (reduction == "add") x = cat("v + ", w);
  else if (reduction == "mul") x = cat("v * ", w);
  else x = cat(is_float(t) ? "vkc_" : "", reduction, "(v, ", w, ")");
  if (e.storage != e.compute) x = cat(e.compute, "(", e.storage, "(", x, "))");
  return cat("v = ", x, ";");
}

const char* kFloatMinMax =
    "float vkc_max(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : max(a, b)); }\n"
    "float vkc_min(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : min(a, b)); }\n";

struct Plan {
  std::string family, strategy, buffers, functions, body;
  std::string extensions;
};

// One dispatch of `total` invocations binding `operands` then the op's result.
EmittedKernel finish(const ir::Op& op, Plan p, const KernelContext& ctx, const std::string& what,
                     std::vector<const ir::Value*> operands = {}, int64_t total = -1) {
  const ir::Value* out = op.result();
  if (operands.empty())
    for (int i = 0; i < op.num_operands(); ++i) operands.push_back(op.operand(i));
  if (total < 0) total = shape_numel(out->type.shape);
  EmittedKernel k;
  k.kernel = p.family;
  k.strategy = p.strategy;
  for (const ir::Value* v : operands) {
    k.bindings.push_back({ctx.tensor(v), false});
    k.bytes += double(v->type.size_bytes());
  }
  k.bindings.push_back({ctx.tensor(out), true});
  k.bytes += double(out->type.size_bytes());
  plan_linear(k, uint64_t(total), kWorkgroup, ctx.target, what);
  k.glsl = instantiate_shader("indexing", {{"EXTENSIONS", p.extensions},
                                           {"WG_SIZE", cat(k.workgroup_size[0])},
                                           {"BUFFERS", p.buffers},
                                           {"FUNCTIONS", p.functions},
                                           {"INDEX", folded_global_index(k.workgroup_size[0])},
                                           {"TOTAL", cat(total)},
                                           {"BODY", p.body}});
  k.tiles["elements"] = total;
  return k;
}

// Buffers data (0), indices (1), [updates (2)], result (last).
Plan plan_buffers(const ir::Op& op, const Element& e) {
  Plan p;
  p.extensions = e.extensions;
  p.buffers = buffer_decl(0, e.storage, false, "data_buf") + buffer_decl(1, "uint", false, "indices");
  uint32_t out_binding = 2;
  if (op.num_operands() == 3) p.buffers += buffer_decl(out_binding++, e.storage, false, "updates");
  p.buffers += buffer_decl(out_binding, e.storage, true, "result");
  p.functions = index_function(op.operand(1)->type.dtype);
  return p;
}

Plan plan_gather(const ir::Op& op, const Element& e) {
  Plan p = plan_buffers(op, e);
  const Shape& ds = op.operand(0)->type.shape;
  size_t axis = axis_of(op.attr_int("axis"), ds.size());
  int64_t dim = ds[axis], inner = product(ds, axis + 1, ds.size());
  int64_t count = op.operand(1)->type.numel();
  p.family = "gather";
  p.strategy = "gather";
  p.body = cat("  uint c = gid % ", inner, "u;\n  uint r = gid / ", inner, "u;\n  uint j = r % ", count,
               "u;\n  uint o = r / ", count, "u;\n  int pos = index_at(j, ", dim, "u);\n",
               "  result.data[gid] = pos < 0 ? ", zero_word(e.storage), " : data_buf.data[(o * ", dim,
               "u + uint(max(pos, 0))) * ", inner, "u + c];\n");
  return p;
}

Plan plan_gather_elements(const ir::Op& op, const Element& e) {
  Plan p = plan_buffers(op, e);
  const Shape& ds = op.operand(0)->type.shape;
  const Shape& is = op.operand(1)->type.shape;
  size_t axis = axis_of(op.attr_int("axis"), ds.size());
  std::vector<int64_t> stride = strides_of(ds);
  p.family = "gather_elements";
  p.strategy = "gather";
  p.body = unravel_code(is, "gid", "c");
  p.body += "  uint src = 0u;\n";
  for (size_t d = 0; d < is.size(); ++d)
    if (d != axis) p.body += cat("  src += c", d, " * ", stride[d], "u;\n");
  p.body += cat("  int pos = index_at(gid, ", ds[axis], "u);\n  result.data[gid] = pos < 0 ? ",
                zero_word(e.storage), " : data_buf.data[src + uint(max(pos, 0)) * ", stride[axis], "u];\n");
  return p;
}

// GLSL resolving tuple `tuple` (a uint expression) of k indices against data dims [first, first +
// k): declares `inside` and `at` (the tuple's flat position in those dims).
std::string tuple_code(const Shape& ds, size_t first, size_t k, const std::string& tuple,
                       const std::string& indent) {
  std::string s = cat(indent, "bool inside = true;\n", indent, "uint at = 0u;\n");
  for (size_t j = 0; j < k; ++j)
    s += cat(indent, "{ int q = index_at(", tuple, " * ", k, "u + ", j, "u, ", ds[first + j],
             "u); inside = inside && q >= 0; at = at * ", ds[first + j], "u + uint(max(q, 0)); }\n");
  return s;
}

Plan plan_gather_nd(const ir::Op& op, const Element& e) {
  Plan p = plan_buffers(op, e);
  const Shape& ds = op.operand(0)->type.shape;
  const Shape& is = op.operand(1)->type.shape;
  size_t b = size_t(op.attr_int("batch_dims")), k = size_t(is.back());
  int64_t per_batch = product(is, b, is.size() - 1);
  int64_t slice = product(ds, b + k, ds.size()), batch_stride = product(ds, b, ds.size());
  p.family = "gather_nd";
  p.strategy = "gather";
  p.body = cat("  uint c = gid % ", slice, "u;\n  uint t = gid / ", slice, "u;\n");
  p.body += tuple_code(ds, b, k, "t", "  ");
  p.body += cat("  result.data[gid] = inside ? data_buf.data[(t / ", per_batch, "u) * ", batch_stride,
                "u + at * ", slice, "u + c] : ", zero_word(e.storage), ";\n");
  return p;
}

// "uint tuple_target(uint t)": the flat slice index (in data dims [0, k)) that index tuple t
// addresses, or 0xFFFFFFFFu when a component is out of range (no slice index reaches it: the
// data holds fewer than 2^31 elements).
std::string tuple_function(const Shape& ds, size_t k) {
  std::string s = "uint tuple_target(uint t) {\n  uint at = 0u;\n";
  for (size_t j = 0; j < k; ++j)
    s += cat("  { int q = index_at(t * ", k, "u + ", j, "u, ", ds[j], "u); if (q < 0) return 0xFFFFFFFFu; at = at * ",
             ds[j], "u + uint(q); }\n");
  return s + "  return at;\n}\n";
}

struct ScatterNdShape {
  size_t k;
  int64_t slice, tuples;
};

ScatterNdShape scatter_nd_shape(const ir::Op& op) {
  const Shape& ds = op.operand(0)->type.shape;
  const Shape& is = op.operand(1)->type.shape;
  size_t k = size_t(is.back());
  return {k, product(ds, k, ds.size()), product(is, 0, is.size() - 1)};
}

Plan scatter_nd_common(const ir::Op& op, const Element& e, DType t) {
  Plan p = plan_buffers(op, e);
  const std::string& reduction = op.attr_string("reduction");
  p.family = "scatter_nd";
  if (e.arithmetic && is_float(t) && (reduction == "max" || reduction == "min")) p.functions += kFloatMinMax;
  p.functions += tuple_function(op.operand(0)->type.shape, scatter_nd_shape(op).k);
  return p;
}

// Owner scan: each result element starts from its data element and applies, in order, the
// updates of every tuple that addresses its slice.
Plan plan_scatter_nd_owner(const ir::Op& op, const Element& e, DType t) {
  Plan p = scatter_nd_common(op, e, t);
  ScatterNdShape sh = scatter_nd_shape(op);
  const std::string& reduction = op.attr_string("reduction");
  p.strategy = cat("owner scan, reduction ", reduction);
  p.body = cat("  uint s = gid / ", sh.slice, "u;\n  uint c = gid % ", sh.slice, "u;\n  ", e.compute,
               " v = ", e.load("data_buf.data[gid]"), ";\n  for (uint u = 0u; u < ", sh.tuples, "u; ++u) {\n");
  p.body += cat("    if (tuple_target(u) == s) { ",
                combine_code(reduction, e, t, e.load(cat("updates.data[u * ", sh.slice, "u + c]"))), " }\n  }\n");
  p.body += cat("  result.data[gid] = ", e.store("v"), ";\n");
  return p;
}

// Update scan, after a copy of the data: one invocation per update element; the FIRST tuple of
// each addressed slice folds, in order, the updates of every tuple that addresses the same slice
// and writes the result once; later duplicates and out-of-range tuples write nothing. The same
// order and the same result as the owner scan, in O(update elements x tuples) instead of
// O(result elements x tuples).
Plan plan_scatter_nd_updates(const ir::Op& op, const Element& e, DType t) {
  Plan p = scatter_nd_common(op, e, t);
  ScatterNdShape sh = scatter_nd_shape(op);
  const std::string& reduction = op.attr_string("reduction");
  p.strategy = cat("update scan, reduction ", reduction);
  p.body = cat("  uint u = gid / ", sh.slice, "u;\n  uint c = gid % ", sh.slice, "u;\n",
               "  uint s = tuple_target(u);\n  if (s == 0xFFFFFFFFu) return;\n",
               "  for (uint w = 0u; w < u; ++w)\n    if (tuple_target(w) == s) return;\n",
               "  uint at = s * ", sh.slice, "u + c;\n  ", e.compute, " v = ", e.load("data_buf.data[at]"), ";\n",
               "  for (uint w = u; w < ", sh.tuples, "u; ++w)\n",
               "    if (tuple_target(w) == s) { ",
               combine_code(reduction, e, t, e.load(cat("updates.data[w * ", sh.slice, "u + c]"))), " }\n",
               "  result.data[at] = ", e.store("v"), ";\n");
  return p;
}

// The data copied to the result, bit-exactly (the first dispatch of the update scan).
Plan plan_copy(const Element& e) {
  Plan p;
  p.family = "scatter_nd";
  p.strategy = "update scan: copy data";
  p.extensions = e.extensions;
  p.buffers = buffer_decl(0, e.storage, false, "data_buf") + buffer_decl(1, e.storage, true, "result");
  p.body = "  result.data[gid] = data_buf.data[gid];\n";
  return p;
}

std::vector<EmittedKernel> emit_scatter_nd(const ir::Op& op, const Element& e, DType t, const KernelContext& ctx,
                                           const std::string& what) {
  ScatterNdShape sh = scatter_nd_shape(op);
  double n = double(op.result()->type.numel()), updates = double(sh.tuples) * double(sh.slice);
  // Index tuples decoded: the owner scan decodes every tuple for every result element; the update
  // scan decodes every tuple for every update element (the first-occurrence check and the fold)
  // and copies the data once.
  double owner = n * double(sh.tuples), update = n / double(sh.k) + updates * double(sh.tuples);
  std::string forced = ctx.forced(op);
  if (!forced.empty() && forced != "owner scan" && forced != "update scan")
    throw Error(cat(what, ": strategy '", forced, "' is not one of 'owner scan', 'update scan'"));
  bool by_updates = forced.empty() ? update < owner : forced == "update scan";
  if (!by_updates) return {finish(op, plan_scatter_nd_owner(op, e, t), ctx, what)};
  Element words = element_of(t, false, ctx, what);
  check_32bit(int64_t(updates), what);
  return {finish(op, plan_copy(words), ctx, what, {op.operand(0)}),
          finish(op, plan_scatter_nd_updates(op, e, t), ctx, what, {}, int64_t(updates))};
}

Plan plan_scatter_elements(const ir::Op& op, const Element& e, DType t) {
  Plan p = plan_buffers(op, e);
  const Shape& ds = op.operand(0)->type.shape;
  const Shape& is = op.operand(1)->type.shape;
  const std::string& reduction = op.attr_string("reduction");
  size_t axis = axis_of(op.attr_int("axis"), ds.size());
  std::vector<int64_t> istride = strides_of(is);
  p.family = "scatter_elements";
  p.strategy = cat("owner scan, reduction ", reduction);
  if (e.arithmetic && is_float(t) && (reduction == "max" || reduction == "min")) p.functions += kFloatMinMax;
  p.body = unravel_code(ds, "gid", "c");
  p.body += cat("  ", e.compute, " v = ", e.load("data_buf.data[gid]"), ";\n  bool covered = true;\n  uint base = 0u;\n");
  for (size_t d = 0; d < ds.size(); ++d) {
    if (d == axis) continue;
    if (is[d] < ds[d]) p.body += cat("  covered = covered && c", d, " < ", is[d], "u;\n");
    p.body += cat("  base += c", d, " * ", istride[d], "u;\n");
  }
  p.body += cat("  if (covered) {\n    for (uint a = 0u; a < ", is[axis], "u; ++a) {\n      uint i = base + a * ",
                istride[axis], "u;\n      if (index_at(i, ", ds[axis], "u) == int(c", axis, ")) { ",
                combine_code(reduction, e, t, e.load("updates.data[i]")), " }\n    }\n  }\n");
  p.body += cat("  result.data[gid] = ", e.store("v"), ";\n");
  return p;
}

}  // namespace

std::vector<EmittedKernel> emit_indexing(const DispatchGroup& group, const KernelContext& ctx,
                                         std::vector<ScratchTensor>&) {
  const ir::Op& op = *group.anchor;
  check(group.ops.size() == 1, "internal: ", op.describe(), " was fused with other ops");
  const std::string what = op.describe();
  const ir::Value* out = op.result();
  if (out->type.numel() == 0) return {};
  for (int i = 0; i < op.num_operands(); ++i) {
    const ir::Value* v = op.operand(i);
    check_32bit(v->type.numel() * (i == 1 && v->type.dtype == DType::i64 ? 2 : 1), what);
    if (v->type.numel() == 0)
      throw Error(cat(what, ": ", op.operand_label(i), " is empty (", v->type.str(),
                      "); an empty operand is not supported on the GPU"));
  }
  check_32bit(out->type.numel(), what);
  DType t = out->type.dtype;
  bool scatter = op.kind == K::ScatterND || op.kind == K::ScatterElements;
  bool arithmetic = scatter && op.attr_string("reduction") != "none";
  Element e = element_of(t, arithmetic, ctx, what);
  if (op.kind == K::ScatterND) return emit_scatter_nd(op, e, t, ctx, what);
  Plan p;
  switch (op.kind) {
    case K::Gather: p = plan_gather(op, e); break;
    case K::GatherElements: p = plan_gather_elements(op, e); break;
    case K::GatherND: p = plan_gather_nd(op, e); break;
    case K::ScatterElements: p = plan_scatter_elements(op, e, t); break;
    default: throw Error(cat("internal: ", what, " is not an indexing op"));
  }
  return {finish(op, std::move(p), ctx, what)};
}

}  // namespace vkc::codegen::kernels
