// Internal to the reference interpreter: one evaluation function per op family and the indexing
// helpers they share.
//
// evaluate_op (ir/interpreter.cpp) checks that the operand tensors match the op's operand types,
// then dispatches here. Each function receives the op, its operands and the result types (taken
// from the op, i.e. what the verifier inferred) and returns the result tensors. Semantics are the
// contract in docs/ops.md.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/conv_geometry.h"
#include "ir/graph.h"
#include "support/error.h"

namespace vkc::ir::interp {

using Operands = std::vector<const HostTensor*>;
using Results = std::vector<HostTensor>;
using ResultTypes = std::vector<TensorType>;

// Throws vkc::Error "<op>: <parts>" (one line).
template <typename... Parts>
[[noreturn]] void fail(const Op& op, const Parts&... parts) {
  throw Error(cat(op.describe(), ": ", parts...));
}

// All elements widened to double (flat C order); integers beyond 2^53 lose precision, which is
// why the integer paths use get_i64 instead.
std::vector<double> to_f64(const HostTensor& t);
// A tensor of `type` holding `values` rounded to the element type (HostTensor::set_f64).
HostTensor from_f64(const TensorType& type, const std::vector<double>& values);

// Copies one element between tensors of the same dtype, bit-exactly (data movement never
// rounds, so NaN payloads, -0.0 and large i64 survive).
void copy_element(HostTensor& dst, int64_t dst_index, const HostTensor& src, int64_t src_index);

// Normalizes an axis in [-rank, rank) to [0, rank); throws naming `what` otherwise.
int64_t normalize_axis(const Op& op, int64_t axis, int64_t rank, const char* what);

// Flat offset in `source` (a shape numpy-broadcastable to `target`, aligned at the trailing dims)
// of the element that broadcasts to the multi-index `index` of `target`.
int64_t broadcast_offset(const Shape& source, const Shape& target, const std::vector<int64_t>& index);

// Multi-index of flat C-order offset `flat` in `shape`.
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);

// Checks that a computed result shape agrees with the one the verifier inferred; a disagreement
// means the interpreter and the shape rules read the op differently, which must not pass silently.
void check_result_shape(const Op& op, const Shape& computed, const TensorType& inferred);

Results eval_constant(const Op& op, const ResultTypes& types);

// interpreter_conv.cpp
// Logical geometry padded to three spatial dims (D, H, W; missing leading dims have extent 1 and
// stride 0), so the hot loop below is plain nested arithmetic. The oracle runs on every test's
// full-size convs, so its speed matters; the summation order (c, then kernel positions in row-major
// order) is the documented one and is the same as a generic N-D loop would use.
struct Padded3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], xs[3], ws[3], ys[3];
};

Padded3 pad_to_3d(const ConvGeometry& g, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                  const std::vector<int64_t>& ys);
Results eval_conv(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_conv_transpose(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_im2col(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_pool.cpp
Results eval_pool(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_max_pool_with_indices(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_resize.cpp
Results eval_resize(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_contraction.cpp
Results eval_matmul(const Op& op, const Operands& in, const ResultTypes& types);  // + batch_matmul
Results eval_gemm(const Op& op, const Operands& in, const ResultTypes& types);
// interpreter_attention.cpp
Results eval_attention(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_shape.cpp
Results eval_same_bytes(const Op& op, const Operands& in, const ResultTypes& types);  // reshapes
Results eval_transpose(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_pad(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_reverse(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_slice(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_concat(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_broadcast(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_elementwise.cpp
Results eval_unary(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_cast(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_binary(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_select(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_integer.cpp: exact integer sums (i64, wrapped to the i32 result like the kernels)
Results eval_conv_integer(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_matmul_integer(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_quant.cpp
Results eval_quantize(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_dequantize(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_reduce.cpp
Results eval_reduce(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_arg_reduce(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_softmax(const Op& op, const Operands& in, const ResultTypes& types);  // + log_softmax

// interpreter_sort.cpp
Results eval_sort(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_topk(const Op& op, const Operands& in, const ResultTypes& types);

// interpreter_indexing.cpp (issue 23, indexing and data movement group)
// An index v addresses position v of a dim of n when 0 <= v < n and v + n when -n <= v < 0;
// any other value is out of range: a gather reads zeros there, a scatter skips that update.
int64_t resolve_index(int64_t v, int64_t n);  // -1 when out of range
Results eval_gather(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_gather_elements(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_gather_nd(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_scatter_nd(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_scatter_elements(const Op& op, const Operands& in, const ResultTypes& types);
// Normalizations and reductions (issue 23): interpreter_normalization.cpp.
// reduce_prod, reduce_l1, reduce_l2, reduce_log_sum_exp.
Results eval_reduce_more(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_layer_norm(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_group_norm(const Op& op, const Operands& in, const ResultTypes& types);
Results eval_cumsum(const Op& op, const Operands& in, const ResultTypes& types);

}  // namespace vkc::ir::interp
