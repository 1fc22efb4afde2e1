#include "codegen/fusion.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include "codegen/fusion_expr.h"
#include "codegen/glsl_types.h"
#include "codegen/op_codegen.h"
#include "codegen/shader_library.h"
#include "codegen/strided_view.h"
#include "ir/slice_geometry.h"
#include "support/error.h"

namespace vkc::codegen {
namespace {

bool contains(const std::vector<ir::Op*>& ops, const ir::Op* op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

bool is_8bit(DType t) { return t == DType::i8 || t == DType::u8; }

// C-order coordinates of linear index `var` in `shape` as uint `<prefix>0..`.
std::string unravel(const Shape& shape, const std::string& var, const std::string& prefix) {
  std::string s = cat("  uint ", prefix, "rem = ", var, ";\n");
  for (size_t d = shape.size(); d-- > 0;) {
    if (d == 0) s += cat("  uint ", prefix, "0 = ", prefix, "rem;\n");
    else s += cat("  uint ", prefix, d, " = ", prefix, "rem % ", shape[d], "u; ", prefix, "rem /= ", shape[d], "u;\n");
  }
  return s;
}

// The fewest trailing dims of `shape` whose product is a multiple of 4 (0: none): four elements
// i..i+3 with i % 4 == 0 differ only in those dims (store_result4).
int64_t quad_run(const Shape& shape) {
  int64_t product = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    product *= shape[d];
    if (product % 4 == 0) return int64_t(shape.size() - d);
  }
  return 0;
}

// How a side operand of shape `in`, broadcast to `out`, is read at elements i..i+3 of `out`
// (i % 4 == 0; `run` = quad_run(out)): at one index (broadcast over the run's dims), at four
// consecutive indices from a multiple of 4 (the run's dims all its own), or neither.
enum class QuadRead { same, consecutive, none };
QuadRead quad_read(const Shape& in, const Shape& out, int64_t run) {
  if (run == 0) return QuadRead::none;
  bool all_broadcast = true, all_own = true;
  for (int64_t j = 1; j <= run; ++j) {
    const int64_t o = out[out.size() - size_t(j)];
    const int64_t d = int64_t(in.size()) - j >= 0 ? in[in.size() - size_t(j)] : 1;
    if (o == 1) continue;
    all_broadcast = all_broadcast && d == 1;
    all_own = all_own && d == o;
  }
  return all_broadcast ? QuadRead::same : all_own ? QuadRead::consecutive : QuadRead::none;
}

// Builds the functions of one FusedCode; bindings are numbered consecutively.
class Builder {
 public:
  Builder(FusedCode& code, uint32_t first_binding, const KernelContext& ctx, std::string prefix)
      : code_(code), next_(first_binding), ctx_(ctx), prefix_(std::move(prefix)) {}

  // `T fn(uint i)` reading element i of external value v (8-bit values without 8-bit storage are
  // read from packed words). Returns the function name.
  std::string read_external(const ir::Value* v, const std::string& what) {
    DType t = v->type.dtype;
    uint32_t b = next_++;
    std::string inst = cat(prefix_, "buf", b), fn = cat(prefix_, "read", b);
    std::string ct = glsl_compute_type(t);
    if (is_8bit(t) && !gpu_storable(t, ctx_.target)) {
      code_.buffers += cat("layout(std430, set = 0, binding = ", b, ") restrict readonly buffer Buffer", b,
                           " { uint data[]; } ", inst, ";\n");
      std::string word = cat(inst, ".data[i >> 2u]");
      code_.functions += t == DType::i8
          ? cat("int ", fn, "(uint i) { return bitfieldExtract(int(", word, "), int((i & 3u) * 8u), 8); }\n")
          : cat("int ", fn, "(uint i) { return int(bitfieldExtract(", word, ", int((i & 3u) * 8u), 8)); }\n");
    } else {
      require_storable(t, ctx_.target, what);
      code_.types.insert(t);
      code_.buffers += glsl_buffer(b, t, false, inst);
      code_.functions += cat(ct, " ", fn, "(uint i) { return ", ct, "(", inst, ".data[i]); }\n");
    }
    code_.bindings.push_back({ctx_.tensor(v), false});
    code_.bytes += double(v->type.size_bytes());
    return fn;
  }

  // An expression for a per-tensor or per-channel quantization parameter at channel `c`.
  std::string parameter(const ir::Value* v, const std::string& c, const std::string& what) {
    if (inlined_as_literal(v)) return literal_of(v);
    return cat(read_external(v, what), "(", c, ")");
  }

  // The function already made for value v (a prologue that reads v twice makes it once), or "".
  std::string made(const ir::Value* v) const {
    auto it = made_.find(v);
    return it == made_.end() ? "" : it->second;
  }
  const std::string& remember(const ir::Value* v, std::string fn) { return made_[v] = std::move(fn); }
  // The read functions `other` made for values the group's prologue does not compute.
  void inherit_reads(const Builder& other, const DispatchGroup& group) {
    for (const auto& [v, fn] : other.made_)
      if (v->producer == nullptr || !contains(group.prologue, v->producer)) made_[v] = fn;
  }

  uint32_t next() const { return next_; }
  FusedCode& code() { return code_; }
  const KernelContext& ctx() const { return ctx_; }
  const std::string& prefix() const { return prefix_; }

 private:
  FusedCode& code_;
  uint32_t next_;
  const KernelContext& ctx_;
  std::string prefix_;
  std::map<const ir::Value*, std::string> made_;
};

// "c" such that element i of a quantize/dequantize operand belongs to channel c (0 per tensor).
std::string channel_expr(const ir::Op& op, const std::string& i) {
  const ir::Value* scale = op.operand(1);
  const Shape& shape = op.operand(0)->type.shape;
  if (scale->type.numel() == 1) return "0u";
  int64_t axis = op.attr_int("axis");
  if (axis < 0) axis += int64_t(shape.size());
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return cat("((", i, " / ", inner, "u) % ", shape[size_t(axis)], "u)");
}

// The elementwise helpers (vkc_max, vkc_sigmoid, ...) behind an include guard: a prologue and an
// epilogue of the same kernel may both need them.
std::string guarded_math(const std::set<DType>& types) {
  auto guarded = [](const std::string& name, const std::string& text) {
    return cat("#ifndef ", name, "\n#define ", name, "\n", text, "\n#endif\n");
  };
  std::string s = guarded("VKC_ELEMENTWISE_MATH", elementwise_math({}));
  if (types.count(DType::i64))
    s += guarded("VKC_ELEMENTWISE_MATH_I64", shader_source("elementwise_math_i64.glsl"));
  return s;
}

bool is_elementwise_math(const ir::Op& op) { return op_codegen(op.kind).prologue_math; }


std::string prologue_fn(Builder& b, const DispatchGroup& group, const ir::Value* v, const std::string& what);

// Prologue elementwise op: element i of its result from element i (or the broadcast index) of
// each operand, each through its own prologue function.
std::string elementwise_prologue_fn(Builder& b, const DispatchGroup& group, const ir::Value* v,
                                    const std::string& what) {
  const ir::Op& op = *v->producer;
  const Shape& out = v->type.shape;
  std::string body;
  bool decoded = false;
  std::vector<std::string> args;
  for (const ir::Value* x : op.operands) {
    if (inlined_as_literal(x)) {
      args.push_back(literal_of(x));
      continue;
    }
    std::string index = "i";
    if (x->type.shape != out) {
      if (!decoded) body += unravel(out, "i", "c");
      decoded = true;
      index = broadcast_index(x->type.shape, out, "c");
    }
    args.push_back(cat(prologue_fn(b, group, x, what), "(", index, ")"));
  }
  std::string fn = cat(b.prefix(), "v", v->id);
  std::string ct = glsl_compute_type(v->type.dtype);
  b.code().functions += cat(ct, " ", fn, "(uint i) {\n", body, "  return ", elementwise_expr(op, args), ";\n}\n");
  return fn;
}

// Prologue: the function computing element i of value v.
std::string prologue_fn_once(Builder& b, const DispatchGroup& group, const ir::Value* v, const std::string& what);

std::string prologue_fn(Builder& b, const DispatchGroup& group, const ir::Value* v, const std::string& what) {
  if (std::string fn = b.made(v); !fn.empty()) return fn;
  return b.remember(v, prologue_fn_once(b, group, v, what));
}

bool index_map(const ir::Op& op) {
  switch (op_codegen(op.kind).prologue) {
    case Prologue::View:
    case Prologue::Transpose:
    case Prologue::Slice:
    case Prologue::Broadcast:
    case Prologue::Reverse: return true;
    default: return false;
  }
}

// The index maps of the prologue in a row in front of `v`, down to the first value that is not
// one's result, as one strided view of that value (codegen/strided_view.h), and how many maps they
// are; nullopt where one of them is a reshape that strides cannot express.
std::optional<std::pair<PrologueView, size_t>> index_map_run(const DispatchGroup& group, const ir::Value* v) {
  std::vector<const ir::Op*> run;
  const ir::Value* x = v;
  while (x->producer != nullptr && contains(group.prologue, x->producer) && index_map(*x->producer)) {
    run.push_back(x->producer);
    x = x->producer->operand(0);
  }
  std::reverse(run.begin(), run.end());  // source first
  std::optional<StridedView> view = compose_index_maps(x->type.shape, run);
  if (!view) return std::nullopt;
  return std::make_pair(PrologueView{x, std::move(*view)}, run.size());
}

// Two or more index maps in a row, composed (one alone needs no composing).
std::optional<PrologueView> strided_run(const DispatchGroup& group, const ir::Value* v) {
  auto run = index_map_run(group, v);
  if (!run || run->second < 2) return std::nullopt;
  return std::move(run->first);
}

}  // namespace

std::optional<PrologueView> prologue_view(const DispatchGroup& group, const ir::Value* operand) {
  auto run = index_map_run(group, operand);
  if (!run) return std::nullopt;
  const ir::Value* source = run->first.source;
  if (source->producer != nullptr && contains(group.prologue, source->producer)) return std::nullopt;  // computed
  return std::move(run->first);
}

namespace {

// An element index as GLSL uint arithmetic: negative strides wrap modulo 2^32, and the sum is the
// true index, which lies in [0, 2^32) (check_32bit).
std::string strided_index(const StridedView& view) {
  auto u32 = [](int64_t x) { return cat(uint64_t(x) & 0xffffffffull, "u"); };
  std::string e = u32(view.offset);
  for (size_t d = 0; d < view.shape.size(); ++d)
    if (view.strides[d] != 0 && view.shape[d] != 1) e += cat(" + c", d, " * ", u32(view.strides[d]));
  return e;
}

std::string prologue_fn_once(Builder& b, const DispatchGroup& group, const ir::Value* v, const std::string& what) {
  const ir::Op* op = v->producer;
  if (op == nullptr || !contains(group.prologue, op)) return b.read_external(v, what);
  if (is_elementwise_math(*op)) return elementwise_prologue_fn(b, group, v, what);
  if (auto run = strided_run(group, v)) {
    const std::string src = prologue_fn(b, group, run->source, what);
    const std::string fn = cat(b.prefix(), "v", v->id);
    b.code().functions += cat(glsl_compute_type(v->type.dtype), " ", fn, "(uint i) {\n", unravel(v->type.shape, "i", "c"),
                              "  return ", src, "(", strided_index(run->view), ");\n}\n");
    return fn;
  }
  std::string src = prologue_fn(b, group, op->operand(0), what);
  std::string fn = cat(b.prefix(), "v", v->id);
  std::string ct = glsl_compute_type(v->type.dtype);
  const Shape& out = v->type.shape;
  const Shape& in = op->operand(0)->type.shape;
  std::vector<int64_t> in_strides = shape_strides(in);
  std::string body;
  auto linear = [&](const std::vector<std::string>& coords) {
    std::string e = "0u";
    for (size_t d = 0; d < coords.size(); ++d) e += cat(" + ", coords[d], " * ", in_strides[d], "u");
    return e;
  };
  switch (op_codegen(op->kind).prologue) {
    case Prologue::None: throw Error(cat("internal: ", op->describe(), " cannot be fused into a prologue"));
    case Prologue::View: body = cat("  return ", src, "(i);\n"); break;
    case Prologue::Reverse: {
      body = unravel(out, "i", "c");
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) coords.push_back(cat("c", d));
      for (int64_t a : op->attr_ints("axes")) {
        if (a < 0) a += int64_t(out.size());
        coords[size_t(a)] = cat("(", out[size_t(a)] - 1, "u - c", a, ")");
      }
      body += cat("  return ", src, "(", linear(coords), ");\n");
      break;
    }
    case Prologue::Transpose: {
      body = unravel(out, "i", "c");
      const std::vector<int64_t>& perm = op->attr_ints("perm");
      std::vector<std::string> coords(in.size());
      for (size_t d = 0; d < out.size(); ++d) coords[size_t(perm[d])] = cat("c", d);
      body += cat("  return ", src, "(", linear(coords), ");\n");
      break;
    }
    case Prologue::Pad: {
      body = unravel(out, "i", "c");
      const std::vector<int64_t>& p = op->attr_ints("pads");
      std::string fill = cat(ct, "(", glsl_literal(v->type.dtype, op->attr_float("value")), ")");
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) {
        if (p[d] == 0 && p[out.size() + d] == 0) {
          coords.push_back(cat("c", d));
          continue;
        }
        body += cat("  int p", d, " = int(c", d, ") - ", p[d], ";\n  if (p", d, " < 0 || p", d, " >= ", in[d],
                    ") return ", fill, ";\n");
        coords.push_back(cat("uint(p", d, ")"));
      }
      body += cat("  return ", src, "(", linear(coords), ");\n");
      break;
    }
    case Prologue::Slice: {
      // Input coordinate start + c * step on each sliced axis, with the reference's (ONNX's)
      // start normalization; the output shape already holds the clamped ends.
      body = unravel(out, "i", "c");
      std::vector<std::string> coords;
      for (size_t d = 0; d < out.size(); ++d) coords.push_back(cat("c", d));
      for (const ir::SlicedAxis& s : ir::sliced_axes(*op, in))
        coords[s.axis] = s.step > 0 ? cat("(", s.start, "u + c", s.axis, " * ", s.step, "u)")
                                    : cat("(", s.start, "u - c", s.axis, " * ", -s.step, "u)");
      body += cat("  return ", src, "(", linear(coords), ");\n");
      break;
    }
    case Prologue::Broadcast: {
      // numpy broadcasting: the operand's dims align with the result's last ones; a dim of 1 is
      // read at 0 whatever the result's coordinate.
      body = unravel(out, "i", "c");
      const size_t lead = out.size() - in.size();
      std::vector<std::string> coords;
      for (size_t d = 0; d < in.size(); ++d) coords.push_back(in[d] == 1 ? std::string("0u") : cat("c", d + lead));
      body += cat("  return ", src, "(", linear(coords), ");\n");
      break;
    }
    case Prologue::FloatCast:
      body = cat("  return ", cast_expr(cat(src, "(i)"), op->operand(0)->type.dtype, v->type.dtype), ";\n");
      break;
    case Prologue::Dequantize: {
      std::string c = channel_expr(*op, "i");
      std::string scale = b.parameter(op->operand(1), c, what);
      std::string zp = op->num_operands() > 2 ? b.parameter(op->operand(2), c, what) : "0";
      body = cat("  return float(", src, "(i) - ", zp, ") * ", scale, ";\n");
      break;
    }
  }
  b.code().functions += cat(ct, " ", fn, "(uint i) {\n", body, "}\n");
  return fn;
}

// The tensor a prologue of elementwise math reads at the operand's own element index (through
// that math only), where there is one; its other reads are broadcast parameters.
const ir::Value* root_candidate(const DispatchGroup& group, const ir::Value* v) {
  const ir::Op* op = v->producer;
  if (op == nullptr || !contains(group.prologue, op) || !is_elementwise_math(*op)) return nullptr;
  for (const ir::Value* x : op->operands) {
    if (inlined_as_literal(x) || x->type.shape != v->type.shape) continue;
    if (x->producer == nullptr || !contains(group.prologue, x->producer)) return x;
    if (const ir::Value* r = root_candidate(group, x)) return r;
  }
  return nullptr;
}

const ir::Value* deferrable_root(const DispatchGroup& group, const ir::Value* v) {
  const ir::Value* root = root_candidate(group, v);
  if (root == nullptr) return nullptr;
  // Every prologue value computed from the root must be so elementwise at the same index: a read
  // of it anywhere else (a broadcast, a transpose) would need another element than the raw one.
  std::set<const ir::Value*> from_root{root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const ir::Op* op : group.prologue) {
      const ir::Value* r = op->result();
      if (from_root.count(r) || !std::any_of(op->operands.begin(), op->operands.end(),
                                              [&](const ir::Value* x) { return from_root.count(x) > 0; }))
        continue;
      if (!is_elementwise_math(*op) || r->type.shape != v->type.shape) return nullptr;
      for (const ir::Value* x : op->operands)
        if (from_root.count(x) && x->type.shape != r->type.shape) return nullptr;
      from_root.insert(r);
      grew = true;
    }
  }
  return root;
}

}  // namespace

bool prologue_fusible(const ir::Op& op) {
  switch (op_codegen(op.kind).prologue) {
    case Prologue::None: return false;
    case Prologue::View:
    case Prologue::Reverse:
    case Prologue::Transpose:
    case Prologue::Pad:
    case Prologue::Slice:
    case Prologue::Broadcast:
    case Prologue::Dequantize: return true;
    case Prologue::FloatCast: return is_float(op.result()->type.dtype);
  }
  return false;
}

bool elementwise_prologue_fusible(const ir::Op& op) {
  if (op.results.size() != 1 || !is_elementwise_math(op) || !is_float(op.result()->type.dtype)) return false;
  for (const ir::Value* x : op.operands)
    if (!is_float(x->type.dtype)) return false;
  return true;
}

bool epilogue_fusible(const ir::Op& op) {
  if (op.results.size() != 1) return false;
  switch (op_codegen(op.kind).epilogue) {
    case Epilogue::None: return false;
    case Epilogue::Always: return true;
    case Epilogue::FloatResult: return is_float(op.result()->type.dtype);
  }
  return false;
}

const ir::Value* fused_result(const DispatchGroup& group) {
  return group.epilogue.empty() ? group.anchor->result() : group.epilogue.back()->result();
}

uint32_t fused_binding_count(const DispatchGroup& group) {
  uint32_t n = 1;  // the output
  for (const ir::Op* op : group.ops)
    for (const ir::Value* v : op->operands) {
      bool inside = v->producer != nullptr && contains(group.ops, v->producer);
      if (!inside && (op == group.anchor || !inlined_as_literal(v))) ++n;
    }
  return n;
}

FusedCode operand_loader(const DispatchGroup& group, const ir::Value* operand, const std::string& name,
                         uint32_t first_binding, const KernelContext& ctx, bool defer) {
  FusedCode code;
  Builder b(code, first_binding, ctx, name + "_");
  std::string what = group.anchor->describe();
  std::string fn = prologue_fn(b, group, operand, what);
  std::string ct = glsl_compute_type(operand->type.dtype);
  code.functions += cat(ct, " ", name, "(uint i) { return ", fn, "(i); }\n");
  if (const ir::Value* root = defer ? deferrable_root(group, operand) : nullptr) {
    // The same chain once more, its root read replaced by a private variable that name_fin sets
    // (the compiler inlines it all; the root is read at element i only, deferrable_root).
    Builder d(code, b.next(), ctx, name + "_fin_");
    d.inherit_reads(b, group);
    const std::string rt = glsl_compute_type(root->type.dtype), raw = name + "_rawv";
    code.functions += cat(rt, " ", raw, ";\n", rt, " ", name, "_root(uint i) { return ", raw, "; }\n");
    d.remember(root, name + "_root");
    std::string fin = prologue_fn(d, group, operand, what);
    check(d.next() == b.next(), "internal: ", what, ": a deferred prologue read another tensor");
    code.functions += cat(rt, " ", name, "_raw(uint i) { return ", b.made(root), "(i); }\n", ct, " ", name, "_fin(",
                          rt, " raw, uint i) {\n  ", raw, " = raw;\n  return ", fin, "(i);\n}\n");
    code.deferred = true;
  }
  bool math = std::any_of(group.prologue.begin(), group.prologue.end(),
                          [](const ir::Op* op) { return is_elementwise_math(*op); });
  if (math) code.functions = guarded_math(code.types) + code.functions;  // before its first use
  return code;
}

std::optional<StridedView> epilogue_permutation(const ir::Value* anchor_result, const std::vector<const ir::Op*>& maps) {
  const Shape& shape = anchor_result->type.shape;
  std::optional<StridedView> v = compose_index_maps(shape, maps);
  if (!v || v->offset != 0) return std::nullopt;
  // A permutation of the anchor's contiguous strides: sorted, each is the one before times its
  // extent (dims of 1 aside), and together they cover every element once.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, extent)
  for (size_t d = 0; d < v->shape.size(); ++d)
    if (v->shape[d] != 1) dims.push_back({v->strides[d], v->shape[d]});
  std::sort(dims.begin(), dims.end());
  int64_t next = 1;
  for (const auto& [stride, extent] : dims) {
    if (stride != next) return std::nullopt;
    next *= extent;
  }
  if (next != anchor_result->type.numel()) return std::nullopt;
  return v;
}

FusedCode result_store(const DispatchGroup& group, uint32_t first_binding, const KernelContext& ctx, bool quads) {
  FusedCode code;
  Builder b(code, first_binding, ctx, "epi_");
  std::string what = group.anchor->describe();
  const ir::Value* anchor_result = group.anchor->result();
  std::map<const ir::Value*, std::string> names{{anchor_result, "acc"}};
  std::string body;
  // store_result4 (FusedCode::quads): the same chain on elements i..i+3 at once.
  std::map<const ir::Value*, std::array<std::string, 4>> names4{{anchor_result, {"acc[0]", "acc[1]", "acc[2]", "acc[3]"}}};
  std::string body4;
  // Leading index maps: element i of the anchor's result goes to index `idx` of their result.
  std::string idx = "i";
  size_t first = 0;
  std::vector<const ir::Op*> maps;
  while (first < group.epilogue.size() &&
         (is_view_op(group.epilogue[first]->kind) || group.epilogue[first]->kind == ir::OpKind::Transpose))
    maps.push_back(group.epilogue[first++]);
  if (std::any_of(maps.begin(), maps.end(), [](const ir::Op* op) { return op->kind == ir::OpKind::Transpose; })) {
    std::optional<StridedView> v = epilogue_permutation(anchor_result, maps);
    check(v.has_value(), what, ": its epilogue's index maps are not a permutation of its result");
    // j = sum over the result's dims of ((i / anchor stride) % extent) * result stride, cheaper
    // where it can be: the innermost dims that keep their place (attention's head dim) are
    // i % their size, the outermost anchor dim needs no modulo, a stride of 1 no division.
    const StridedView out = contiguous_view(v->shape);
    const int64_t numel = anchor_result->type.numel();
    int64_t inner = 1;
    std::vector<bool> done(v->shape.size(), false);
    for (size_t d = v->shape.size(); d-- > 0;) {
      if (v->shape[d] == 1) {
        done[d] = true;
        continue;
      }
      if (v->strides[d] != inner || out.strides[d] != inner) break;
      inner *= v->shape[d];
      done[d] = true;
    }
    std::string e = inner > 1 ? cat("i % ", inner, "u") : "0u";
    for (size_t d = 0; d < v->shape.size(); ++d) {
      if (done[d]) continue;
      std::string q = v->strides[d] == 1 ? "i" : cat("(i / ", v->strides[d], "u)");
      if (v->strides[d] * v->shape[d] != numel) q = cat("(", q, " % ", v->shape[d], "u)");
      e += cat(" + ", q, " * ", out.strides[d], "u");
    }
    body += cat("  uint j = ", e, ";\n");
    idx = "j";
    quads = false;  // i..i+3 land apart
  }
  for (size_t k = 0; k < group.epilogue.size(); ++k) {
    const ir::Op* op = group.epilogue[k];
    const ir::Value* r = op->result();
    if (k < first || is_view_op(op->kind)) {  // index maps: the same value, elsewhere
      names[r] = names.at(op->operand(0));
      if (auto q = names4.find(op->operand(0)); q != names4.end()) names4[r] = q->second;
      continue;
    }
    std::string coords = cat("e", k, "_");
    bool decoded = false;
    const int64_t run = quad_run(r->type.shape);
    std::array<std::string, 4> args4;  // the last side operand's reads for elements i..i+3
    auto arg = [&](const ir::Value* v) -> std::string {
      if (auto it = names.find(v); it != names.end()) {
        if (auto q = names4.find(v); q != names4.end()) args4 = q->second;
        else quads = false;
        return it->second;
      }
      if (inlined_as_literal(v)) {
        args4.fill(literal_of(v));
        return literal_of(v);
      }
      std::string index = idx;
      if (v->type.shape != r->type.shape) {
        if (!decoded) {
          body += unravel(r->type.shape, idx, coords);
          body4 += unravel(r->type.shape, idx, coords);
        }
        decoded = true;
        index = broadcast_index(v->type.shape, r->type.shape, coords);
      }
      std::string fn = b.read_external(v, what);
      switch (quad_read(v->type.shape, r->type.shape, run)) {
        case QuadRead::same:
          args4.fill(cat(fn, "(", index, ")"));
          break;
        case QuadRead::consecutive:
          if (!quads) break;
          if (v->type.dtype == DType::f32 || v->type.dtype == DType::f16) {
            // One 16-byte (8-byte) read: index is a multiple of 4.
            const uint32_t binding = b.next() - 1;
            std::string q = cat("q", binding);
            const bool half = v->type.dtype == DType::f16;
            code.buffers += cat("layout(std430, set = 0, binding = ", binding, ") restrict readonly buffer Buffer", binding,
                                "q { ", half ? "f16vec4" : "vec4", " data[]; } epi_quad", binding, ";\n");
            body4 += cat("  vec4 ", q, "_", k, " = vec4(epi_quad", binding, ".data[(", index, ") >> 2u]);\n");
            for (int c = 0; c < 4; ++c) args4[c] = cat(q, "_", k, "[", c, "]");
          } else {
            for (int c = 0; c < 4; ++c) args4[c] = cat(fn, "(", index, " + ", c, "u)");
          }
          break;
        case QuadRead::none:
          quads = false;
          break;
      }
      return cat(fn, "(", index, ")");
    };
    std::string value = cat("v", r->id);
    if (op->kind == ir::OpKind::Quantize) {
      quads = false;
      std::string c = channel_expr(*op, idx);
      std::string x = arg(op->operand(0));
      std::string scale = b.parameter(op->operand(1), c, what);
      std::string zp = op->num_operands() > 2 ? b.parameter(op->operand(2), c, what) : "0";
      DType rt = r->type.dtype;
      double lo = rt == DType::i8 ? -128 : 0, hi = rt == DType::i8 ? 127 : 255;
      // As the quantize kernel: the quotient in f32, ties to even, NaN stores 0.
      body += cat("  float q", k, " = roundEven(", x, " / ", scale, ") + float(", zp, ");\n",
                  "  int ", value, " = isnan(q", k, ") ? 0 : int(clamp(q", k, ", ", lo, ".0, ", hi, ".0));\n");
    } else {
      std::vector<std::string> args;
      std::vector<std::array<std::string, 4>> quad_args;
      for (const ir::Value* v : op->operands) {
        args.push_back(arg(v));
        quad_args.push_back(args4);
      }
      const std::string type = glsl_compute_type(r->type.dtype);
      body += cat("  ", type, " ", value, " = ", elementwise_expr(*op, args), ";\n");
      if (run == 0) quads = false;
      if (quads)
        for (int c = 0; c < 4; ++c) {
          std::vector<std::string> a;
          for (const auto& q : quad_args) a.push_back(q[c]);
          body4 += cat("  ", type, " ", value, "_", c, " = ", elementwise_expr(*op, a), ";\n");
          names4[r][c] = cat(value, "_", c);
        }
    }
    names[r] = value;
  }
  const ir::Value* out = fused_result(group);
  DType t = out->type.dtype;
  uint32_t ob = b.next();
  std::string v = names.at(out);
  if (is_8bit(t) && !gpu_storable(t, ctx.target)) {
    // No 8-bit stores: each invocation owns one byte of a shared word, so it clears and sets that
    // byte with two atomics; the other bytes' owners touch disjoint bits, in any order.
    code.buffers += cat("layout(std430, set = 0, binding = ", ob, ") restrict buffer Buffer", ob,
                        " { uint data[]; } fused_out;\n");
    body += cat("  uint sh = (", idx, " & 3u) * 8u;\n  atomicAnd(fused_out.data[", idx, " >> 2u], ~(0xffu << sh));\n",
                "  atomicOr(fused_out.data[", idx, " >> 2u], (uint(", v, ") & 0xffu) << sh);\n");
  } else {
    require_storable(t, ctx.target, what);
    code.types.insert(t);
    code.buffers += glsl_buffer(ob, t, true, "fused_out");
    body += cat("  fused_out.data[", idx, "] = ", glsl_storage_type(t), "(", v, ");\n");
    if (quads && (t == DType::f32 || t == DType::f16)) {
      const std::array<std::string, 4>& q = names4.at(out);
      const std::string vt = t == DType::f16 ? "f16vec4" : "vec4";
      code.buffers += cat("layout(std430, set = 0, binding = ", ob, ") restrict writeonly buffer Buffer", ob, "q { ", vt,
                          " data[]; } fused_out_quad;\n");
      body4 += cat("  fused_out_quad.data[i >> 2u] = ", vt, "(vec4(", q[0], ", ", q[1], ", ", q[2], ", ", q[3], "));\n");
      code.quads = true;
    }
  }
  code.bindings.push_back({ctx.tensor(out), true});
  code.bytes += double(out->type.size_bytes());
  // The elementwise helpers (vkc_max, vkc_sigmoid, ...) only when some op needs them.
  if (!group.epilogue.empty()) code.functions += guarded_math(code.types);
  code.functions += cat("void store_result(uint i, float acc) {\n", body, "}\n");
  if (code.quads) code.functions += cat("void store_result4(uint i, vec4 acc) {\n", body4, "}\n");
  return code;
}

}  // namespace vkc::codegen
