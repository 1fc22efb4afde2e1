// Elementwise ops: unary math, cast, numpy-broadcast binary ops and select. The per-element math
// of each unary and binary op is named by its row in ir/op_rules.cpp.
#include "ir/interpreter_ops.h"
#include "ir/op_rules.h"

namespace vkc::ir::interp {

Results eval_unary(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  HostTensor out(types[0].dtype, types[0].shape);
  if (out.numel() != x.numel()) fail(op, "result and operand element counts differ");
  const ElementwiseMath& math = op_rules(op.kind).math;
  if (math.unary == nullptr) fail(op, "is not a unary op");
  bool exact = !is_float(x.dtype()) && !is_float(out.dtype()) && math.unary_exact != nullptr;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (exact)
      out.set_i64(i, math.unary_exact(x.get_i64(i)));
    else
      out.set_f64(i, math.unary(op, x.get_f64(i)));
  }
  return {std::move(out)};
}

Results eval_cast(const Op& /*op*/, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  HostTensor out(types[0].dtype, types[0].shape);
  DType to = out.dtype();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (to == DType::boolean) {
      // IEEE: NaN != 0, so NaN casts to true (HostTensor::set_f64 would say false).
      bool v = is_float(x.dtype()) ? x.get_f64(i) != 0.0 : x.get_i64(i) != 0;
      out.set_i64(i, v ? 1 : 0);
    } else if (is_float(x.dtype())) {
      out.set_f64(i, x.get_f64(i));  // floats round; ints saturate then truncate, NaN -> 0
    } else if (is_float(to)) {
      out.set_f64(i, double(x.get_i64(i)));
    } else {
      out.set_i64(i, x.get_i64(i));  // int -> int wraps to the target width
    }
  }
  return {std::move(out)};
}

Results eval_binary(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& a = *in[0];
  const HostTensor& b = *in[1];
  HostTensor out(types[0].dtype, types[0].shape);
  const ElementwiseMath& math = op_rules(op.kind).math;
  if (math.binary == nullptr || math.binary_exact == nullptr) fail(op, "is not a binary op");
  bool integer = !is_float(a.dtype()) && !is_float(b.dtype()) && !is_float(out.dtype());
  bool same = a.shape() == out.shape() && b.shape() == out.shape();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t ia = i, ib = i;
    if (!same) {
      std::vector<int64_t> index = unravel(i, out.shape());
      ia = broadcast_offset(a.shape(), out.shape(), index);
      ib = broadcast_offset(b.shape(), out.shape(), index);
    }
    if (integer)
      out.set_i64(i, math.binary_exact(a.get_i64(ia), b.get_i64(ib)));
    else
      out.set_f64(i, math.binary(a.get_f64(ia), b.get_f64(ib)));
  }
  return {std::move(out)};
}

Results eval_select(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& cond = *in[0];
  const HostTensor& t = *in[1];
  const HostTensor& f = *in[2];
  HostTensor out(types[0].dtype, types[0].shape);
  if (t.dtype() != out.dtype() || f.dtype() != out.dtype())
    fail(op, "true_value and false_value must both have the result dtype ", dtype_name(out.dtype()));
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> index = unravel(i, out.shape());
    bool c = cond.get_f64(broadcast_offset(cond.shape(), out.shape(), index)) != 0.0;
    const HostTensor& src = c ? t : f;
    copy_element(out, i, src, broadcast_offset(src.shape(), out.shape(), index));
  }
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
