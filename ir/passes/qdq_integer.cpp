// The QDQ form of an int8 conv or matmul,
//   quantize(conv(dequantize(x_q), dequantize(w_q)[, dequantize(b_i32)]), y_scale, y_zp)
//   quantize(matmul(dequantize(a_q), dequantize(b_q)), y_scale, y_zp)
// becomes the integer product with exact i32 sums and ONNX Runtime's requantization fused into it
// (QLinearConv / QLinearMatMul, which ORT's QDQ transformer turns this form into):
//   y_q = conv_integer(x_q, w_q, x_zp, w_zp[, b_i32]) {requantize_to, requantize_scale = M,
//                                                       requantize_zero_point = y_zp}
//   M[c] = float(float(x_scale * w_scale[c]) / y_scale)
// i.e. f32(f32(acc) * M[c]) rounded half to even, plus the zero point, saturated: ORT's requantize
// step by step, so the 8-bit outputs can match it bit for bit.
// Scales must be constants (per tensor; the weight's also per output channel / per column), zero
// points constants; anything else keeps the float form.
#include <cmath>
#include <optional>

#include "ir/passes.h"

namespace vkc::ir {
namespace {

const HostTensor* constant_of(const Value* v) {
  if (v == nullptr || v->producer == nullptr || v->producer->kind != OpKind::Constant) return nullptr;
  return v->producer->attr_tensor("value").get();
}

bool is_8bit(DType t) { return t == DType::i8 || t == DType::u8; }

// A dequantize whose scale (and zero point) are constants: the integer value and its parameters.
struct Dq {
  Value* q = nullptr;
  const HostTensor* scale = nullptr;
  const HostTensor* zp = nullptr;  // nullptr: 0
  Value* zp_value = nullptr;
  int64_t axis = 0;
};

std::optional<Dq> dequantize_of(const Value* v) {
  const Op* op = v->producer;
  if (op == nullptr || op->kind != OpKind::Dequantize) return std::nullopt;
  Dq d;
  d.q = op->operand(0);
  d.scale = constant_of(op->operand(1));
  if (d.scale == nullptr) return std::nullopt;
  if (op->num_operands() > 2) {
    d.zp_value = op->operand(2);
    d.zp = constant_of(d.zp_value);
    if (d.zp == nullptr) return std::nullopt;
  }
  d.axis = op->attr_int("axis");
  if (d.axis < 0) d.axis += d.q->type.rank();
  return d;
}

bool per_tensor(const HostTensor& t) { return t.numel() == 1; }

// A constant placed before `position` (the graph's order is its execution order).
Value* constant_before(Graph& g, Op* position, HostTensor data) {
  AttrMap attrs{{"value", std::make_shared<const HostTensor>(std::move(data))}};
  return g.insert_op(position, OpKind::Constant, {}, std::move(attrs))->result();
}

// The zero point operand of an integer product: the dequantize's own, or a scalar 0 of q's type.
Value* zero_point(Graph& g, Op* position, const Dq& d) {
  if (d.zp_value != nullptr) return d.zp_value;
  return constant_before(g, position, HostTensor(d.q->type.dtype, Shape{}));
}

// The single quantize consuming `v` (and nothing else consuming it), with a per-tensor scale.
Op* sole_quantize(const Graph& g, const Value* v) {
  std::vector<Op*> users = g.users(v);
  if (users.size() != 1 || g.is_output(v) || users[0]->kind != OpKind::Quantize) return nullptr;
  Op* q = users[0];
  const HostTensor* s = constant_of(q->operand(1));
  if (s == nullptr || !per_tensor(*s) || s->dtype() != DType::f32) return nullptr;
  if (q->num_operands() > 2 && constant_of(q->operand(2)) == nullptr) return nullptr;
  return q;
}

// M[c] = float(float(x_scale * w_scale[c]) / y_scale), in f32 as ORT computes it.
std::vector<double> requant_scale(const HostTensor& sx, const HostTensor& sw, const HostTensor& sy) {
  std::vector<double> m;
  float x = float(sx.get_f64(0)), y = float(sy.get_f64(0));
  for (int64_t c = 0; c < sw.numel(); ++c) {
    volatile float xw = x * float(sw.get_f64(c));  // two f32 roundings, not one fused
    m.push_back(double(float(xw / y)));
  }
  return m;
}

// The quantize's parameters become the integer product's requantize_* attributes.
void add_requantize(AttrMap& attrs, const Op& quantize, std::vector<double> m) {
  const Value* zp = quantize.num_operands() > 2 ? quantize.operand(2) : nullptr;
  attrs["requantize_to"] = std::string(dtype_name(quantize.result()->type.dtype));
  attrs["requantize_scale"] = std::move(m);
  attrs["requantize_zero_point"] = zp ? constant_of(zp)->get_i64(0) : int64_t(0);
}

bool default_layouts(const Op& conv) {
  return !conv.has_attr("input_layout") && !conv.has_attr("filter_layout") && !conv.has_attr("output_layout");
}

bool rewrite_conv(Graph& g, Op* conv) {
  if (conv->kind != OpKind::Conv || !default_layouts(*conv)) return false;
  if (conv->result()->type.dtype != DType::f32) return false;
  std::optional<Dq> x = dequantize_of(conv->operand(0)), w = dequantize_of(conv->operand(1));
  if (!x || !w || !is_8bit(x->q->type.dtype) || !is_8bit(w->q->type.dtype)) return false;
  if (!per_tensor(*x->scale) || (x->zp && !per_tensor(*x->zp))) return false;
  const int64_t channels = conv->result()->type.shape[1];
  bool w_per_channel = !per_tensor(*w->scale);
  if (w_per_channel && (w->axis != 0 || w->scale->numel() != channels)) return false;
  if (w->zp && !per_tensor(*w->zp) && (w->axis != 0 || w->zp->numel() != channels)) return false;
  std::optional<Dq> b;
  if (conv->num_operands() > 2) {
    b = dequantize_of(conv->operand(2));
    if (!b || b->q->type.dtype != DType::i32) return false;
    if (b->zp) {
      for (int64_t i = 0; i < b->zp->numel(); ++i)
        if (b->zp->get_i64(i) != 0) return false;
    }
  }
  Op* quantize = sole_quantize(g, conv->result());
  if (quantize == nullptr) return false;
  AttrMap attrs;
  for (const char* a : {"strides", "dilations", "pads", "groups"})
    if (conv->has_attr(a)) attrs[a] = conv->attrs.at(a);
  std::vector<Value*> operands{x->q, w->q, zero_point(g, conv, *x), zero_point(g, conv, *w)};
  if (b) operands.push_back(b->q);
  add_requantize(attrs, *quantize, requant_scale(*x->scale, *w->scale, *constant_of(quantize->operand(1))));
  Op* ci = g.insert_op(conv, OpKind::ConvInteger, operands, attrs, conv->name, conv->loc);
  g.replace_all_uses(quantize->result(), ci->result());
  return true;
}

bool rewrite_matmul(Graph& g, Op* mm) {
  if (mm->kind != OpKind::MatMul || mm->attr_bool("transpose_a") || mm->attr_bool("transpose_b")) return false;
  if (mm->result()->type.dtype != DType::f32) return false;
  std::optional<Dq> a = dequantize_of(mm->operand(0)), b = dequantize_of(mm->operand(1));
  if (!a || !b || !is_8bit(a->q->type.dtype) || !is_8bit(b->q->type.dtype)) return false;
  if (a->q->type.rank() < 2 || b->q->type.rank() < 2) return false;
  if (!per_tensor(*a->scale) || (a->zp && !per_tensor(*a->zp))) return false;
  const int64_t cols = mm->result()->type.shape.back();
  const int64_t b_cols = b->q->type.rank() - 1;  // per-column parameters run along b's last dim
  if (!per_tensor(*b->scale) && (b->axis != b_cols || b->scale->numel() != cols)) return false;
  if (b->zp && !per_tensor(*b->zp) && (b->axis != b_cols || b->zp->numel() != cols)) return false;
  Op* quantize = sole_quantize(g, mm->result());
  if (quantize == nullptr) return false;
  AttrMap attrs;
  add_requantize(attrs, *quantize, requant_scale(*a->scale, *b->scale, *constant_of(quantize->operand(1))));
  Op* mi = g.insert_op(mm, OpKind::MatMulInteger, {a->q, b->q, zero_point(g, mm, *a), zero_point(g, mm, *b)},
                       attrs, mm->name, mm->loc);
  g.replace_all_uses(quantize->result(), mi->result());
  return true;
}

bool rewrite(Graph& g) {
  bool changed = false;
  for (Op* op : g.ops()) changed |= rewrite_conv(g, op) || rewrite_matmul(g, op);
  if (changed) g.remove_dead_ops();
  return changed;
}

}  // namespace

Pass qdq_to_integer_pass() {
  return {"qdq-to-integer", "quantize(conv|matmul(dequantize, dequantize)) -> integer product + requantize",
          rewrite};
}

}  // namespace vkc::ir
