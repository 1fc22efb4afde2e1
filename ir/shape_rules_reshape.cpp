// Shape rules for the ops that reinterpret a shape without moving data: expand_shape,
// collapse_shape and reshape.
#include <cstdint>

#include "ir/shape_rules.h"

namespace vkc::ir::rules {
namespace {

std::string groups_str(const IntsList& groups) {
  std::string s = "[";
  for (size_t g = 0; g < groups.size(); ++g) {
    s += g ? ", [" : "[";
    for (size_t i = 0; i < groups[g].size(); ++i) s += (i ? ", " : "") + std::to_string(groups[g][i]);
    s += "]";
  }
  return s + "]";
}

// The groups must list 0..n-1 in order, each group non-empty (MLIR reassociation semantics).
void check_partition(const Op& op, const IntsList& groups, size_t n, const char* what) {
  int64_t next = 0;
  bool ok = true;
  for (const auto& g : groups) {
    if (g.empty()) ok = false;
    for (int64_t d : g) ok = ok && d == next++;
  }
  if (!ok || size_t(next) != n)
    fail(op, "attribute 'reassociation' is ", groups_str(groups), ", expected non-empty groups of consecutive ",
         what, " dims covering 0..", int64_t(n) - 1, " in order");
}

// Saturates instead of overflowing: absurd attribute values must produce an error, not UB.
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t group_product(const Shape& s, const std::vector<int64_t>& group) {
  int64_t p = 1;
  for (int64_t d : group) p = checked_mul(p, s[size_t(d)]);
  return p;
}

void check_nonnegative_shape_attr(const Op& op, const std::vector<int64_t>& shape) {
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) fail(op, "attribute 'shape' entry ", i, " is ", shape[i], ", expected >= 0");
}

}  // namespace

std::vector<TensorType> infer_expand_shape(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  const std::vector<int64_t>& shape = op.attr_ints("shape");
  const IntsList& groups = op.attr_ints_list("reassociation");
  check_nonnegative_shape_attr(op, shape);
  if (int64_t(groups.size()) != in.rank())
    fail(op, "attribute 'reassociation' has ", groups.size(), " groups, input has rank ", in.rank(),
         " (one group per input dim)");
  // A rank-0 input has no groups; it may expand only to a shape of ones.
  if (groups.empty()) {
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] != 1) fail(op, "result dim ", i, " is ", shape[i], ", expected 1 when expanding a scalar");
    return {TensorType{in.dtype, shape}};
  }
  check_partition(op, groups, shape.size(), "result");
  for (size_t g = 0; g < groups.size(); ++g) {
    int64_t p = group_product(shape, groups[g]);
    if (p != in.shape[g])
      fail(op, "input dim ", g, " is ", in.shape[g], ", but result dims ", groups_str({groups[g]}),
           " multiply to ", p);
  }
  return {TensorType{in.dtype, shape}};
}

std::vector<TensorType> infer_collapse_shape(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  const IntsList& groups = op.attr_ints_list("reassociation");
  if (groups.empty()) {
    // Collapsing to rank 0 is allowed only for a single-element tensor.
    for (size_t i = 0; i < in.shape.size(); ++i)
      if (in.shape[i] != 1)
        fail(op, "input dim ", i, " is ", in.shape[i], ", expected 1 when collapsing to a scalar");
    return {TensorType{in.dtype, {}}};
  }
  check_partition(op, groups, in.shape.size(), "input");
  Shape out;
  for (const auto& g : groups) out.push_back(group_product(in.shape, g));
  return {TensorType{in.dtype, out}};
}

// shape may hold one -1 (inferred from the element count). 0 is a literal zero-size dim (ONNX's
// allowzero = 1), never ONNX's default "copy the input dim": importers resolve that, and the IR
// keeps shapes explicit.
std::vector<TensorType> infer_reshape(const Op& op) {
  const TensorType& in = operand_type(op, 0);
  Shape shape = op.attr_ints("shape");
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0)
        fail(op, "attribute 'shape' has -1 at entries ", inferred, " and ", i, ", at most one is allowed");
      inferred = int(i);
    } else if (shape[i] < 0) {
      fail(op, "attribute 'shape' entry ", i, " is ", shape[i], ", expected >= 0 or -1");
    } else {
      known = checked_mul(known, shape[i]);
    }
  }
  int64_t numel = in.numel();
  if (inferred >= 0) {
    // With a 0 entry any value fits the -1 (0 * n == 0), so it cannot be inferred (ONNX forbids it).
    if (known == 0)
      fail(op, "cannot infer attribute 'shape' entry ", inferred, ": another entry is 0");
    if (numel % known != 0)
      fail(op, "cannot infer attribute 'shape' entry ", inferred, ": input has ", numel,
           " elements, not divisible by ", known);
    shape[size_t(inferred)] = numel / known;
  } else if (known != numel) {
    fail(op, "attribute 'shape' ", shape_str(shape), " has ", known, " elements, input ",
         shape_str(in.shape), " has ", numel);
  }
  return {TensorType{in.dtype, shape}};
}

}  // namespace vkc::ir::rules
