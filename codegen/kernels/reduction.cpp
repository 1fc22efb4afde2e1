// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSumExp over any axes, ArgMax/ArgMin, Softmax/LogSoftmax over any axis.
//
// The input splits into output rows ("slots", the kept dims) and the elements of a row (the
// reduced dims); adjacent dims of the same kind merge so the generated index math stays short.
// Strategies: "loop" (one invocation per row, for short rows or many rows) and "workgroup" (one
// workgroup per row, strided partial results combined by a tree in workgroup memory).
//
// Arg reductions write their i64 indices as (low, high) uint pairs, so they need no shaderInt64
// unless the input itself is i64.
//
// Every kernel reads its input through the group's fused prologue (x_at, codegen/fusion.h); the
// reductions and softmax with float results store through its fused epilogue (store_result), the
// others through a plain store_result of their own type.
#include <algorithm>
#include <set>

#include "codegen/fusion.h"
#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/kernel_util.h"
#include "codegen/kernels/kernels.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

using K = ir::OpKind;

using Dim = StridedDim;

// Rows and row elements of `shape` reduced over `reduced` axes, merged where contiguous.
struct Split {
  std::vector<Dim> kept, red;  // outer to inner
  int64_t slots = 1, row = 1;
};

Split split_axes(const Shape& shape, const std::vector<bool>& reduced) {
  Split s;
  std::vector<int64_t> strides = strides_of(shape);
  int last = -1;  // kind of the previous non-unit dim: 0 kept, 1 reduced
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // contributes nothing to either index
    int kind = reduced[d] ? 1 : 0;
    std::vector<Dim>& list = kind ? s.red : s.kept;
    if (kind == last && !list.empty() && list.back().stride == shape[d] * strides[d]) {
      list.back().extent *= shape[d];
      list.back().stride = strides[d];
    } else {
      list.push_back({shape[d], strides[d]});
    }
    last = kind;
  }
  for (const Dim& d : s.kept) s.slots *= d.extent;
  for (const Dim& d : s.red) s.row *= d.extent;
  if (shape_numel(shape) == 0) s.row = 0;
  return s;
}

std::string int_min(DType t) {
  switch (t) {
    case DType::i64: return "(int64_t(-9223372036854775807l) - int64_t(1))";
    case DType::i8: return "-128";
    case DType::u8: return "0";
    default: return int_literal(INT32_MIN);
  }
}
std::string int_max(DType t) {
  switch (t) {
    case DType::i64: return "int64_t(9223372036854775807l)";
    case DType::i8: return "127";
    case DType::u8: return "255";
    default: return "2147483647";
  }
}

const char* kNaN = "uintBitsToFloat(0x7fc00000u)";
const char* kNegInf = "uintBitsToFloat(0xff800000u)";
const char* kPosInf = "uintBitsToFloat(0x7f800000u)";

struct Plan {
  bool workgroup = false;
  uint32_t wg = 1;
};

Plan choose_strategy(const ir::Op& op, const Split& s, const KernelContext& ctx, uint32_t shared_per_item,
                     const std::string& what) {
  std::string forced = ctx.forced(op);
  check(forced.empty() || forced == "loop" || forced == "workgroup", what, ": unknown strategy '", forced,
        "' (reductions have: loop, workgroup)");
  Plan p;
  p.workgroup = forced.empty() ? s.row >= 256 : forced == "workgroup";
  if (!p.workgroup) return p;
  uint32_t want = 256;
  while (want > 32 && int64_t(want / 2) >= s.row) want /= 2;  // short rows: smaller groups
  p.wg = fit_workgroup_size_x(want, ctx.target);
  while (p.wg > 1 && p.wg * shared_per_item > ctx.target.max_compute_shared_memory_size) p.wg /= 2;
  return p;
}

std::string word_buffer(uint32_t binding, const std::string& type, bool writes, const std::string& name) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", writes ? "writeonly " : "readonly ",
             "buffer Buffer", binding, " { ", type, " data[]; } ", name, ";\n");
}

// Common launch: rows of the loop strategy are invocations, rows of the workgroup strategy are
// workgroups; both may be folded into a 2-D grid.
std::string row_index(EmittedKernel& k, const Plan& p, const Split& s, const KernelContext& ctx,
                      const std::string& what) {
  if (p.workgroup) {
    k.workgroup_size = {p.wg, 1, 1};
    k.workgroup_count = linear_grid(uint64_t(s.slots) * p.wg, p.wg, ctx.target, what);
    // The whole workgroup leaves together, so the barriers below stay in uniform control flow.
    return folded_workgroup_index("slot") + cat("  if (slot >= ", s.slots, "u) return;\n") +
           "  uint tid = gl_LocalInvocationID.x;\n";
  }
  plan_linear(k, uint64_t(s.slots), 128, ctx.target, what);
  return folded_global_index(k.workgroup_size[0], "slot") + cat("  if (slot >= ", s.slots, "u) return;\n");
}

std::string tree(const Plan& p, const std::string& step) {
  return cat("  barrier();\n  for (uint s = ", p.wg / 2, "u; s > 0u; s >>= 1u) {\n    if (tid < s) {\n", step,
             "    }\n    barrier();\n  }\n");
}

// Rows along the op's single `axis` attribute (argmax/argmin, softmax).
Split split_single_axis(const ir::Op& op, const Shape& shape) {
  int64_t axis = op.attr_int("axis");
  if (axis < 0) axis += int64_t(shape.size());
  std::vector<bool> reduced(shape.size(), false);
  reduced[size_t(axis)] = true;
  return split_axes(shape, reduced);
}

// A row kernel's buffers, bindings and helper functions: the input loader, then the result.
using RowIo = KernelIo;

// `x_at(i)`: element i of the input, through the group's fused prologue.
RowIo read_input(const DispatchGroup& group, const KernelContext& ctx) {
  RowIo io;
  io.add(operand_loader(group, group.anchor->operand(0), "x_at", 0, ctx));
  return io;
}

// `store_result(i, v)`: element i of the result. Float results go through the fused epilogue
// (which takes an f32 accumulator); integer ones store their `value_type` exactly.
void write_result(RowIo& io, const DispatchGroup& group, const KernelContext& ctx, const std::string& value_type,
                  const std::string& what) {
  const ir::Value* out = group.anchor->result();
  const DType t = out->type.dtype;
  if (is_float(t)) {
    io.add(result_store(group, uint32_t(io.bindings.size()), ctx));
    return;
  }
  require_storable(t, ctx.target, what);
  io.types.insert(t);
  io.buffers += glsl_buffer(uint32_t(io.bindings.size()), t, true, "result");
  io.functions += cat("void store_result(uint i, ", value_type, " v) { result.data[i] = ", glsl_storage_type(t),
                      "(v); }\n");
  io.bindings.push_back({ctx.tensor(out), true});
  io.bytes += double(out->type.size_bytes());
}

// The part every row kernel shares: bind the input and the result, instantiate the "reduce"
// template, and count one operation per element read.
EmittedKernel finish_row_kernel(EmittedKernel& k, const Split& s, const RowIo& io, const std::set<DType>& types,
                                const std::string& shared, const std::string& fns, const std::string& body) {
  std::set<DType> all = types;
  all.insert(io.types.begin(), io.types.end());
  k.bindings = io.bindings;
  k.glsl = instantiate_shader("reduce", {{"EXTENSIONS", glsl_extensions(all)},
                                         {"WG_SIZE", cat(k.workgroup_size[0])},
                                         {"BUFFERS", io.buffers},
                                         {"SHARED", shared},
                                         {"FUNCTIONS", io.functions + fns},
                                         {"BODY", body}});
  k.flops = double(s.slots * s.row);
  k.bytes = io.bytes;
  k.tiles["rows"] = s.slots;
  k.tiles["row_length"] = s.row;
  return k;
}

EmittedKernel reduce_kernel(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Op& op = *group.anchor;
  const ir::Value* in = op.operand(0);
  const DType t = in->type.dtype;
  std::vector<bool> reduced(in->type.shape.size(), false);
  std::vector<int64_t> axes = op.attr_ints_or("axes", {});
  for (int64_t a : axes) reduced[size_t(a < 0 ? a + in->type.rank() : a)] = true;
  if (axes.empty()) reduced.assign(reduced.size(), true);
  Split s = split_axes(in->type.shape, reduced);

  const bool integer = !is_float(t);
  std::string acc_t = glsl_compute_type(t);
  // Integer means divide the exact (64-bit, where available) sum, as the reference does.
  if (integer && op.kind == K::ReduceMean && ctx.target.shader_int64) acc_t = "int64_t";
  std::set<DType> types;
  if (acc_t == "int64_t") types.insert(DType::i64);
  std::string init, combine, element = "v";
  switch (op.kind) {
    case K::ReduceSum:
    case K::ReduceMean:
      init = integer ? acc_t + "(0)" : "0.0";
      combine = "a + b";
      break;
    case K::ReduceMax:
      init = integer ? int_min(t) : kNegInf;
      combine = integer ? "max(a, b)" : cat("(isnan(a) || isnan(b)) ? ", kNaN, " : max(a, b)");
      break;
    case K::ReduceMin:
      init = integer ? int_max(t) : kPosInf;
      combine = integer ? "min(a, b)" : cat("(isnan(a) || isnan(b)) ? ", kNaN, " : min(a, b)");
      break;
    // Normalizations and reductions group (issue 23): each element is mapped on load (|x|, x^2)
    // so that the tree still combines partial results with plain + or *.
    case K::ReduceProd:
      init = integer ? acc_t + "(1)" : "1.0";
      combine = "a * b";
      break;
    case K::ReduceL1:
      init = integer ? acc_t + "(0)" : "0.0";
      combine = "a + b";
      element = "abs(v)";
      break;
    case K::ReduceL2:
      init = "0.0";
      combine = "a + b";
      element = "v * v";
      break;
    default: throw Error(cat(what, ": internal error: not a reduce_kernel op"));
  }
  std::string finish = "acc";
  if (op.kind == K::ReduceMean)
    finish = !integer ? cat("acc / ", s.row, ".0") : s.row == 0 ? "0" : cat("acc / ", acc_t, "(", s.row, ")");
  if (op.kind == K::ReduceL2) finish = "sqrt(acc)";

  EmittedKernel k;
  k.kernel = "reduce";
  Plan p = choose_strategy(op, s, ctx, acc_t == "int64_t" ? 8 : 4, what);
  std::string fns = offset_function("slot_base", s.kept) + offset_function("element_offset", s.red);
  fns += cat(acc_t, " combine(", acc_t, " a, ", acc_t, " b) { return ", combine, "; }\n");
  fns += cat(acc_t, " load(uint i) { ", acc_t, " v = ", acc_t, "(x_at(i)); return ", element, "; }\n");
  std::string body = row_index(k, p, s, ctx, what);
  body += cat("  uint base = slot_base(slot);\n  ", acc_t, " acc = ", init, ";\n");
  std::string shared;
  if (p.workgroup) {
    body += cat("  for (uint r = tid; r < ", s.row, "u; r += ", p.wg, "u) acc = combine(acc, load(base + element_offset(r)));\n");
    body += "  red[tid] = acc;\n" + tree(p, "      red[tid] = combine(red[tid], red[tid + s]);\n");
    body += "  if (tid != 0u) return;\n  acc = red[0];\n";
    shared = cat("shared ", acc_t, " red[", p.wg, "];\n");
    k.workgroup_memory_bytes = p.wg * (acc_t == "int64_t" ? 8 : 4);
    k.strategy = "workgroup";
  } else {
    body += cat("  for (uint r = 0u; r < ", s.row, "u; ++r) acc = combine(acc, load(base + element_offset(r)));\n");
    k.strategy = "loop";
  }
  body += cat("  store_result(slot, ", finish, ");\n");
  RowIo io = read_input(group, ctx);
  write_result(io, group, ctx, acc_t, what);
  return finish_row_kernel(k, s, io, types, shared, fns, body);
}

EmittedKernel arg_kernel(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Op& op = *group.anchor;
  const ir::Value* in = op.operand(0);
  const DType t = in->type.dtype;
  Split s = split_single_axis(op, in->type.shape);
  const bool is_max = op.kind == K::ArgMax, last = op.attr_bool("select_last_index");
  const std::string vt = glsl_compute_type(t);

  // Better-than as a total order on (value, index): NaN beats numbers, then the larger (argmax)
  // or smaller value, then the smaller index (the larger with select_last_index). A sequential
  // scan with it equals the reference's, and it is associative, so strided partial results can
  // be merged in any tree.
  std::string fns = offset_function("slot_base", s.kept) + offset_function("element_offset", s.red);
  fns += cat(vt, " load(uint i) { return ", vt, "(x_at(i)); }\n");
  std::string index_rule = last ? "ib > ia" : "ib < ia";
  fns += cat("bool better(", vt, " b, uint ib, ", vt, " a, uint ia) {\n");
  if (is_float(t))
    fns += cat("  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? ", index_rule, " : isnan(b);\n");
  fns += cat("  if (a == b) return ", index_rule, ";\n  return b ", is_max ? ">" : "<", " a;\n}\n");
  fns += cat("void merge(inout ", vt, " v, inout uint i, ", vt, " ov, uint oi) {\n"
             "  if (oi == 0xffffffffu) return;\n"
             "  if (i == 0xffffffffu || better(ov, oi, v, i)) { v = ov; i = oi; }\n}\n");

  EmittedKernel k;
  k.kernel = is_max ? "argmax" : "argmin";
  uint32_t vsize = vt == "int64_t" ? 8 : 4;
  Plan p = choose_strategy(op, s, ctx, vsize + 4, what);
  std::string body = row_index(k, p, s, ctx, what);
  body += cat("  uint base = slot_base(slot);\n  ", vt, " v = ", vt, "(0);\n  uint idx = 0xffffffffu;\n");
  std::string shared;
  if (p.workgroup) {
    body += cat("  for (uint r = tid; r < ", s.row, "u; r += ", p.wg, "u) merge(v, idx, load(base + element_offset(r)), r);\n");
    body += "  vals[tid] = v;\n  idxs[tid] = idx;\n";
    body += tree(p, "      merge(vals[tid], idxs[tid], vals[tid + s], idxs[tid + s]);\n");
    body += "  if (tid != 0u) return;\n  idx = idxs[0];\n";
    shared = cat("shared ", vt, " vals[", p.wg, "];\nshared uint idxs[", p.wg, "];\n");
    k.workgroup_memory_bytes = p.wg * (vsize + 4);
    k.strategy = "workgroup";
  } else {
    body += cat("  for (uint r = 0u; r < ", s.row, "u; ++r) merge(v, idx, load(base + element_offset(r)), r);\n");
    k.strategy = "loop";
  }
  body += "  result.data[slot] = uvec2(idx, 0u);\n";  // i64 little-endian: low word, then high
  // No epilogue: the result is an index (dispatch formation fuses none).
  RowIo io = read_input(group, ctx);
  io.buffers += word_buffer(uint32_t(io.bindings.size()), "uvec2", true, "result");
  io.bindings.push_back({ctx.tensor(op.result()), true});
  io.bytes += double(op.result()->type.size_bytes());
  return finish_row_kernel(k, s, io, {}, shared, fns, body);
}

// The row helpers softmax and log-sum-exp share: offsets, the input load, and a max that
// propagates NaN (a NaN anywhere in a row makes the whole row NaN, as in the reference).
std::string max_exp_functions(const Split& s) {
  return offset_function("slot_base", s.kept) + offset_function("element_offset", s.red) +
         "float load(uint i) { return float(x_at(i)); }\n" +
         cat("float max_nan(float a, float b) { return (isnan(a) || isnan(b)) ? ", kNaN, " : max(a, b); }\n");
}

// Their two passes: `m`, the row's maximum, then `sum` of exp(x - m) over the row (`sum_guard`
// may skip it), one invocation per row or a workgroup combining partials through `red`. Appends
// to `body`, sets the strategy (and the memory) in `k`, and returns the row loop for a third pass.
std::string max_and_exp_sum(EmittedKernel& k, const Plan& p, const Split& s, const std::string& sum_guard,
                            std::string& body, std::string& shared) {
  body += cat("  uint base = slot_base(slot);\n  float m = ", kNegInf, ";\n  float sum = 0.0;\n");
  std::string loop = p.workgroup ? cat("for (uint r = tid; r < ", s.row, "u; r += ", p.wg, "u)")
                                 : cat("for (uint r = 0u; r < ", s.row, "u; ++r)");
  body += cat("  ", loop, " m = max_nan(m, load(base + element_offset(r)));\n");
  if (p.workgroup) {
    body += "  red[tid] = m;\n" + tree(p, "      red[tid] = max_nan(red[tid], red[tid + s]);\n");
    body += "  m = red[0];\n  barrier();  // everyone has read red[0] before it is reused\n";
  }
  body += cat("  ", sum_guard, loop, " sum += exp(load(base + element_offset(r)) - m);\n");
  if (p.workgroup) {
    body += "  red[tid] = sum;\n" + tree(p, "      red[tid] += red[tid + s];\n") + "  sum = red[0];\n";
    shared = cat("shared float red[", p.wg, "];\n");
    k.workgroup_memory_bytes = p.wg * 4;
  }
  k.strategy = p.workgroup ? "workgroup" : "loop";
  return loop;
}

EmittedKernel softmax_kernel(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Op& op = *group.anchor;
  const ir::Value* in = op.operand(0);
  Split s = split_single_axis(op, in->type.shape);
  const bool log = op.kind == K::LogSoftmax;

  std::string out_expr = log ? "x - m - log(sum)" : "exp(x - m) / sum";

  EmittedKernel k;
  k.kernel = log ? "log_softmax" : "softmax";
  Plan p = choose_strategy(op, s, ctx, 4, what);
  std::string body = row_index(k, p, s, ctx, what), shared;
  std::string loop = max_and_exp_sum(k, p, s, "", body, shared);
  body += cat("  ", loop, " { float x = load(base + element_offset(r)); store_result(base + element_offset(r), ", out_expr,
              "); }\n");
  RowIo io = read_input(group, ctx);
  write_result(io, group, ctx, "float", what);
  finish_row_kernel(k, s, io, {}, shared, max_exp_functions(s), body);
  k.flops = double(s.slots * s.row) * 4;
  return k;
}

// reduce_log_sum_exp (issue 23): m + log(sum exp(x - m)) with m the row max, two passes like
// softmax's. A NaN makes m NaN and so the result; an infinite m is the result itself.
EmittedKernel log_sum_exp_kernel(const DispatchGroup& group, const KernelContext& ctx, const std::string& what) {
  const ir::Op& op = *group.anchor;
  const ir::Value* in = op.operand(0);
  std::vector<bool> reduced(in->type.shape.size(), false);
  std::vector<int64_t> axes = op.attr_ints_or("axes", {});
  for (int64_t a : axes) reduced[size_t(a < 0 ? a + in->type.rank() : a)] = true;
  if (axes.empty()) reduced.assign(reduced.size(), true);
  Split s = split_axes(in->type.shape, reduced);

  EmittedKernel k;
  k.kernel = "reduce_log_sum_exp";
  Plan p = choose_strategy(op, s, ctx, 4, what);
  std::string body = row_index(k, p, s, ctx, what), shared;
  max_and_exp_sum(k, p, s, "if (!isinf(m)) ", body, shared);
  if (p.workgroup) body += "  if (tid != 0u) return;\n";
  body += "  store_result(slot, isinf(m) ? m : m + log(sum));\n";
  RowIo io = read_input(group, ctx);
  write_result(io, group, ctx, "float", what);
  finish_row_kernel(k, s, io, {}, shared, max_exp_functions(s), body);
  k.flops = double(s.slots * s.row) * 3;
  return k;
}

// Element offsets into the input are 32-bit (offset_function returns uint): refuse inputs they
// cannot address instead of letting slot * stride wrap.
std::vector<EmittedKernel> checked(const DispatchGroup& group, const KernelContext& ctx,
                                   EmittedKernel (*kernel)(const DispatchGroup&, const KernelContext&,
                                                           const std::string&)) {
  const std::string what = group.anchor->describe();
  check_32bit(shape_numel(group.anchor->operand(0)->type.shape), what);
  return {kernel(group, ctx, what)};
}

}  // namespace

std::vector<EmittedKernel> emit_reduce(const DispatchGroup& group, const KernelContext& ctx,
                                       std::vector<ScratchTensor>&) {
  return checked(group, ctx, reduce_kernel);
}

std::vector<EmittedKernel> emit_reduce_log_sum_exp(const DispatchGroup& group, const KernelContext& ctx,
                                                   std::vector<ScratchTensor>&) {
  return checked(group, ctx, log_sum_exp_kernel);
}

std::vector<EmittedKernel> emit_arg_reduce(const DispatchGroup& group, const KernelContext& ctx,
                                           std::vector<ScratchTensor>&) {
  return checked(group, ctx, arg_kernel);
}

std::vector<EmittedKernel> emit_softmax(const DispatchGroup& group, const KernelContext& ctx,
                                        std::vector<ScratchTensor>&) {
  return checked(group, ctx, softmax_kernel);
}

}  // namespace vkc::codegen::kernels
