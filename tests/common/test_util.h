// Helpers shared by the test suites: seeded random tensors, numeric comparison, error messages.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "support/tensor.h"

namespace vkc::test {

// Uniform values in [lo, hi) for float types, integers in [lo, hi] for integer types, 0/1 for bool.
HostTensor random_tensor(DType dtype, const Shape& shape, std::mt19937& rng, double lo = -1.0,
                         double hi = 1.0);

struct Comparison {
  bool ok = false;
  double max_abs = 0;  // max |a - b|
  double rel = 0;      // ||a - b|| / ||b||  (b is the reference)
  int64_t worst = -1;  // index of the largest |a - b| (or the first NaN/mismatch)
  std::string message;  // "" when ok, else a description for test output
};

// Compares `actual` with `reference`: same dtype and shape; floats pass when the relative L2 error
// is <= rel_tol or every element is within abs_tol; NaN in actual passes only where the reference
// is NaN too. Integers and bools must match exactly.
Comparison compare(const HostTensor& actual, const HostTensor& reference, double rel_tol = 1e-5,
                   double abs_tol = 1e-6);

// The vkc::Error message `f` throws, "(no error)" if it returns. Any other exception escapes and
// fails the test: only vkc::Error is an acceptable refusal.
std::string error_of(const std::function<void()>& f);

// Absolute path of a file in the source tree.
std::string source_path(const std::string& relative);

}  // namespace vkc::test
