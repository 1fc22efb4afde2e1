// Integer helpers for tiling arithmetic: how many tiles cover a size, sizes padded to a multiple,
// element counts. One definition here so every planner rounds the same way.
//
// Overloads for int64_t and uint64_t, not a template: callers mix widths (a uint64_t size, a
// uint32_t tile) and get the 64-bit operand's arithmetic, as the replaced copies did; int64_t with
// uint64_t, or no 64-bit operand, is ambiguous and does not compile: the caller must choose.
#pragma once

#include <cstdint>
#include <vector>

namespace vkc {

// ceil(a / b) for a >= 0 and b > 0: how many tiles of size b cover a.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The smallest multiple of m that is >= x, for x >= 0 and m > 0.
constexpr int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }
constexpr uint64_t round_up(uint64_t x, uint64_t m) { return ceil_div(x, m) * m; }

// The product of the values, 1 for none: the element count of a shape or a window. Unchecked, for
// shapes the verifier has already accepted; support/tensor.h's shape_numel checks for overflow.
constexpr int64_t product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

}  // namespace vkc
