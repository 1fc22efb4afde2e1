// Normalized geometry of conv, conv_transpose, im2col and pooling ops.
//
// Layout strings are resolved once here so that the verifier, the reference interpreter and every
// kernel planner agree on which physical dim is which. Letters: N batch, C input channels,
// F output channels (filters), spatial W (1-D), H W (2-D), D H W (3-D).
//
// Default layouts: input "NC"+spatial, output "NC"+spatial (conv: F plays C's role in the output,
// written with the letter C in output layouts), filter "FC"+spatial for conv and im2col,
// "CF"+spatial for conv_transpose (ONNX's [C_in, C_out/groups, k...]).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

struct ConvGeometry {
  int spatial_rank = 0;         // 1, 2 or 3
  bool transposed = false;      // conv_transpose
  int64_t batch = 0;            // N
  int64_t in_channels = 0;      // C of the input (all groups)
  int64_t out_channels = 0;     // channels of the output (all groups)
  int64_t groups = 1;
  std::vector<int64_t> in_spatial, kernel, out_spatial;  // per spatial dim, canonical D,H,W order
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;
  std::vector<int64_t> output_padding;  // conv_transpose only (zeros otherwise)

  // Physical position of each logical dim. input_pos/output_pos: [N, C, S0, ..]; filter_pos:
  // [F, C, S0, ..]. For conv the filter's F dim has out_channels entries and its C dim
  // in_channels/groups; for conv_transpose, C has in_channels and F has out_channels/groups.
  std::vector<int> input_pos, filter_pos, output_pos;
  std::string input_layout, filter_layout, output_layout;  // resolved letter strings

  int64_t in_channels_per_group() const { return in_channels / groups; }
  int64_t out_channels_per_group() const { return out_channels / groups; }
  // Output shape in the output layout (physical order).
  Shape output_shape() const;
};

// Geometry of a conv, conv_transpose or im2col op (for im2col, out_channels is 0 and filter_pos
// describes the filter layout whose column order the im2col result follows). Checks every
// constraint and throws vkc::Error naming the op, the operand and the dim.
ConvGeometry conv_geometry(const Op& op);

// Layouts are letter strings ("NHWC") or comma-separated permutations of the canonical order
// given by `letters` ("0,2,3,1" == "NHWC" for "NCHW"). layout_letters returns the letter form.
std::string layout_letters(const std::string& layout, const std::string& letters,
                           const std::string& what);

// Parses a layout string such as "NHWC" or "CWF" for `letters` (the set it must be a permutation
// of, e.g. "NCHW"); returns the physical position of each letter of `letters`, in that order.
// Throws vkc::Error mentioning `what` (e.g. "conv 'c1': input_layout") when invalid.
std::vector<int> parse_layout(const std::string& layout, const std::string& letters,
                              const std::string& what);

// Strides of a tensor's logical dims (N/F, C, spatial...): logical dim i lives at physical
// position pos[i] (input_pos, filter_pos or output_pos of a ConvGeometry).
std::vector<int64_t> logical_strides(const Shape& physical, const std::vector<int>& pos);

// The canonical spatial letters for a spatial rank: "W", "HW", "DHW".
std::string spatial_letters(int spatial_rank);

// Pool geometry: same fields, with in_channels == out_channels, filter unused. Layout attr
// "layout" (default "NC"+spatial). `global` pools over the full spatial extent.
ConvGeometry pool_geometry(const Op& op);

// im2col result layout: for groups == 1 [N, P, K], else [N, G, P, K/G], where P is the product of
// output spatial dims (row-major over D,H,W) and K runs over (C per group) x kernel dims in the
// order the non-F letters appear in filter_layout (first letter slowest). This is what lets
// im2col + matmul respect any filter layout.
struct Im2ColColumns {
  std::vector<char> order;  // e.g. {'C','H','W'} or {'H','W','C'} or {'W','C'}
  std::vector<int64_t> extents;  // matching extents (C per group, kernel dims)
  int64_t k = 0;                 // product of extents
};
Im2ColColumns im2col_columns(const ConvGeometry& g);

}  // namespace vkc::ir
