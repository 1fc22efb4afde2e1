#include "ir/elementwise_math.h"

#include <cmath>
#include <limits>

#include "support/error.h"

namespace vkc::ir::math {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t wrap_neg(int64_t x) { return int64_t(0ULL - uint64_t(x)); }

}  // namespace

double neg(const Op&, double x) { return -x; }
double abs(const Op&, double x) { return std::fabs(x); }
// x < 0 (not x > 0) so NaN propagates instead of becoming 0.
double relu(const Op&, double x) { return x < 0 ? 0.0 : x; }
double leaky_relu(const Op& op, double x) { return x < 0 ? op.attr_float("alpha") * x : x; }
double clip(const Op& op, double x) {
  if (op.has_attr("min") && x < op.attr_float("min")) return op.attr_float("min");
  if (op.has_attr("max") && x > op.attr_float("max")) return op.attr_float("max");
  return x;
}
double sigmoid(const Op&, double x) { return 1.0 / (1.0 + std::exp(-x)); }
double tanh(const Op&, double x) { return std::tanh(x); }
double exp(const Op&, double x) { return std::exp(x); }
double log(const Op&, double x) { return std::log(x); }
double sqrt(const Op&, double x) { return std::sqrt(x); }
double erf(const Op&, double x) { return std::erf(x); }
double gelu(const Op& op, double x) {
  const std::string& mode = op.attr_string("approximate");
  if (mode == "none") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  if (mode == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  throw Error(cat(op.describe(), ": attribute 'approximate' is '", mode, "', expected 'none' or 'tanh'"));
}
double hardswish(const Op&, double x) {
  double r6 = x + 3.0;
  r6 = r6 < 0 ? 0.0 : (r6 > 6 ? 6.0 : r6);
  return x * r6 / 6.0;
}

int64_t neg_i64(int64_t x) { return wrap_neg(x); }
int64_t abs_i64(int64_t x) { return x < 0 ? wrap_neg(x) : x; }
int64_t relu_i64(int64_t x) { return x < 0 ? 0 : x; }

double add(double a, double b) { return a + b; }
double sub(double a, double b) { return a - b; }
double mul(double a, double b) { return a * b; }
double div(double a, double b) { return a / b; }
double max(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : (a > b ? a : b); }
double min(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : (a < b ? a : b); }
double pow(double a, double b) { return std::pow(a, b); }

int64_t add_i64(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t sub_i64(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t mul_i64(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
int64_t div_i64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_neg(a);  // INT64_MIN / -1 wraps
  return a / b;                     // C++ truncates toward zero
}
int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

// a^b with wrapping multiplication; negative exponents truncate 1/a^|b| toward zero (so only
// |a| == 1 gives a nonzero result; 0^negative is 0 like integer division by zero).
int64_t pow_i64(int64_t a, int64_t b) {
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

}  // namespace vkc::ir::math
