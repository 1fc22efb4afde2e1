// The fp16 precision mode (CompileOptions precision fp16, docs/architecture.md "Precision"):
// float32 activations are stored as float16 and float32 weights are converted here, once, at
// compile time. Every kernel computes in f32 registers whatever its storage type
// (codegen/glsl_types.h: glsl_compute_type), so products are summed in f32 either way; what the
// mode changes is the bytes each tensor takes in memory.
//
// Ops are split in two sets:
// - fp16 ops: contractions, convs, pooling, data movement and elementwise math whose result is
//   bounded by (or smoothly follows) its inputs. Their f32 operands become f16, their f32 results
//   become f16.
// - every other op stays f32: those that need range or precision (softmax, normalizations,
//   reductions and means, cumsum, exp, log, pow), those whose result jumps where an input crosses
//   a point (comparisons, floor/ceil/round, sign, mod, argmax/argmin, sort and topk keys, max pool
//   indices, casts to integers), quantize/dequantize and attention (a softmax inside, and masks
//   of -1e9 that f16 cannot hold). An f16 operand of such an op gets a cast back to f32.
// Graph inputs and outputs keep their dtype: a cast after an input and before an output, which
// fusion puts into the first and last kernels (cast is a prologue and an epilogue op).
// Values of other dtypes (integers, bool, a model's own f16) are never touched.
#include <cmath>
#include <map>
#include <set>

#include "ir/passes.h"

namespace vkc::ir {
namespace {

constexpr double kF16Max = 65504.0;

bool runs_in_fp16(OpKind k) {
  switch (k) {
    case OpKind::Conv: case OpKind::ConvTranspose: case OpKind::Im2Col:
    case OpKind::MatMul: case OpKind::BatchMatMul: case OpKind::Gemm:
    case OpKind::ExpandShape: case OpKind::CollapseShape: case OpKind::Reshape:
    case OpKind::Transpose: case OpKind::Pad: case OpKind::Reverse: case OpKind::Slice:
    case OpKind::Concat: case OpKind::Broadcast: case OpKind::Resize:
    case OpKind::Gather: case OpKind::GatherElements: case OpKind::GatherND:
    case OpKind::ScatterND: case OpKind::ScatterElements:
    case OpKind::Neg: case OpKind::Abs: case OpKind::Relu: case OpKind::LeakyRelu: case OpKind::Clip:
    case OpKind::Sigmoid: case OpKind::Tanh: case OpKind::Sqrt: case OpKind::Erf: case OpKind::Gelu:
    case OpKind::HardSwish: case OpKind::Elu: case OpKind::Selu: case OpKind::Softplus:
    case OpKind::Mish: case OpKind::Sin: case OpKind::Cos:
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Max:
    case OpKind::Min: case OpKind::PRelu: case OpKind::Select:
    case OpKind::MaxPool: case OpKind::AvgPool:
      return true;
    default:
      return false;
  }
}

bool is_f32(const Value* v) { return v->type.dtype == DType::f32; }

// A constant f16 cannot hold (finite beyond 65504) keeps its consumer in f32: an f16 copy would
// read as infinity.
bool fits_f16(const Value* v) {
  if (v->producer == nullptr || v->producer->kind != OpKind::Constant) return true;
  const HostTensor& t = *v->producer->attr_tensor("value");
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = t.get_f64(i);
    if (std::isfinite(x) && std::abs(x) > kF16Max) return false;
  }
  return true;
}

bool moves_data(const Op& op) {
  OpCategory c = op.schema().category;
  return c == OpCategory::DataMovement || c == OpCategory::Reshape;
}

// Ops kept f32 although listed, so that the casts land where fusion can take them (a cast fuses
// into the prologue or epilogue of a conv, matmul, pool or reduction kernel, or into an
// elementwise chain, but not into a data-movement kernel):
// - data movement fed only by f32 graph inputs (the padding or slicing of an input image): the
//   cast moves to the first kernel that computes, instead of a dispatch of its own per input use;
// - data movement whose results only reach graph outputs (a transpose at the end): the cast moves
//   into the kernel that computes them;
// - an op whose f32 result is a graph output and also read by other ops: a result with several
//   users is stored by its own kernel, so its cast to f32 would be a dispatch of its own; computed
//   in f32 and stored once, its other users read it through a cast in their prologues.
std::set<const Op*> kept_f32_for_fusion(const Graph& g) {
  std::set<const Op*> kept;
  std::set<const Value*> from_inputs;
  for (const Value* in : g.inputs())
    if (is_f32(in)) from_inputs.insert(in);
  const std::vector<Op*> ops = g.ops();
  for (const Op* op : ops) {
    if (!moves_data(*op)) continue;
    bool any_float = false, all_inputs = true;
    for (const Value* v : op->operands)
      if (is_float(v->type.dtype)) {
        any_float = true;
        all_inputs &= from_inputs.count(v) > 0;
      }
    if (!any_float || !all_inputs) continue;
    kept.insert(op);
    for (const Value* r : op->results) from_inputs.insert(r);
  }
  std::set<const Op*> to_outputs;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const Op* op = *it;
    bool only_outputs = true, any = false;
    for (const Value* r : op->results) {
      if (!is_f32(r)) continue;
      any = true;
      for (const Op* u : g.users(r)) only_outputs &= to_outputs.count(u) > 0;
      only_outputs &= g.has_uses(r);
    }
    if (any && only_outputs && moves_data(*op)) {
      kept.insert(op);
      to_outputs.insert(op);
    }
  }
  for (const Op* op : ops)
    for (const Value* r : op->results)
      if (is_f32(r) && g.is_output(r) && !g.users(r).empty()) kept.insert(op);
  return kept;
}

bool convert(Graph& g) {
  // Which ops run in fp16: a listed kind with some f32 operand or result, and no constant operand
  // out of f16's range, unless kept f32 for fusion.
  const std::set<const Op*> kept = kept_f32_for_fusion(g);
  std::map<const Op*, bool> fp16;
  bool any = false;
  for (Op* op : g.ops()) {
    if (op->kind == OpKind::Constant || !runs_in_fp16(op->kind) || kept.count(op)) continue;
    bool has_f32 = false, fits = true;
    for (const Value* v : op->operands) {
      has_f32 |= is_f32(v);
      fits &= !is_f32(v) || fits_f16(v);
    }
    for (const Value* r : op->results) has_f32 |= is_f32(r);
    if (has_f32 && fits) fp16[op] = any = true;
  }
  // Attention stays f32 (its softmax), but its products may take float16 operands: say so, for
  // the kernel (tensor cores) to see whichever side of a kernel boundary the casts fuse into.
  for (Op* op : g.ops())
    if (op->kind == OpKind::Attention && !op->attr_bool("fp16_products")) {
      op->attrs["fp16_products"] = true;
      any = true;
    }
  if (!any) return false;

  // One cast (or converted constant) per value, shared by its users; except that a graph input
  // (or f32 data movement of one) gets a cast of its own for each kernel that would read it
  // through a prologue (conv, matmul, pooling, ...): a cast with several users is stored by a
  // dispatch of its own, whereas one per such user fuses into that user's kernel.
  using Key = std::pair<const Value*, const Op*>;
  std::map<Key, Value*> as_f16, as_f32;
  std::map<const Value*, bool> narrowed;  // results this pass retyped to f16
  auto cast = [&](Value* v, DType to, Op* before) {
    std::map<Key, Value*>& memo = to == DType::f16 ? as_f16 : as_f32;
    const bool own = (v->producer == nullptr || kept.count(v->producer)) && !is_elementwise(before->kind) &&
                     !moves_data(*before);
    const Key key{v, own ? before : nullptr};
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    Value* c = nullptr;
    if (to == DType::f16 && v->producer != nullptr && v->producer->kind == OpKind::Constant) {
      // Weights: converted here, round to nearest.
      const HostTensor& src = *v->producer->attr_tensor("value");
      HostTensor half(DType::f16, src.shape());
      for (int64_t i = 0; i < src.numel(); ++i) half.set_f64(i, src.get_f64(i));
      Op* k = g.insert_op(before, OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(half))}},
                          v->producer->name);
      c = k->result();
    } else {
      Op* k = g.insert_op(before, OpKind::Cast, {v}, {{"to", std::string(dtype_name(to))}}, "", before->loc);
      c = k->result();
    }
    if (!v->name.empty()) c->name = v->name + (to == DType::f16 ? ".f16" : ".f32");
    memo[key] = c;
    return c;
  };

  for (Op* op : g.ops()) {
    if (fp16.count(op)) {
      for (Value*& v : op->operands)
        if (is_f32(v)) v = cast(v, DType::f16, op);
      for (Value* r : op->results)
        if (is_f32(r)) {
          r->type.dtype = DType::f16;
          narrowed[r] = true;
        }
    } else if (op->kind != OpKind::Constant) {
      for (Value*& v : op->operands)
        if (narrowed.count(v) && !fp16.count(op)) v = cast(v, DType::f32, op);
    }
  }
  // Outputs keep the model's dtype: a cast appended at the end (an epilogue of the last kernel).
  for (GraphOutput& out : g.outputs())
    if (narrowed.count(out.value)) {
      Value* v = out.value;
      auto it = as_f32.find(Key{v, nullptr});
      Value* c = it != as_f32.end() ? it->second
                                    : g.insert_op(nullptr, OpKind::Cast, {v}, {{"to", std::string("f32")}}, "",
                                                  v->producer ? v->producer->loc : Location{})->result();
      as_f32[Key{v, nullptr}] = c;
      out.value = c;
    }
  g.remove_dead_ops();  // the f32 constants now used by no one
  return true;
}

}  // namespace

Pass convert_to_fp16_pass() {
  return {"convert-to-fp16",
          "store f32 activations and weights as f16 (precision fp16); range-sensitive ops stay f32",
          convert};
}

}  // namespace vkc::ir
