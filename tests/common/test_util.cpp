#include "common/test_util.h"

#include <cmath>

#include "support/error.h"

namespace vkc::test {

HostTensor random_tensor(DType dtype, const Shape& shape, std::mt19937& rng, double lo, double hi) {
  HostTensor t(dtype, shape);
  if (is_float(dtype)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  } else if (dtype == DType::boolean) {
    std::bernoulli_distribution dist(0.5);
    for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, dist(rng) ? 1 : 0);
  } else {
    std::uniform_int_distribution<int64_t> dist(int64_t(std::ceil(lo)), int64_t(std::floor(hi)));
    for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, dist(rng));
  }
  return t;
}

Comparison compare(const HostTensor& a, const HostTensor& b, double rel_tol, double abs_tol) {
  Comparison c;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    c.message = "type mismatch: " + std::string(dtype_name(a.dtype())) + " " + shape_str(a.shape()) +
                " vs reference " + std::string(dtype_name(b.dtype())) + " " + shape_str(b.shape());
    return c;
  }
  if (!is_float(a.dtype())) {
    for (int64_t i = 0; i < a.numel(); ++i) {
      if (a.get_i64(i) != b.get_i64(i)) {
        c.worst = i;
        c.message = "element " + std::to_string(i) + ": " + std::to_string(a.get_i64(i)) +
                    " vs reference " + std::to_string(b.get_i64(i));
        return c;
      }
    }
    c.ok = true;
    return c;
  }
  double diff2 = 0, ref2 = 0;
  bool all_within_abs = true;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get_f64(i), y = b.get_f64(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) && std::isnan(y)) continue;
      c.worst = i;
      c.message = "element " + std::to_string(i) + ": " + std::to_string(x) + " vs reference " +
                  std::to_string(y) + " (NaN mismatch: unwritten output?)";
      return c;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x == y) continue;
      c.worst = i;
      c.message = "element " + std::to_string(i) + ": " + std::to_string(x) + " vs reference " +
                  std::to_string(y);
      return c;
    }
    double d = std::abs(x - y);
    if (d > c.max_abs) {
      c.max_abs = d;
      c.worst = i;
    }
    if (d > abs_tol) all_within_abs = false;
    diff2 += d * d;
    ref2 += y * y;
  }
  c.rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.ok = all_within_abs || c.rel <= rel_tol;
  if (!c.ok)
    c.message = "relative error " + std::to_string(c.rel) + " > " + std::to_string(rel_tol) +
                ", max abs error " + std::to_string(c.max_abs) + " at element " + std::to_string(c.worst);
  return c;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string source_path(const std::string& relative) { return std::string(VKC_SOURCE_DIR) + "/" + relative; }

}  // namespace vkc::test
