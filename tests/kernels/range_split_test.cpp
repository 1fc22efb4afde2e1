// Tensors larger than one binding (issue #25): under a synthetic profile whose
// maxStorageBufferRange is 4 KiB, ordinary small graphs of every op family are split into pieces
// over buffer ranges (codegen/range_split.h). Each runs on the device against the reference, every
// binding must stay within the range, and the report must say how each op was cut.
#include <cstdlib>
#include <random>

#include "codegen/range_split.h"
#include "codegen/storage_plan.h"
#include "kernels/op_test_helpers.h"
#include "ir/interpreter.h"
#include "module/memory_footprint.h"
#include "module/tensor_lookup.h"
#include "runtime/context_internal.h"

namespace vkc::test {
namespace {

using K = ir::OpKind;

constexpr uint64_t kTinyRange = 4096;

struct SplitCase {
  const char* name;
  std::function<ir::Graph()> build;
  double rel_tol = 1e-5;
  double low = -1.0, high = 1.0;  // float inputs drawn from [low, high) (a product needs them near 1)
};

ir::Graph graph_of(K kind, const std::vector<ir::TensorType>& inputs, ir::AttrMap attrs = {}) {
  return one_op_graph(kind, inputs, std::move(attrs));
}

ir::TensorType typed(DType t, Shape s) { return {t, std::move(s)}; }

// One op with every result a graph output (a topk's or a pooling's indices, a sort's payloads: so
// their order is checked too).
ir::Graph every_result_of(K kind, const std::vector<ir::TensorType>& operands, ir::AttrMap attrs) {
  ir::Graph g;
  std::vector<ir::Value*> in;
  for (size_t i = 0; i < operands.size(); ++i) in.push_back(g.add_input("x" + std::to_string(i), operands[i]));
  ir::Op* op = g.add_op(kind, in, std::move(attrs), "under_test");
  for (int r = 0; r < int(op->results.size()); ++r) g.add_output(op->result(r), "y" + std::to_string(r));
  return g;
}
ir::Graph topk_of(const ir::TensorType& x, ir::AttrMap attrs) { return every_result_of(K::TopK, {x}, std::move(attrs)); }
ir::Graph pool_indices_of(const ir::TensorType& x, ir::AttrMap attrs) {
  return every_result_of(K::MaxPoolWithIndices, {x}, std::move(attrs));
}
ir::Graph sort_of(const std::vector<ir::TensorType>& operands, ir::AttrMap attrs) {
  return every_result_of(K::Sort, operands, std::move(attrs));
}

// A scatter whose indices are an integer input in [-8, 8] times `spread` (per index component):
// they reach every block of the data, wrap from the end when negative, fall out of range past it,
// and repeat.
ir::Graph scatter_of(K kind, const ir::TensorType& data, const ir::TensorType& idx, const ir::TensorType& updates,
                     const std::vector<int64_t>& spread, ir::AttrMap attrs) {
  ir::Graph g;
  HostTensor s(idx.dtype, {int64_t(spread.size())});
  for (size_t i = 0; i < spread.size(); ++i) s.set_i64(int64_t(i), spread[i]);
  ir::Value* x = g.add_input("data", data);
  ir::Value* i = g.add_op(K::Mul, {g.add_input("i", idx), g.add_constant(s, "spread")}, {}, "spread")->result();
  ir::Op* op = g.add_op(kind, {x, i, g.add_input("updates", updates)}, std::move(attrs), "under_test");
  g.add_output(op->result(), "y");
  return g;
}

std::vector<SplitCase> split_cases() {
  using S = std::string;
  return {
      {"relu_rows", [] { return graph_of(K::Relu, {f32({8, 1024})}); }},
      {"relu_one_long_row", [] { return graph_of(K::Relu, {f32({1, 1, 3072})}); }},
      {"add_row_broadcast", [] { return graph_of(K::Add, {f32({16, 512}), f32({512})}); }},
      {"mul_column_broadcast", [] { return graph_of(K::Mul, {f32({16, 512}), f32({16, 1})}); }},
      {"select", [] {
         return graph_of(K::Select, {typed(DType::boolean, {8, 1024}), f32({8, 1024}), f32({1, 1024})});
       }},
      {"cast_to_i32", [] { return graph_of(K::Cast, {f32({8, 1024})}, {{"to", S("i32")}}); }},
      {"quantize_per_tensor", [] { return graph_of(K::Quantize, {f32({16, 512}), f32({}), typed(DType::i8, {})}); }},
      {"dequantize_per_channel", [] {
         return graph_of(K::Dequantize, {typed(DType::i8, {4, 16, 256}), f32({16}), typed(DType::i8, {16})},
                         {{"axis", int64_t(1)}});
       }},
      {"conv_batch_then_channels", [] {
         return graph_of(K::Conv, {f32({4, 4, 16, 16}), f32({8, 4, 3, 3}), f32({8})},
                         {{"pads", Ints{1, 1, 1, 1}}});
       },
       1e-4},
      // int8 (docs/int8.md): i32 sums cut by batch and output channels (per-channel zero points and
      // bias follow), and by rows and columns (per-column zero points follow).
      {"conv_integer_batch_then_channels", [] {
         return graph_of(K::ConvInteger, {typed(DType::i8, {2, 4, 16, 16}), typed(DType::i8, {64, 4, 3, 3}),
                                          typed(DType::i8, {}), typed(DType::i8, {64}), typed(DType::i32, {64})},
                         {{"pads", Ints{1, 1, 1, 1}}});
       }},
      {"matmul_integer_rows_and_columns", [] {
         return graph_of(K::MatMulInteger, {typed(DType::i8, {64, 32}), typed(DType::i8, {32, 48}),
                                            typed(DType::i8, {}), typed(DType::i8, {48})});
       }},
      // Requantized with per-column scales (docs/int8.md): each piece of rows binds the table of
      // all its columns (scales cut no columns), a module constant.
      {"matmul_integer_requantized_rows", [] {
         std::vector<double> scales;
         for (int j = 0; j < 48; ++j) scales.push_back(1e-3 * double(1 + j % 5));
         return graph_of(K::MatMulInteger, {typed(DType::u8, {256, 32}), typed(DType::i8, {32, 48}),
                                            typed(DType::u8, {}), typed(DType::i8, {48})},
                         {{"requantize_to", std::string("u8")}, {"requantize_scale", scales},
                          {"requantize_zero_point", int64_t(9)}});
       }},
      {"conv_nhwc_batch", [] {
         return graph_of(K::Conv, {f32({4, 8, 8, 4}), f32({16, 4, 3, 3})},
                         {{"pads", Ints{1, 1, 1, 1}}, {"input_layout", S("NHWC")}, {"output_layout", S("NHWC")}});
       },
       1e-4},
      // Rows with their halo: one image's input is beyond the range, cut along output rows.
      {"conv_nhwc_rows_halo", [] {
         return graph_of(K::Conv, {f32({1, 32, 16, 4}), f32({4, 4, 3, 3}), f32({4})},
                         {{"pads", Ints{1, 1, 1, 1}}, {"input_layout", S("NHWC")}, {"output_layout", S("NHWC")}});
       },
       1e-4},
      {"conv_nhwc_rows_stride2_dilated", [] {
         return graph_of(K::Conv, {f32({1, 33, 16, 4}), f32({4, 4, 3, 3})},
                         {{"pads", Ints{2, 0, 1, 1}}, {"strides", Ints{2, 1}}, {"dilations", Ints{2, 1}},
                          {"input_layout", S("NHWC")}, {"output_layout", S("NHWC")}});
       },
       1e-4},
      {"max_pool_rows_of_one_channel", [] {
         return graph_of(K::MaxPool, {f32({1, 2, 64, 32})},
                         {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      {"avg_pool_rows_count_include_pad", [] {
         return graph_of(K::AvgPool, {f32({1, 2, 64, 32})},
                         {{"kernel", Ints{3, 2}}, {"strides", Ints{1, 2}}, {"pads", Ints{1, 0, 1, 0}},
                          {"count_include_pad", true}});
       }},
      // ceil_mode: the last piece keeps it, its last window reaching past the pads as the op's does.
      {"max_pool_rows_ceil_mode", [] {
         return graph_of(K::MaxPool, {f32({1, 1, 67, 40})},
                         {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 0, 1}},
                          {"ceil_mode", true}});
       }},
      {"avg_pool_rows_ceil_mode_count_include_pad", [] {
         return graph_of(K::AvgPool, {f32({1, 2, 66, 33})},
                         {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 0}},
                          {"ceil_mode", true}, {"count_include_pad", true}});
       }},
      {"avg_pool_rows_ceil_mode_nhwc", [] {
         return graph_of(K::AvgPool, {f32({1, 71, 9, 4})},
                         {{"kernel", Ints{4, 2}}, {"strides", Ints{3, 2}}, {"ceil_mode", true},
                          {"layout", std::string("NHWC")}});
       }},
      // NCHW, one image beyond the range and rows not contiguous across channels: partial convs
      // over blocks of input channels, summed; larger partial results are cut again.
      {"conv_nchw_input_channel_blocks", [] {
         return graph_of(K::Conv, {f32({1, 8, 16, 16}), f32({4, 8, 3, 3}), f32({4})}, {{"pads", Ints{1, 1, 1, 1}}});
       },
       1e-4},
      {"conv_nchw_input_channel_blocks_then_output_channels", [] {
         return graph_of(K::Conv, {f32({1, 12, 16, 16}), f32({8, 12, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}});
       },
       1e-4},
      {"conv_transpose_channels", [] {
         return graph_of(K::ConvTranspose, {f32({1, 4, 16, 16}), f32({4, 8, 2, 2})}, {{"strides", Ints{2, 2}}});
       },
       1e-4},
      // Output rows gather a window of input rows: pieces with their own pads and output_padding.
      {"conv_transpose_rows", [] {
         return graph_of(K::ConvTranspose, {f32({1, 1, 24, 24}), f32({1, 1, 3, 3}), f32({1})},
                         {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}});
       },
       1e-4},
      {"conv_transpose_rows_stride_above_kernel_nhwc", [] {
         return graph_of(K::ConvTranspose, {f32({1, 20, 6, 2}), f32({2, 3, 2, 2})},
                         {{"strides", Ints{3, 3}}, {"input_layout", S("NHWC")}, {"output_layout", S("NHWC")}});
       },
       1e-4},
      {"conv_transpose_rows_output_shape_dilated", [] {
         return graph_of(K::ConvTranspose, {f32({1, 2, 36, 10}), f32({2, 1, 4, 4})},
                         {{"strides", Ints{2, 2}}, {"dilations", Ints{2, 2}}, {"output_shape", Ints{70, 20}}});
       },
       1e-4},
      {"im2col_batch", [] {
         return graph_of(K::Im2Col, {f32({4, 1, 8, 8})}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      // Whole output rows of im2col's P (all output spatial dims) read a window of input rows.
      {"im2col_rows_halo", [] {
         return graph_of(K::Im2Col, {f32({1, 2, 20, 12})}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      {"im2col_rows_strided_nhwc", [] {
         return graph_of(K::Im2Col, {f32({2, 21, 10, 3})},
                         {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"dilations", Ints{2, 1}},
                          {"pads", Ints{2, 0, 1, 1}}, {"input_layout", std::string("NHWC")}});
       }},
      {"im2col_1d_rows", [] {
         return graph_of(K::Im2Col, {f32({1, 3, 600})}, {{"kernel", Ints{5}}, {"pads", Ints{2, 2}}});
       }},
      {"max_pool_channels", [] {
         return graph_of(K::MaxPool, {f32({2, 8, 16, 16})}, {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}});
       }},
      {"avg_pool_channels", [] {
         return graph_of(K::AvgPool, {f32({2, 8, 16, 16})}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      {"reduce_sum_rows", [] { return graph_of(K::ReduceSum, {f32({32, 256})}, {{"axes", Ints{1}}}); }},
      {"reduce_max_keep_none", [] {
         return graph_of(K::ReduceMax, {f32({32, 4, 64})}, {{"axes", Ints{2}}, {"keepdims", false}});
       }},
      {"argmax_rows", [] {
         return graph_of(K::ArgMax, {f32({32, 256})}, {{"axis", int64_t(1)}, {"keepdims", false}});
       }},
      // Along an axis beyond the range: per-block extremes and indices, the best block's index.
      {"argmax_long_rows", [] {
         return graph_of(K::ArgMax, {f32({3, 2000})}, {{"axis", int64_t(1)}, {"keepdims", false}});
       }},
      {"argmin_i32_ties_last_index_long_columns", [] {
         return graph_of(K::ArgMin, {typed(DType::i32, {1500, 2})}, {{"axis", int64_t(0)}, {"select_last_index", true}});
       }},
      {"softmax_rows", [] { return graph_of(K::Softmax, {f32({32, 256})}); }},
      {"matmul_rows", [] { return graph_of(K::MatMul, {f32({64, 64}), f32({64, 16})}); }, 1e-4},
      {"batch_matmul_batch", [] { return graph_of(K::BatchMatMul, {f32({8, 16, 32}), f32({8, 32, 16})}); }, 1e-4},
      {"gemm_with_c", [] { return graph_of(K::Gemm, {f32({64, 64}), f32({64, 16}), f32({16})}); }, 1e-4},
      // Partial products over blocks of K, summed (rhs read whole by every row is beyond the range).
      {"matmul_long_k", [] { return graph_of(K::MatMul, {f32({4, 2048}), f32({2048, 4})}); }, 1e-4},
      {"gemm_long_k_with_c", [] {
         return graph_of(K::Gemm, {f32({4, 1536}), f32({1536, 4}), f32({4})}, {{"alpha", 0.5}, {"beta", 2.0}});
       }, 1e-4},
      {"attention_query_rows", [] {
         return graph_of(K::Attention, {f32({2, 96, 16}), f32({2, 24, 16}), f32({2, 24, 8})}, {{"scale", 0.25}});
       }, 1e-4},
      // Causal attention cut along its query rows (issue 25): each piece keeps the whole op's
      // diagonal through causal_offset; the mask's rows follow.
      {"attention_causal_query_rows_with_mask", [] {
         return graph_of(K::Attention, {f32({1, 48, 16}), f32({1, 48, 16}), f32({1, 48, 16}), f32({48, 48})},
                         {{"scale", 0.25}, {"causal", true}});
       }, 1e-4},
      // More rows than keys, the diagonal moved to the top left by the op's own causal_offset (no
      // row is all hidden), over batch then rows.
      {"attention_causal_query_rows_offset", [] {
         return graph_of(K::Attention, {f32({2, 160, 8}), f32({2, 128, 8}), f32({2, 128, 8})},
                         {{"scale", 0.5}, {"causal", true}, {"causal_offset", int64_t(32)}});
       }, 1e-4},
      // k and v of one batch index beyond the range: pieces over blocks of keys, each with its
      // rows' log-sum-exp, combined by their weights (causal pieces keep the whole diagonal).
      {"attention_causal_key_blocks", [] {
         return graph_of(K::Attention, {f32({2, 33, 32}), f32({2, 33, 32}), f32({2, 33, 24})},
                         {{"scale", 0.2}, {"causal", true}});
       }, 1e-4},
      {"attention_causal_key_blocks_fewer_rows", [] {
         return graph_of(K::Attention, {f32({1, 5, 32}), f32({1, 47, 32}), f32({1, 47, 24})},
                         {{"scale", 0.2}, {"causal", true}});
       }, 1e-4},
      {"attention_key_blocks_transposed_keys_with_mask", [] {
         return graph_of(K::Attention, {f32({1, 16, 16}), f32({1, 16, 80}), f32({1, 80, 8}), f32({16, 80})},
                         {{"scale", 0.25}, {"k_transposed", true}});
       }, 1e-4},
      // Columns of rhs are not one contiguous range: copied through aligned windows.
      {"matmul_rhs_columns_copied", [] { return graph_of(K::MatMul, {f32({16, 40}), f32({40, 50})}); }, 1e-4},
      // One index of dim 0 is 4116 bytes: pieces along dim 1 start at offsets no device may bind;
      // operand pieces are copied, result pieces assembled into aligned chunks.
      {"relu_unaligned_rows", [] { return graph_of(K::Relu, {f32({5, 3, 343})}); }},
      {"batch_matmul_unaligned_batches", [] {
         return graph_of(K::BatchMatMul, {f32({3, 33, 10}), f32({3, 10, 29})});
       }, 1e-4},
      {"resize_channels", [] {
         return graph_of(K::Resize, {f32({2, 4, 16, 16})}, {{"sizes", Ints{2, 4, 32, 32}}, {"mode", S("linear")}});
       }},
      // Along resized dims (issue 25): each piece computes the whole op's coordinates for its
      // output rows and reads the input rows they sample (attribute 'window'). Upsampling, where
      // the result is what is beyond the range, in every mode and coordinate transform.
      {"resize_up_rows_linear_half_pixel", [] {
         return graph_of(K::Resize, {f32({1, 2, 24, 16})}, {{"sizes", Ints{1, 2, 72, 40}}, {"mode", S("linear")}});
       }, 1e-4},
      {"resize_up_rows_nearest_floor_asymmetric_scales", [] {
         return graph_of(K::Resize, {f32({1, 1, 20, 24})},
                         {{"sizes", Ints{1, 1, 50, 60}}, {"scales", std::vector<double>{1, 1, 2.5, 2.5}},
                          {"coordinate_mode", S("asymmetric")}, {"nearest_mode", S("floor")}});
       }},
      {"resize_up_rows_nearest_prefer_ceil_half_pixel", [] {
         return graph_of(K::Resize, {f32({3, 17, 8})}, {{"sizes", Ints{3, 51, 24}}, {"nearest_mode", S("round_prefer_ceil")}});
       }},
      {"resize_up_rows_nearest_prefer_floor_align_corners", [] {
         return graph_of(K::Resize, {f32({2, 10, 9})}, {{"sizes", Ints{2, 73, 18}}, {"coordinate_mode", S("align_corners")}});
       }},
      {"resize_up_rows_nearest_ceil_tf_half_pixel", [] {
         return graph_of(K::Resize, {typed(DType::i32, {30, 20})},
                         {{"sizes", Ints{90, 20}}, {"coordinate_mode", S("tf_half_pixel_for_nn")}, {"nearest_mode", S("ceil")}});
       }},
      {"resize_up_rows_cubic_exclude_outside", [] {
         return graph_of(K::Resize, {f32({1, 1, 16, 16})},
                         {{"sizes", Ints{1, 1, 56, 40}}, {"mode", S("cubic")}, {"exclude_outside", true}});
       }, 1e-4},
      {"resize_up_rows_cubic_pytorch_half_pixel", [] {
         return graph_of(K::Resize, {f32({1, 12, 16, 3})},
                         {{"sizes", Ints{1, 36, 48, 3}}, {"mode", S("cubic")}, {"coordinate_mode", S("pytorch_half_pixel")},
                          {"cubic_coeff_a", -0.5}});
       }, 1e-4},
      {"resize_up_rows_linear_symmetric_scales", [] {
         return graph_of(K::Resize, {f32({1, 1, 20, 20})},
                         {{"sizes", Ints{1, 1, 57, 30}}, {"scales", std::vector<double>{1, 1, 2.87, 1.53}},
                          {"mode", S("linear")}, {"coordinate_mode", S("half_pixel_symmetric")}});
       }, 1e-4},
      {"resize_crop_and_resize_linear_extrapolated", [] {
         return graph_of(K::Resize, {f32({1, 1, 24, 24})},
                         {{"sizes", Ints{1, 1, 64, 40}}, {"mode", S("linear")}, {"coordinate_mode", S("tf_crop_and_resize")},
                          {"roi", std::vector<double>{0, 0, -0.2, 0.1, 1, 1, 1.3, 0.8}}, {"extrapolation_value", 7.5}});
       }, 1e-4},
      {"resize_crop_and_resize_nearest_flipped", [] {
         return graph_of(K::Resize, {f32({40, 12})},
                         {{"sizes", Ints{100, 12}}, {"coordinate_mode", S("tf_crop_and_resize")},
                          {"roi", std::vector<double>{0.9, 0, 0.1, 1}}});
       }},
      // Downsampling an input beyond the range: operand pieces are the input rows each piece's
      // taps reach, copied through aligned windows.
      {"resize_down_rows_linear_large_input", [] {
         return graph_of(K::Resize, {f32({1, 2, 64, 48})}, {{"sizes", Ints{1, 2, 20, 15}}, {"mode", S("linear")}});
       }, 1e-4},
      {"sort_rows", [] { return graph_of(K::Sort, {f32({32, 128})}); }},
      {"topk_rows", [] { return topk_of(f32({64, 128}), {{"k", int64_t(4)}}); }},
      // Along an axis beyond the range: per-block topk, then a topk over the candidates.
      {"topk_long_rows", [] { return topk_of(f32({4, 2048}), {{"k", int64_t(5)}}); }},
      // i32 inputs in [-8, 8): many ties
      {"topk_smallest_i32_ties_long_axis", [] {
         return topk_of(typed(DType::i32, {1500, 2}), {{"k", int64_t(7)}, {"axis", int64_t(0)}, {"largest", false},
                                                         {"index_type", std::string("i32")}});
       }},
      // Candidates themselves beyond the range: topks over blocks of the candidates, level after
      // level (their original indices picked per block), until they fit.
      {"topk_candidates_in_two_levels", [] { return topk_of(f32({1, 6000}), {{"k", int64_t(100)}}); }},
      // i32 inputs in [-8, 8): many ties
      {"topk_smallest_i32_ties_three_levels", [] {
         return topk_of(typed(DType::i32, {3000, 2}), {{"k", int64_t(200)}, {"axis", int64_t(0)}, {"largest", false},
                                                         {"index_type", std::string("i32")}});
       }},
      {"pad_rows", [] { return graph_of(K::Pad, {f32({16, 256})}, {{"pads", Ints{0, 32, 0, 32}}}); }},
      {"transpose_batch", [] { return graph_of(K::Transpose, {f32({16, 16, 16})}, {{"perm", Ints{0, 2, 1}}}); }},
      {"slice_columns", [] {
         return graph_of(K::Slice, {f32({64, 64})}, {{"starts", Ints{0, 8}}, {"ends", Ints{64, 40}}});
       }},
      {"concat_columns_of_inputs", [] {
         return graph_of(K::Concat, {f32({8, 256}), f32({8, 256})}, {{"axis", int64_t(1)}});
       }},
      {"broadcast_rows", [] { return graph_of(K::Broadcast, {f32({1, 256})}, {{"shape", Ints{32, 256}}}); }},
      {"fused_chain", [] {
         ir::Graph g;
         ir::Value* x = g.add_input("x", f32({2, 4, 16, 16}));
         ir::Value* w = g.add_input("w", f32({8, 4, 3, 3}));
         ir::Value* c = g.add_op(K::Conv, {x, w}, {{"pads", Ints{1, 1, 1, 1}}}, "under_test")->result();
         ir::Value* r = g.add_op(K::Relu, {c})->result();
         ir::Value* p = g.add_op(K::MaxPool, {r}, {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}})->result();
         g.add_output(g.add_op(K::Sigmoid, {p})->result(), "y");
         return g;
       },
       1e-4},
      // Normalizations and reductions (issue 23): cut along the rows (layer_norm: the dims before
      // its axis; group_norm: the batch), each piece reading scale and bias whole.
      {"layer_norm_rows", [] { return graph_of(K::LayerNorm, {f32({32, 256}), f32({256}), f32({256})}); }},
      {"group_norm_batch", [] {
         return graph_of(K::GroupNorm, {f32({8, 4, 64}), f32({4}), f32({4})}, {{"num_groups", int64_t(2)}});
       }},
      {"cumsum_rows", [] { return graph_of(K::CumSum, {f32({32, 256})}, {{"axis", int64_t(1)}}); }},
      // Along an axis beyond the range: per-block scans plus a carry pass.
      {"cumsum_long_rows", [] { return graph_of(K::CumSum, {f32({2, 3000})}, {{"axis", int64_t(1)}}); }, 1e-4},
      {"cumsum_long_axis_exclusive_reverse", [] {
         return graph_of(K::CumSum, {f32({1, 1000, 3})}, {{"axis", int64_t(1)}, {"exclusive", true}, {"reverse", true}});
       }, 1e-4},
      {"cumsum_i32_reverse", [] {
         return graph_of(K::CumSum, {typed(DType::i32, {5000})}, {{"axis", int64_t(0)}, {"reverse", true}});
       }},
      {"cumsum_exclusive_unaligned", [] {
         return graph_of(K::CumSum, {f32({3, 1201})}, {{"axis", int64_t(-1)}, {"exclusive", true}});
       }, 1e-4},
      // A normalized group beyond the range (issue 25): the op as its primitive ops (mean, the
      // variance around it, elementwise), each cut on its own. Inputs near 100: E[x^2] - E[x]^2
      // in f32 would lose the variance; two passes keep it.
      {"layer_norm_group_beyond_binding", [] {
         return graph_of(K::LayerNorm, {f32({2, 1500}), f32({1500}), f32({1500})});
       }, 1e-4},
      // RMSNorm (`rms`) beyond the range: the same primitive ops without the mean.
      {"rms_norm_group_beyond_binding", [] {
         return graph_of(K::LayerNorm, {f32({2, 1500}), f32({1500})}, {{"epsilon", 1e-6}, {"rms", true}});
       }, 1e-4},
      {"layer_norm_two_axes_near_100_no_bias", [] {
         return graph_of(K::LayerNorm, {f32({3, 40, 50}), f32({40, 50})}, {{"axis", int64_t(1)}, {"epsilon", 1e-3}});
       }, 1e-4, 100.0, 101.0},
      {"group_norm_group_beyond_binding", [] {
         return graph_of(K::GroupNorm, {f32({2, 4, 1200}), f32({4}), f32({4})}, {{"num_groups", int64_t(2)}});
       }, 1e-4},
      {"group_norm_f16_group_beyond_binding", [] {  // computed in f32, the result cast back
         return graph_of(K::GroupNorm, {typed(DType::f16, {1, 4, 1200}), typed(DType::f16, {4}), typed(DType::f16, {4})},
                         {{"num_groups", int64_t(2)}});
       }, 2e-3},
      {"instance_norm_channel_beyond_binding", [] {  // a group_norm of one channel per group
         return graph_of(K::GroupNorm, {f32({1, 3, 40, 30}), f32({3}), f32({3})}, {{"num_groups", int64_t(3)}});
       }, 1e-4},
      // Two windowed dims: one depth slice of a volume (one output row of an image) beyond the
      // range, cut one output index at a time along it and in runs of the next, with halos and pads.
      {"conv3d_depth_slices_then_rows", [] {
         return graph_of(K::Conv, {f32({1, 1, 6, 36, 36}), f32({2, 1, 3, 3, 3}), f32({2})},
                         {{"pads", Ints{1, 1, 1, 1, 1, 1}}});
       }, 1e-4},
      {"conv_one_output_row_beyond_binding", [] {
         return graph_of(K::Conv, {f32({1, 1, 5, 1100}), f32({1, 1, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}});
       }, 1e-4},
      {"conv_nhwc_one_output_row_beyond_binding_strided", [] {
         return graph_of(K::Conv, {f32({1, 7, 300, 4}), f32({4, 4, 3, 3}), f32({4})},
                         {{"pads", Ints{1, 0, 1, 1}}, {"strides", Ints{2, 1}}, {"input_layout", S("NHWC")},
                          {"output_layout", S("NHWC")}});
       }, 1e-4},
      // Output rows gather input rows through a transposed window, in both dims.
      {"conv_transpose_one_output_row_beyond_binding", [] {
         return graph_of(K::ConvTranspose, {f32({1, 1, 4, 600}), f32({1, 1, 3, 3}), f32({1})},
                         {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 0, 1}}, {"output_padding", Ints{1, 1}}});
       }, 1e-4},
      // Depthwise (one filter per channel): a run of channels is a depthwise conv of its own.
      {"depthwise_conv_channels_then_rows", [] {
         return graph_of(K::Conv, {f32({2, 6, 40, 40}), f32({6, 1, 3, 3}), f32({6})},
                         {{"pads", Ints{1, 1, 1, 1}}, {"groups", int64_t(6)}});
       }, 1e-4},
      // A grouped conv (4 filters per group of 2 channels) cut along the batch keeps its groups.
      {"grouped_conv_batch", [] {
         return graph_of(K::Conv, {f32({4, 4, 8, 8}), f32({8, 2, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}, {"groups", int64_t(2)}});
       }, 1e-4},
      {"max_pool_one_output_row_beyond_binding", [] {
         return graph_of(K::MaxPool, {f32({1, 1, 7, 2200})},
                         {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      {"max_pool3d_ceil_mode_depth_slices_then_rows", [] {
         return graph_of(K::MaxPool, {f32({1, 1, 8, 41, 40})}, {{"kernel", Ints{3, 3, 2}}, {"strides", Ints{2, 2, 2}},
                                                                {"pads", Ints{1, 1, 0, 0, 0, 1}}, {"ceil_mode", true}});
       }},
      {"conv3d_dilated_strided_depth_slices_then_rows", [] {
         return graph_of(K::Conv, {f32({1, 1, 9, 34, 34}), f32({1, 1, 3, 3, 3})},
                         {{"pads", Ints{2, 1, 1, 2, 1, 1}}, {"strides", Ints{2, 1, 2}}, {"dilations", Ints{2, 2, 1}}});
       }, 1e-4},
      {"avg_pool3d_depth_slices_then_rows", [] {
         return graph_of(K::AvgPool, {f32({1, 1, 4, 40, 40})}, {{"kernel", Ints{2, 3, 2}}, {"strides", Ints{2, 2, 2}},
                                                                {"pads", Ints{0, 1, 0, 0, 1, 0}}});
       }},
      {"resize_one_output_row_beyond_binding", [] {
         return graph_of(K::Resize, {f32({1, 1, 10, 600})}, {{"sizes", Ints{1, 1, 20, 1200}}, {"mode", S("linear")}});
       }, 1e-4},
      // max_pool_with_indices cut like max_pool, each piece's indices moved to the whole input's
      // flat positions (N, C, spatial; storage_order 1: first spatial dim fastest).
      {"max_pool_with_indices_rows", [] {
         return pool_indices_of(f32({1, 2, 64, 32}), {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      {"max_pool_with_indices_channels_column_major", [] {
         return pool_indices_of(f32({2, 3, 24, 24}), {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t(1)}});
       }},
      // Data beyond the range: per-block scatters, each with the indices moved into its block
      // (wrapped when negative; those outside the block skipped).
      {"scatter_nd_long_data_add", [] {
         return scatter_of(K::ScatterND, f32({3000}), typed(DType::i32, {64, 1}), f32({64}), {400},
                           {{"reduction", S("add")}});
       }, 1e-4},
      {"scatter_nd_rows_i64_none", [] {
         return scatter_of(K::ScatterND, f32({1200, 2}), typed(DType::i64, {40, 1}), f32({40, 2}), {150}, {});
       }},
      {"scatter_nd_pairs_max", [] {
         return scatter_of(K::ScatterND, f32({700, 3}), typed(DType::i32, {30, 2}), f32({30}), {90, 1},
                           {{"reduction", S("max")}});
       }},
      // Indices and updates beyond the range: a chain of scatters over blocks of tuples, in order.
      {"scatter_nd_many_tuples_add", [] {
         return scatter_of(K::ScatterND, f32({3000}), typed(DType::i32, {1200, 1}), f32({1200}), {400},
                           {{"reduction", S("add")}});
       }, 1e-4},
      {"scatter_nd_many_tuples_i64_none_duplicates", [] {
         return scatter_of(K::ScatterND, f32({600, 2}), typed(DType::i64, {35, 20, 1}), f32({35, 20, 2}), {75}, {});
       }},
      {"scatter_elements_long_axis_mul", [] {
         return scatter_of(K::ScatterElements, f32({1, 2500}), typed(DType::i32, {1, 300}), f32({1, 300}), {330},
                           {{"axis", int64_t(1)}, {"reduction", S("mul")}});
       }, 1e-4},
      // One output row (all positions of one output row, times K) beyond the range: one piece per
      // output row, each cut along its columns with their halo.
      {"im2col_one_output_row_beyond_binding", [] {
         return graph_of(K::Im2Col, {f32({1, 1, 6, 256})}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
       }},
      {"im2col_one_output_row_beyond_binding_strided_nhwc_batch", [] {
         return graph_of(K::Im2Col, {f32({2, 9, 128, 2})},
                         {{"kernel", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}},
                          {"input_layout", std::string("NHWC")}});
       }},
      // Rows (one index of the dims before the axis) beyond the range: one piece per row, each
      // then cut over blocks of its axis.
      {"scatter_elements_rows_then_axis_blocks_add", [] {
         return scatter_of(K::ScatterElements, f32({3, 1500}), typed(DType::i32, {3, 100}), f32({3, 100}), {200},
                           {{"axis", int64_t(1)}, {"reduction", S("add")}});
       }, 1e-4},
      {"reduce_log_sum_exp_rows", [] { return graph_of(K::ReduceLogSumExp, {f32({32, 256})}, {{"axes", Ints{1}}}); }},
      // Reductions too large for a binding even for one index of their kept dims (issue 25): partial
      // reductions over blocks of one reduced dim, then a combining reduction of the partials.
      {"reduce_sum_to_scalar", [] { return graph_of(K::ReduceSum, {f32({32, 256})}, {{"keepdims", false}}); }, 1e-4},
      {"reduce_sum_i32_to_scalar", [] { return graph_of(K::ReduceSum, {typed(DType::i32, {3000})}); }},
      {"reduce_mean_to_scalar_keepdims", [] { return graph_of(K::ReduceMean, {f32({3, 40, 50})}); }, 1e-4},
      {"reduce_mean_i32_long_axis", [] {
         return graph_of(K::ReduceMean, {typed(DType::i32, {2, 1500})}, {{"axes", Ints{1}}});
       }},
      {"reduce_max_long_rows", [] {
         return graph_of(K::ReduceMax, {f32({4, 2048})}, {{"axes", Ints{1}}, {"keepdims", false}});
       }},
      {"reduce_min_long_columns", [] { return graph_of(K::ReduceMin, {f32({3000, 2})}, {{"axes", Ints{0}}}); }},
      {"reduce_prod_to_scalar", [] { return graph_of(K::ReduceProd, {f32({1500})}); }, 1e-4, 0.99, 1.01},
      {"reduce_l1_to_scalar", [] { return graph_of(K::ReduceL1, {f32({2, 1500})}, {{"keepdims", false}}); }, 1e-4},
      {"reduce_l2_inner_axes", [] {
         return graph_of(K::ReduceL2, {f32({2, 24, 60})}, {{"axes", Ints{1, 2}}});
       }, 1e-4},
      {"reduce_log_sum_exp_long_rows", [] {
         return graph_of(K::ReduceLogSumExp, {f32({2, 2048})}, {{"axes", Ints{-1}}});
       }, 1e-4},
      {"reduce_sum_long_row_unaligned", [] { return graph_of(K::ReduceSum, {f32({1, 20001})}); }, 1e-4},
      // Sorts along an axis beyond a binding, and topks whose k is as long as a block: an odd-even
      // transposition sort over blocks of the axis (codegen/range_split_sort.cpp). i32 keys in
      // [-8, 8) tie often, so the payloads check that equal keys keep their input order.
      {"sort_one_long_row", [] { return sort_of({f32({2048})}, {}); }},
      {"sort_i32_rows_descending_with_payload", [] {
         return sort_of({typed(DType::i32, {3, 1500}), typed(DType::i64, {3, 1500})},
                         {{"axis", int64_t(1)}, {"descending", true}});
       }},
      {"sort_middle_axis_uneven_blocks", [] {
         return sort_of({f32({2, 700, 3}), typed(DType::i32, {2, 700, 3})}, {{"axis", int64_t(1)}});
       }},
      {"sort_i32_stable_odd_block_count", [] {
         return sort_of({typed(DType::i32, {1, 1300}), f32({1, 1300})}, {{"axis", int64_t(-1)}});
       }},
      // Axes with dims after them whose blocks would be too short: transposed to the last dim.
      {"sort_short_axis_long_inner_dims", [] {
         return sort_of({typed(DType::i32, {3, 400, 5}), f32({3, 400, 5})}, {{"axis", int64_t(0)}});
       }},
      {"sort_long_middle_axis_transposed", [] { return sort_of({f32({2, 3000, 3})}, {{"axis", int64_t(1)}}); }},
      {"topk_first_axis_of_columns", [] { return topk_of(f32({1500, 3}), {{"k", int64_t(1200)}, {"axis", int64_t(0)}}); }},
      // Rows after the first start at offsets no view may (1501 keys): assembled in aligned chunks.
      {"sort_rows_ending_unaligned", [] {
         return sort_of({f32({3, 1501}), typed(DType::i32, {3, 1501})}, {{"axis", int64_t(1)}});
       }},
      // Gathers whose data is beyond a binding along the gathered axis (an embedding table): a gather
      // per block, chosen by selects. Indices in [-8, 8): negative ones wrap into the last block, and
      // on 6 rows -8, -7, 6 and 7 are out of range (zeros). The result must fit (a gather's result
      // is not cut).
      {"gather_rows_of_a_table_beyond_a_binding", [] {
         return graph_of(K::Gather, {f32({6, 200}), typed(DType::i64, {5})}, {{"axis", int64_t(0)}});
       }},
      {"gather_columns_i32_indices", [] {
         return graph_of(K::Gather, {f32({3, 700}), typed(DType::i32, {4})}, {{"axis", int64_t(1)}});
       }},
      // softmax / log_softmax whose one row is beyond a binding: the ops they are made of.
      {"softmax_long_rows", [] { return graph_of(K::Softmax, {f32({3, 1200})}, {{"axis", int64_t(1)}}); }, 1e-4},
      {"log_softmax_long_first_axis", [] { return graph_of(K::LogSoftmax, {f32({1500, 2})}, {{"axis", int64_t(0)}}); }, 1e-4},
      // A grouped conv whose one image is beyond a binding: convs over blocks of whole groups.
      {"grouped_conv_one_image_by_groups", [] {
         return graph_of(K::Conv, {f32({1, 8, 12, 12}), f32({8, 2, 3, 3}), f32({8})},
                         {{"pads", Ints{1, 1, 1, 1}}, {"groups", int64_t(4)}});
       }, 1e-4},
      {"grouped_conv_two_images_by_groups", [] {
         return graph_of(K::Conv, {f32({2, 8, 12, 12}), f32({8, 2, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}, {"groups", int64_t(4)}});
       }, 1e-4},
      {"topk_k_as_long_as_a_block", [] { return topk_of(f32({2048}), {{"k", int64_t(1500)}}); }},
      {"topk_smallest_i32_ties_i32_indices", [] {
         return topk_of(typed(DType::i32, {2, 1100}),
                        {{"k", int64_t(900)}, {"largest", false}, {"index_type", std::string("i32")}});
       }},
  };
}

class RangeSplitTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(RangeSplitTest, PiecesMatchReferenceWithinTheRange) {
  const SplitCase& c = GetParam();
  ir::Graph g = c.build();
  GpuRunOptions o;
  o.rel_tol = c.rel_tol;
  o.adjust_target = [](TargetLimits& t) {
    t.name = "tiny-range";
    t.max_storage_buffer_range = kTinyRange;
  };
  GpuRun run;
  try {
    std::map<std::string, HostTensor> inputs = random_inputs(g, 25);
    std::mt19937 rng(25);
    for (const ir::Value* v : g.inputs())
      if (is_float(v->type.dtype)) inputs[v->name] = random_tensor(v->type.dtype, v->type.shape, rng, c.low, c.high);
    run = run_on_gpu(g, inputs, o);
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  EXPECT_TRUE(outputs_match(run, o));
  const Manifest& m = run.module.manifest;
  const TensorLookup tensors(m);
  int split = 0;
  std::string all_notes;
  for (const DispatchDesc& d : m.dispatches) {
    for (const BindingDesc& b : d.bindings)
      EXPECT_LE(tensors.tensor(b.tensor).size_bytes(), kTinyRange) << d.name << " binds " << b.tensor;
    if (d.notes.find("split into") != std::string::npos || d.notes.find("partial convs") != std::string::npos ||
        d.notes.find("partial products") != std::string::npos || d.notes.find("partial reduce_") != std::string::npos ||
        d.notes.find("per-block ") != std::string::npos || d.notes.find("odd-even transposition") != std::string::npos)
      ++split;
    all_notes += d.name + ": " + d.notes + "\n";
  }
  // The graph's tensors exceed 4 KiB: the op must have been cut, and the report must say so.
  EXPECT_GE(split, 2) << "no dispatch reports a split:\n" << all_notes;
}

INSTANTIATE_TEST_SUITE_P(EveryFamily, RangeSplitTest, ::testing::ValuesIn(split_cases()),
                         [](const ::testing::TestParamInfo<SplitCase>& i) { return std::string(i.param.name); });

// The report names the limit and the cut.
TEST(RangeSplit, ReportSaysHowAndWhy) {
  ir::Graph g = one_op_graph(K::Relu, {f32({8, 1024})});
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.target.name = "tiny-range";
  co.target.max_storage_buffer_range = kTinyRange;
  ModuleImage image = codegen::compile_graph(g, co);
  ASSERT_EQ(image.manifest.dispatches.size(), 8u);
  const std::string& note = image.manifest.dispatches[0].notes;
  EXPECT_NE(note.find("split into 8 pieces of 1 along dim 0"), std::string::npos) << note;
  EXPECT_NE(note.find("32768 bytes, above target 'tiny-range' maxStorageBufferRange 4096"), std::string::npos) << note;
  // The pieces write straight into the output: views at aligned offsets, no copy.
  const TensorLookup tensors(image.manifest);
  for (const DispatchDesc& d : image.manifest.dispatches) {
    EXPECT_EQ(d.kernel, "elementwise");
    for (const BindingDesc& b : d.bindings) {
      const TensorDesc& t = tensors.tensor(b.tensor);
      EXPECT_EQ(t.view_offset % codegen::view_alignment(co.target), 0u) << t.name;
    }
  }
}

// The cuts along a dim every output element reads say how they were made and which limit forced
// them (compiled only).
TEST(RangeSplit, ReportSaysHowBlocksOfAReadWholeDimWereCut) {
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.target.name = "tiny-range";
  co.target.max_storage_buffer_range = kTinyRange;
  struct Expected {
    ir::Graph graph;
    std::string piece, note;
  };
  std::vector<Expected> cases;
  cases.push_back({one_op_graph(K::ReduceMean, {f32({32, 256})}, {{"keepdims", false}}), "under_test.block0-3",
                   "one of 8 partial reduce_sum over blocks of 4 of dim 0, summed, then divided by the count: operand 0 "
                   "tensor<32x256xf32> is 32768 bytes, above target 'tiny-range' maxStorageBufferRange 4096"});
  cases.push_back({one_op_graph(K::CumSum, {f32({1, 2048})}, {{"axis", int64_t(1)}}), "under_test.part0",
                   "split into 2 pieces of 1024 along the cumsum axis dim 1, each block's result plus the sum of the "
                   "blocks before it: result tensor<1x2048xf32> is 8192 bytes, above target 'tiny-range' "
                   "maxStorageBufferRange 4096"});
  cases.push_back({one_op_graph(K::ArgMax, {f32({2048})}), "under_test.block0-1023",
                   "one of 2 per-block reduce_max and argmax over blocks of 1024 of dim 0, then the argmax of the "
                   "blocks' extremes picks the block: operand 0 tensor<2048xf32> is 8192 bytes"});
  {
    ir::Graph g;
    ir::Op* op = g.add_op(K::TopK, {g.add_input("x", f32({1, 6000}))}, {{"k", int64_t(100)}}, "under_test");
    g.add_output(op->result(0), "values");
    g.add_output(op->result(1), "indices");
    cases.push_back({std::move(g), "under_test.block0-1023",
                     "one of 6 per-block topk over blocks of 1024 of dim 1, then over blocks of 512 of the candidates, "
                     "then a topk of the 188 candidates: operand 0 tensor<1x6000xf32> is 24000 bytes"});
  }
  // Session 18's cuts: a re-cut piece's note ends with the note of the op it cuts.
  const std::string tiny = "above target 'tiny-range' maxStorageBufferRange 4096";
  cases.push_back({one_op_graph(K::LayerNorm, {f32({2, 1500}), f32({1500}), f32({1500})}),
                   "under_test.layer_norm.normalized.part0",
                   "split into 4 pieces of 1024 along dim 1 (for each index of the dims before it): result "
                   "tensor<2x1500xf32> is 12000 bytes, " + tiny + "; the op cut is one of 9 ops that compute layer_norm "
                   "'under_test' over groups of 1500 elements beyond one binding (reduce_mean for the mean, then "
                   "reduce_mean of the squared deviations for the variance: two passes; the rest elementwise), each cut "
                   "again on its own: result tensor<2x1500xf32> is 12000 bytes, " + tiny});
  cases.push_back({one_op_graph(K::Conv, {f32({1, 1, 6, 36, 36}), f32({2, 1, 3, 3, 3})}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}}),
                   "under_test.part0",
                   "split into 72 pieces of 7 along dim 3 (for each index of the dims before it) (dim 2 and any "
                   "windowed dim before it one output index at a time, each with the input rows its window reads): "
                   "result tensor<1x2x6x36x36xf32> is 62208 bytes, " + tiny});
  {
    ir::Graph g;
    ir::Op* op = g.add_op(K::MaxPoolWithIndices, {g.add_input("x", f32({1, 2, 64, 32}))},
                          {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, "under_test");
    g.add_output(op->result(0), "values");
    g.add_output(op->result(1), "indices");
    cases.push_back({std::move(g), "under_test.part0",
                     "one of 6 max_pool_with_indices pieces, split into 6 pieces of 15 along dim 2, each piece's indices "
                     "moved by its input box's flat position in the whole input: result 1 tensor<1x2x32x16xi64> is 8192 "
                     "bytes, " + tiny});
  }
  cases.push_back({one_op_graph(K::ScatterND, {f32({3000}), typed(DType::i32, {64, 1}), f32({64})}),
                   "under_test.block0-1023",
                   "one of 3 per-block scatter_nd over blocks of 1024 of dim 0, each with the indices moved into its "
                   "block (those outside it skipped): result tensor<3000xf32> is 12000 bytes, " + tiny});
  cases.push_back({one_op_graph(K::Im2Col, {f32({1, 1, 6, 256})}, {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}),
                   "under_test.part0.part0",
                   "split into 3 pieces of 112 along output positions: result tensor<1x256x9xf32> is 9216 bytes, " +
                       tiny + "; the op cut is one of 6 im2col rows, one piece per output row of 256 positions (output "
                       "positions (whole rows)) with the input rows its window reads, each cut again along its columns: "
                       "result tensor<1x1536x9xf32> is 55296 bytes, " + tiny});
  for (Expected& e : cases) {
    ModuleImage image = codegen::compile_graph(e.graph, co);
    bool found = false;
    std::string all;
    for (const DispatchDesc& d : image.manifest.dispatches) {
      all += d.name + " [" + (d.ops.empty() ? "" : d.ops.front()) + "]: " + d.notes + "\n";
      if (!d.ops.empty() && d.ops.front().find("'" + e.piece + "'") != std::string::npos) {
        found = true;
        EXPECT_NE(d.notes.find(e.note), std::string::npos) << e.piece << ": " << d.notes << "\n" << all;
      }
    }
    EXPECT_TRUE(found) << "no dispatch of " << e.piece << ":\n" << all;
    // Every dispatch is a piece, a copy or view around the pieces, or says what it combines.
    for (const DispatchDesc& d : image.manifest.dispatches)
      if (d.kernel != "slice" && d.kernel != "concat" && d.kernel != "copy") {
        EXPECT_FALSE(d.notes.empty()) << d.name << " has no note:\n" << all;
      }
  }
}

// A big image upsampled (issue 25's user case): a 3x2048x2048 image to 8192x8192 (768 MiB of
// result) on the 2^27-byte profiles, cut along the output rows, each piece reading the input rows
// its outputs sample (compiled only: the pieces themselves are what the tiny-range cases run).
TEST(RangeSplit, BigImageUpsamplingIsCutAlongItsRows) {
  for (const char* mode : {"nearest", "linear"}) {
    SCOPED_TRACE(mode);
    ir::Graph g = one_op_graph(K::Resize, {f32({1, 3, 2048, 2048})},
                               {{"sizes", Ints{1, 3, 8192, 8192}}, {"mode", std::string(mode)}});
    codegen::CompileOptions co;
    co.target = find_target("lavapipe").limits;
    ModuleImage image = codegen::compile_graph(g, co);
    int pieces = 0;
    for (const DispatchDesc& d : image.manifest.dispatches) {
      if (d.kernel != "resize") continue;
      ++pieces;
      EXPECT_NE(d.notes.find("along dim 2 (for each index of the dims before it) (resized: each piece reads the input "
                             "rows its outputs sample)"),
                std::string::npos)
          << d.notes;
    }
    EXPECT_EQ(pieces, 3 * 8192 * 8192 * 4 / (1 << 27)) << "pieces of 4096 rows of each channel";
  }
}

// What cannot be split is refused in one line naming the op, the operand, the size and the limit.
TEST(RangeSplit, UnsplittableOpsAreRefusedClearly) {
  codegen::CompileOptions co;
  co.target = find_target("lavapipe").limits;
  co.target.name = "tiny-range";
  co.target.max_storage_buffer_range = kTinyRange;
  struct Refusal {
    ir::Graph graph;
    std::vector<std::string> says;
  };
  std::vector<Refusal> cases;
  // More blocks of the axis than the odd-even transposition sort takes (its rounds grow as blocks^2).
  cases.push_back({one_op_graph(K::Sort, {f32({20000})}),
                   {"sort 'under_test'", "80000 bytes, above target 'tiny-range' maxStorageBufferRange 4096",
                    "cannot be split", "sort is cut along its axis (dim 0 of length 20000) only in at most 64 blocks"}});
  // One key's row of k is beyond the range: no block of keys fits.
  cases.push_back({one_op_graph(K::Attention, {f32({1, 4, 1100}), f32({1, 4, 1100}), f32({1, 4, 16})},
                                {{"causal", true}, {"scale", 0.25}}),
                   {"attention 'under_test'", "tensor<1x4x1100xf32> is 17600 bytes", "cannot be split",
                    "attention is cut along its keys only in blocks whose k and v of one batch index fit one binding"}});
  cases.push_back({one_op_graph(K::Conv, {f32({1, 2, 8, 8}), f32({2, 2, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}}),
                   {}});  // fits: compiles
  // The i64 indices of a piece of an NHWC input cut along rows (several channels) are not one
  // constant away from the whole input's.
  cases.push_back({one_op_graph(K::MaxPoolWithIndices, {f32({1, 40, 20, 3})},
                                {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"layout", std::string("NHWC")}}),
                   {"max_pool_with_indices 'under_test'", "cannot be split",
                    "each piece's input box is single indices, then one range, then whole dims"}});
  // One tuple's update (a row of 1100 floats) is beyond the range.
  cases.push_back({one_op_graph(K::ScatterND, {f32({2, 1100}), typed(DType::i32, {3, 1}), f32({3, 1100})}),
                   {"scatter_nd 'under_test'", "cannot be split",
                    "scatter_nd is cut over blocks of its index tuples where one tuple's index and update each fit"}});
  // One row of rhs is beyond the range: no block of K fits.
  cases.push_back({one_op_graph(K::MatMul, {f32({4, 2048}), f32({2048, 2048})}),
                   {"matmul 'under_test'", "cannot be split", "rhs"}});
  for (Refusal& r : cases) {
    std::string e = compile_error(r.graph, co);
    if (r.says.empty()) {
      EXPECT_EQ(e, "(compiled)");
      continue;
    }
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    for (const std::string& s : r.says) EXPECT_NE(e.find(s), std::string::npos) << "missing '" << s << "' in: " << e;
  }
}

// Zero-copy concat and slice in ordinary models (e.g. DenseNet's channel concat at batch 1): the
// producers write into the concat's bytes and the slice is a view, on the device's own limits.
TEST(RangeSplit, InPlaceConcatAndSliceViewsMatchReference) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", f32({1, 8, 8, 8}));
  ir::Value* a = g.add_op(K::Relu, {x}, {}, "a")->result();
  ir::Value* b = g.add_op(K::Sigmoid, {x}, {}, "b")->result();
  ir::Value* c = g.add_op(K::Concat, {a, b}, {{"axis", int64_t(1)}}, "cat")->result();
  ir::Value* s = g.add_op(K::Slice, {c}, {{"starts", Ints{4}}, {"ends", Ints{12}}, {"axes", Ints{1}}}, "mid")->result();
  g.add_output(g.add_op(K::Exp, {s}, {}, "e")->result(), "y");
  g.add_output(c, "both");
  codegen::StoragePlan plan = codegen::plan_storage(g);
  int zero_copy = 0;
  for (const ir::Op* op : g.ops()) zero_copy += plan.zero_copy.count(op) ? 1 : 0;
  EXPECT_EQ(zero_copy, 2) << "the concat and the slice should both be views";
  GpuRun run = run_on_gpu(g, random_inputs(g, 3));
  EXPECT_TRUE(outputs_match(run));
  for (const DispatchDesc& d : run.module.manifest.dispatches) {
    EXPECT_EQ(d.kernel, "elementwise") << d.name << ": no copy kernel expected";
  }
}

// Storage above maxMemoryAllocationSize (issue 25 item 2): a context that holds buffers as if the
// device allowed 8 KiB per allocation, so inputs, outputs, the arena, staging and device tensors of
// 16-32 KiB are each held in segments, cut between the pieces the dispatches bind.
rt::Context& small_allocation_context() {
  static rt::Context ctx([] {
    rt::ContextOptions o;
    o.max_allocation_bytes = 8192;
    return o;
  }());
  return ctx;
}

ir::Graph conv_pool_chain() {
  ir::Graph g;
  ir::Value* x = g.add_input("x", f32({4, 4, 16, 16}));  // 16 KiB
  ir::Value* w = g.add_input("w", f32({8, 4, 3, 3}));
  ir::Value* c = g.add_op(K::Conv, {x, w}, {{"pads", Ints{1, 1, 1, 1}}}, "conv")->result();  // 32 KiB in the arena
  ir::Value* r = g.add_op(K::Relu, {c})->result();
  g.add_output(g.add_op(K::MaxPool, {r}, {{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}}, "pool")->result(), "pooled");
  g.add_output(g.add_op(K::Sigmoid, {r}, {}, "s")->result(), "activated");  // 32 KiB output
  return g;
}

TEST(RangeSplit, StorageInSeveralAllocationsMatchesReference) {
  ir::Graph g = conv_pool_chain();
  GpuRunOptions o;
  o.rel_tol = 1e-4;
  o.context = &small_allocation_context();  // planned for its limits: the allocation is the bound
  GpuRun run = run_on_gpu(g, random_inputs(g, 11), o);
  EXPECT_TRUE(outputs_match(run, o));
  int split = 0;
  for (const DispatchDesc& d : run.module.manifest.dispatches)
    split += d.notes.find("above target 'host' maxMemoryAllocationSize 8192") != std::string::npos ? 1 : 0;
  // Under VKC_TEST_MAX_BINDING the smaller binding is the bound the notes name.
  if (!split_testing()) {
    EXPECT_GE(split, 2) << "the pieces should be cut for the allocation size";
  }
  // The plan really is segmented: each storage above 8 KiB is listed as several allocations.
  int segmented = 0;
  for (const DeviceAllocation& a : module_allocations(run.module.manifest, 8192, 16)) {
    EXPECT_LE(a.bytes, 8192u) << a.what;
    segmented += a.what.find("segment") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(segmented, 8) << "inputs, outputs and the arena should each be in segments";
  // Again through staging buffers (a discrete GPU's path), themselves in segments.
  o.context->impl().force_staging = true;
  GpuRun staged = run_on_gpu(g, random_inputs(g, 13), o);
  o.context->impl().force_staging = false;
  EXPECT_TRUE(outputs_match(staged, o));
}

TEST(RangeSplit, DeviceTensorsInSeveralAllocations) {
  // Device-resident inputs and outputs of 32 KiB, uploaded, copied in and out, and downloaded in
  // segments of 8 KiB.
  rt::Context& ctx = small_allocation_context();
  ir::Graph g = conv_pool_chain();
  codegen::CompileOptions co;
  co.target = ctx.limits();
  co.target.max_storage_buffer_range = kTinyRange;
  ModuleImage m = codegen::compile_graph(g, co);
  rt::Program program(ctx, m);
  std::map<std::string, HostTensor> inputs = random_inputs(g, 12);
  std::map<std::string, std::shared_ptr<rt::DeviceTensor>> device_inputs;
  for (const auto& [name, h] : inputs) {
    auto t = std::make_shared<rt::DeviceTensor>(ctx, h.dtype(), h.shape());
    t->upload(h);
    EXPECT_TRUE(same_bytes(t->download(), h)) << name << " did not survive upload and download";
    device_inputs[name] = t;
  }
  rt::ExecuteOptions eo;
  eo.poison_outputs = true;
  program.submit({}, device_inputs, {"pooled", "activated"}, eo);
  rt::ExecutionResults results = program.wait();
  std::map<std::string, HostTensor> reference = ir::interpret(g, inputs);
  for (const auto& [name, ref] : reference) {
    ASSERT_TRUE(results.device.count(name)) << name;
    Comparison c = compare(results.device.at(name)->download(), ref, 1e-4, 1e-6);
    EXPECT_TRUE(c.ok) << name << ": " << c.message;
  }
}

// The seed conv at full size (1x64x512x512 * 256x64x3x3, a 256 MiB result) on the 2^27-byte
// profiles: compiled piece by piece and run on the device against the reference. Minutes on
// lavapipe: behind VKC_LARGE_TESTS.
TEST(RangeSplitLarge, SeedConvAtFullSizeOnMinimumProfiles) {
  if (std::getenv("VKC_LARGE_TESTS") == nullptr || std::string(std::getenv("VKC_LARGE_TESTS")) != "1")
    GTEST_SKIP() << "full-size seed conv: set VKC_LARGE_TESTS=1 to run it";
  ir::Graph g = one_op_graph(K::Conv, {f32({1, 64, 512, 512}), f32({256, 64, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}});
  for (const char* target : {"lavapipe", "vulkan-min"}) {
    SCOPED_TRACE(target);
    GpuRunOptions o;
    o.target = target;
    o.rel_tol = 1e-4;
    o.abs_tol = 1e-4;
    GpuRun run = run_on_gpu(g, random_inputs(g, 7), o);
    EXPECT_TRUE(outputs_match(run, o));
    EXPECT_GE(run.module.manifest.dispatches.size(), 2u);
  }
}

}  // namespace
}  // namespace vkc::test
