// Elementwise ops: unary math, cast, numpy-broadcast binary ops and select.
//
// Floats are computed in double and rounded once to the result type. Integers take an exact int64
// path (wrapping to the element width on store) so that i64 values beyond 2^53 and the
// truncating division are right.
#include <cmath>
#include <limits>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double unary_f64(const Op& op, double x) {
  switch (op.kind) {
    case OpKind::Neg: return -x;
    case OpKind::Abs: return std::fabs(x);
    // x < 0 (not x > 0) so NaN propagates instead of becoming 0.
    case OpKind::Relu: return x < 0 ? 0.0 : x;
    case OpKind::LeakyRelu: return x < 0 ? op.attr_float("alpha") * x : x;
    case OpKind::Clip: {
      if (op.has_attr("min") && x < op.attr_float("min")) return op.attr_float("min");
      if (op.has_attr("max") && x > op.attr_float("max")) return op.attr_float("max");
      return x;
    }
    case OpKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Exp: return std::exp(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Gelu: {
      const std::string& mode = op.attr_string("approximate");
      if (mode == "none") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
      if (mode == "tanh") {
        const double k = std::sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
      }
      fail(op, "attribute 'approximate' is '", mode, "', expected 'none' or 'tanh'");
    }
    case OpKind::HardSwish: {
      double r6 = x + 3.0;
      r6 = r6 < 0 ? 0.0 : (r6 > 6 ? 6.0 : r6);
      return x * r6 / 6.0;
    }
    default: break;
  }
  fail(op, "is not a unary op");
}

// Integer neg/abs/relu stay exact; the rest go through double (their results are not integers in
// general, and the verifier decides which dtypes they accept).
bool unary_int(OpKind kind, int64_t x, int64_t& out) {
  switch (kind) {
    case OpKind::Neg: out = int64_t(0ULL - uint64_t(x)); return true;
    case OpKind::Abs: out = x < 0 ? int64_t(0ULL - uint64_t(x)) : x; return true;
    case OpKind::Relu: out = x < 0 ? 0 : x; return true;
    default: return false;
  }
}

double binary_f64(OpKind kind, double a, double b) {
  switch (kind) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return a / b;
    case OpKind::Max: return std::isnan(a) || std::isnan(b) ? kNaN : (a > b ? a : b);
    case OpKind::Min: return std::isnan(a) || std::isnan(b) ? kNaN : (a < b ? a : b);
    case OpKind::Pow: return std::pow(a, b);
    default: return kNaN;
  }
}

// a^b with wrapping multiplication; negative exponents truncate 1/a^|b| toward zero (so only
// |a| == 1 gives a nonzero result; 0^negative is 0 like integer division by zero).
int64_t int_pow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, base = uint64_t(a);
  while (b > 0) {
    if (b & 1) result *= base;
    base *= base;
    b >>= 1;
  }
  return int64_t(result);
}

// Wrapping arithmetic through uint64 (signed overflow is UB in C++); the store to narrower types
// truncates to the element width, the two's complement wrap the GPU kernels also produce.
int64_t binary_i64(OpKind kind, int64_t a, int64_t b) {
  switch (kind) {
    case OpKind::Add: return int64_t(uint64_t(a) + uint64_t(b));
    case OpKind::Sub: return int64_t(uint64_t(a) - uint64_t(b));
    case OpKind::Mul: return int64_t(uint64_t(a) * uint64_t(b));
    case OpKind::Div:
      if (b == 0) return 0;
      if (b == -1) return int64_t(0ULL - uint64_t(a));  // INT64_MIN / -1 wraps
      return a / b;                                      // C++ truncates toward zero
    case OpKind::Max: return a > b ? a : b;
    case OpKind::Min: return a < b ? a : b;
    case OpKind::Pow: return int_pow(a, b);
    default: return 0;
  }
}

}  // namespace

Results eval_unary(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  HostTensor out(types[0].dtype, types[0].shape);
  if (out.numel() != x.numel()) fail(op, "result and operand element counts differ");
  bool integer = !is_float(x.dtype()) && !is_float(out.dtype());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t r = 0;
    if (integer && unary_int(op.kind, x.get_i64(i), r))
      out.set_i64(i, r);
    else
      out.set_f64(i, unary_f64(op, x.get_f64(i)));
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
      out.set_i64(i, binary_i64(op.kind, a.get_i64(ia), b.get_i64(ib)));
    else
      out.set_f64(i, binary_f64(op.kind, a.get_f64(ia), b.get_f64(ib)));
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
