// Internal to the verifier: the per-category shape rules and the helpers they share.
//
// infer_result_types (ir/verifier.cpp) runs the generic schema checks and then dispatches to one of
// these rules. Each rule may assume the operand count and attribute kinds are already valid.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rank_limit.h"
#include "support/error.h"

namespace vkc::ir::rules {

// Throws vkc::Error "<op>: <parts>".
template <typename... Parts>
[[noreturn]] void fail(const Op& op, const Parts&... parts) {
  throw Error(cat(op.describe(), ": ", parts...));
}

inline const TensorType& operand_type(const Op& op, int i) { return op.operand(i)->type; }

// "tensor<2x3xf32>" with the shape printed the IR way, for messages.
inline std::string type_str(const TensorType& t) { return t.str(); }

// Maps axis in [-rank, rank) to [0, rank); `what` names it in the message ("axis", "axes[1]").
int64_t normalize_axis(const Op& op, int64_t axis, int64_t rank, const std::string& what);

// Numpy broadcasting of several operand shapes; the message names the first dim that does not
// broadcast and the operands involved.
Shape broadcast_operands(const Op& op, const std::vector<int>& operand_indices);

// Requires operand i's dtype to satisfy `pred`; `expected` describes it ("a float type").
void require_dtype(const Op& op, int i, bool (*pred)(DType), const char* expected);

std::vector<TensorType> infer_constant(const Op& op);
std::vector<TensorType> infer_unary(const Op& op);
std::vector<TensorType> infer_cast(const Op& op);
std::vector<TensorType> infer_binary(const Op& op);
std::vector<TensorType> infer_select(const Op& op);
std::vector<TensorType> infer_quantize(const Op& op);
std::vector<TensorType> infer_dequantize(const Op& op);

std::vector<TensorType> infer_conv(const Op& op);    // conv, conv_transpose, im2col
std::vector<TensorType> infer_pool(const Op& op);    // max_pool, avg_pool, max_pool_with_indices
std::vector<TensorType> infer_resize(const Op& op);

std::vector<TensorType> infer_matmul(const Op& op);
Shape matmul_shape(const Op& op);  // matmul's result shape (numpy semantics), any element type
// shape_rules_integer.cpp: conv_integer and matmul_integer (i8/u8 operands, i32 result)
std::vector<TensorType> infer_conv_integer(const Op& op);
std::vector<TensorType> infer_matmul_integer(const Op& op);
std::vector<TensorType> infer_batch_matmul(const Op& op);
std::vector<TensorType> infer_gemm(const Op& op);
std::vector<TensorType> infer_attention(const Op& op);  // shape_rules_attention.cpp

std::vector<TensorType> infer_expand_shape(const Op& op);
std::vector<TensorType> infer_collapse_shape(const Op& op);
std::vector<TensorType> infer_reshape(const Op& op);
std::vector<TensorType> infer_transpose(const Op& op);
std::vector<TensorType> infer_pad(const Op& op);
std::vector<TensorType> infer_reverse(const Op& op);
std::vector<TensorType> infer_slice(const Op& op);
std::vector<TensorType> infer_concat(const Op& op);
std::vector<TensorType> infer_broadcast(const Op& op);

std::vector<TensorType> infer_reduce(const Op& op);  // reduce_sum/mean/max/min
std::vector<TensorType> infer_arg_reduce(const Op& op);  // argmax, argmin
std::vector<TensorType> infer_softmax(const Op& op);  // softmax, log_softmax

std::vector<TensorType> infer_sort(const Op& op);
std::vector<TensorType> infer_topk(const Op& op);

// Issue 23, elementwise and logic group (ir/shape_rules_logic.cpp).
std::vector<TensorType> infer_compare(const Op& op);     // equal, less, greater, ..._or_equal
std::vector<TensorType> infer_logic(const Op& op);       // and, or, xor, not
std::vector<TensorType> infer_float_test(const Op& op);  // is_nan, is_inf
std::vector<TensorType> infer_sign(const Op& op);
std::vector<TensorType> infer_prelu(const Op& op);
// Indexing (issue 23, indexing and data movement group). ir/shape_rules_indexing.cpp
std::vector<TensorType> infer_gather(const Op& op);
std::vector<TensorType> infer_gather_elements(const Op& op);
std::vector<TensorType> infer_gather_nd(const Op& op);
std::vector<TensorType> infer_scatter_nd(const Op& op);
std::vector<TensorType> infer_scatter_elements(const Op& op);
// Normalizations and reductions (issue 23): ir/shape_rules_normalization.cpp.
std::vector<TensorType> infer_reduce_float(const Op& op);  // reduce_l2, reduce_log_sum_exp
std::vector<TensorType> infer_layer_norm(const Op& op);
std::vector<TensorType> infer_group_norm(const Op& op);
std::vector<TensorType> infer_cumsum(const Op& op);

}  // namespace vkc::ir::rules
