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
#include "ir/matmul_geometry.h"
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

// The matrix products' sums, shared by matmul/gemm (float64) and matmul_integer (exact int64):
// for each batch index of `batch` (numpy-broadcast operands) and each (m, n), acc = T(0) plus
// term(A offset, B offset, n) over k, then store(flat output index, m, n, acc).
template <typename T, typename Term, typename Store>
void matrix_product_sums(const MatrixView& va, const MatrixView& vb, const Shape& batch, Term term, Store store) {
  const int64_t M = va.rows, N = vb.cols, K = va.cols, batches = shape_numel(batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    std::vector<int64_t> index = unravel(bi, batch);
    const int64_t abase = broadcast_offset(va.batch, batch, index) * va.matrix_size;
    const int64_t bbase = broadcast_offset(vb.batch, batch, index) * vb.matrix_size;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        T acc = T(0);
        for (int64_t k = 0; k < K; ++k)
          acc += term(abase + m * va.row_stride + k * va.col_stride, bbase + k * vb.row_stride + n * vb.col_stride, n);
        store((bi * M + m) * N + n, m, n, acc);
      }
  }
}

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

// The forward conv's sums, shared by conv (float64) and conv_integer (exact int64): for each output
// [n, f, o], acc = init(f), then acc += term(x offset, w offset, f) over c < Cg and every tap inside
// the input (padding contributes nothing), then store(y offset, f, acc). Offsets are physical,
// from the logical strides xs, ws, ys of input, filter and output.
template <typename T, typename Init, typename Term, typename Store>
void conv_forward_sums(const ConvGeometry& g, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                       const std::vector<int64_t>& ys, Init init, Term term, Store store) {
  const Padded3 p = pad_to_3d(g, xs, ws, ys);
  const int64_t Cg = g.in_channels_per_group(), Fg = g.out_channels_per_group();
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t f = 0; f < g.out_channels; ++f) {
      const int64_t group = f / Fg;
      for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
            T acc = init(f);
            for (int64_t c = 0; c < Cg; ++c) {
              const int64_t xbase = n * xs[0] + (group * Cg + c) * xs[1];
              const int64_t wbase = f * ws[0] + c * ws[1];
              for (int64_t k0 = 0; k0 < p.k[0]; ++k0) {
                const int64_t i0 = o0 * p.s[0] - p.pb[0] + k0 * p.d[0];
                if (i0 < 0 || i0 >= p.in[0]) continue;
                for (int64_t k1 = 0; k1 < p.k[1]; ++k1) {
                  const int64_t i1 = o1 * p.s[1] - p.pb[1] + k1 * p.d[1];
                  if (i1 < 0 || i1 >= p.in[1]) continue;
                  for (int64_t k2 = 0; k2 < p.k[2]; ++k2) {
                    const int64_t i2 = o2 * p.s[2] - p.pb[2] + k2 * p.d[2];
                    if (i2 < 0 || i2 >= p.in[2]) continue;
                    acc += term(xbase + i0 * p.xs[0] + i1 * p.xs[1] + i2 * p.xs[2],
                                wbase + k0 * p.ws[0] + k1 * p.ws[1] + k2 * p.ws[2], f);
                  }
                }
              }
            }
            store(n * ys[0] + f * ys[1] + o0 * p.ys[0] + o1 * p.ys[1] + o2 * p.ys[2], f, acc);
          }
    }
}
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
