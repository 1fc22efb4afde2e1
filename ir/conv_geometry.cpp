// Layout resolution and output-size arithmetic for conv, conv_transpose, im2col and pooling.
//
// Everything that depends on layouts or on the ONNX size formulas lives here, so the verifier, the
// interpreter and the kernel planners cannot disagree about which physical dim is which.
#include "ir/conv_geometry.h"

#include <algorithm>
#include <cctype>

#include "support/error.h"
#include "support/int_math.h"

namespace vkc::ir {
namespace {

template <typename... Parts>
[[noreturn]] void fail(const Op& op, const Parts&... parts) {
  throw Error(cat(op.describe(), ": ", parts...));
}

// Letter of spatial dim i ("D", "H" or "W") for messages.
char spatial_letter(int spatial_rank, size_t i) { return spatial_letters(spatial_rank)[i]; }

// An optional per-spatial-dim attribute (strides, dilations, kernel, output_padding): S entries,
// each >= min_value; absent means all `fallback`.
std::vector<int64_t> spatial_attr(const Op& op, const std::string& name, int s, int64_t fallback,
                                  int64_t min_value) {
  if (!op.has_attr(name)) return std::vector<int64_t>(size_t(s), fallback);
  const std::vector<int64_t>& v = op.attr_ints(name);
  if (int64_t(v.size()) != s)
    fail(op, "attribute '", name, "' has ", v.size(), " entries, expected ", s,
         " (one per spatial dim)");
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < min_value)
      fail(op, "attribute '", name, "' entry ", i, " (", spatial_letter(s, i), ") is ", v[i],
           ", expected >= ", min_value);
  return v;
}

// pads: 2*S entries, begins then ends (ONNX order), each >= 0; absent means zeros.
void read_pads(const Op& op, ConvGeometry& g) {
  size_t s = size_t(g.spatial_rank);
  g.pad_begin.assign(s, 0);
  g.pad_end.assign(s, 0);
  if (!op.has_attr("pads")) return;
  const std::vector<int64_t>& p = op.attr_ints("pads");
  if (p.size() != 2 * s)
    fail(op, "attribute 'pads' has ", p.size(), " entries, expected ", 2 * s,
         " (begins then ends per spatial dim)");
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] < 0) fail(op, "attribute 'pads' entry ", i, " is ", p[i], ", expected >= 0");
  for (size_t i = 0; i < s; ++i) {
    g.pad_begin[i] = p[i];
    g.pad_end[i] = p[s + i];
  }
}

// Reads N, C and the spatial extents of operand 0 through the resolved input layout.
void read_input(const Op& op, ConvGeometry& g, const std::string& layout_attr) {
  const TensorType& in = op.operand(0)->type;
  if (in.rank() < 3 || in.rank() > 5)
    fail(op, "input has rank ", in.rank(),
         ", expected 3, 4 or 5 (N, C and 1 to 3 spatial dims)");
  g.spatial_rank = int(in.rank()) - 2;
  std::string sp = spatial_letters(g.spatial_rank);
  const std::string input_what = cat(op.describe(), ": ", layout_attr);
  g.input_layout = layout_letters(op.attr_string_or(layout_attr, "NC" + sp), "NC" + sp, input_what);
  g.input_pos = parse_layout(g.input_layout, "NC" + sp, input_what);
  g.batch = in.shape[size_t(g.input_pos[0])];
  g.in_channels = in.shape[size_t(g.input_pos[1])];
  g.in_spatial.clear();
  for (int i = 0; i < g.spatial_rank; ++i) g.in_spatial.push_back(in.shape[size_t(g.input_pos[2 + i])]);
}

// Forward (conv, im2col, pool) output size per spatial dim; floor or ceil division.
void forward_output_sizes(const Op& op, ConvGeometry& g, bool ceil_mode) {
  g.out_spatial.clear();
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i) {
    int64_t padded = g.in_spatial[i] + g.pad_begin[i] + g.pad_end[i];
    int64_t extent = g.dilations[i] * (g.kernel[i] - 1) + 1;
    if (padded < extent)
      fail(op, "output spatial dim ", i, " (", spatial_letter(g.spatial_rank, i),
           ") would be empty: input ", g.in_spatial[i], " + pads ", g.pad_begin[i], "+",
           g.pad_end[i], " is smaller than the dilated kernel extent ", extent);
    int64_t span = padded - extent;
    int64_t out = (ceil_mode ? ceil_div(span, g.strides[i]) : span / g.strides[i]) + 1;
    // ONNX ceil_mode: the last window must start inside the input or the left padding.
    if (ceil_mode && (out - 1) * g.strides[i] >= g.in_spatial[i] + g.pad_begin[i]) --out;
    g.out_spatial.push_back(out);
  }
}

void check_groups(const Op& op, ConvGeometry& g) {
  g.groups = op.attr_int("groups");
  if (g.groups < 1) fail(op, "attribute 'groups' is ", g.groups, ", expected >= 1");
  if (g.in_channels % g.groups != 0)
    fail(op, "input dim ", g.input_pos[1], " (C) is ", g.in_channels,
         ", not divisible by groups ", g.groups);
}

void read_filter(const Op& op, ConvGeometry& g) {
  const TensorType& f = op.operand(1)->type;
  if (f.rank() != g.spatial_rank + 2)
    fail(op, "filter has rank ", f.rank(), ", expected ", g.spatial_rank + 2, " (same as input)");
  g.kernel.clear();
  for (int i = 0; i < g.spatial_rank; ++i) {
    int pos = g.filter_pos[size_t(2 + i)];
    int64_t k = f.shape[size_t(pos)];
    if (k < 1)
      fail(op, "filter dim ", pos, " (", spatial_letter(g.spatial_rank, size_t(i)), ") is ", k,
           ", expected >= 1");
    g.kernel.push_back(k);
  }
  int64_t f_dim = f.shape[size_t(g.filter_pos[0])];
  int64_t c_dim = f.shape[size_t(g.filter_pos[1])];
  if (!g.transposed) {
    if (f_dim % g.groups != 0)
      fail(op, "filter dim ", g.filter_pos[0], " (F) is ", f_dim, ", not divisible by groups ",
           g.groups);
    if (c_dim != g.in_channels / g.groups)
      fail(op, "filter dim ", g.filter_pos[1], " (C/groups) is ", c_dim,
           ", input channels/groups is ", g.in_channels / g.groups);
    g.out_channels = f_dim;
  } else {
    if (c_dim != g.in_channels)
      fail(op, "filter dim ", g.filter_pos[1], " (C) is ", c_dim, ", input channels is ",
           g.in_channels);
    g.out_channels = f_dim * g.groups;
  }
}

// conv_transpose output sizes; with output_shape, the pads are derived from it (ONNX NOTSET rule:
// the odd unit of padding goes to the beginning). output_shape overrides `pads` when both are given.
void transposed_output_sizes(const Op& op, ConvGeometry& g) {
  size_t s = size_t(g.spatial_rank);
  g.output_padding = spatial_attr(op, "output_padding", g.spatial_rank, 0, 0);
  for (size_t i = 0; i < s; ++i)
    if (g.output_padding[i] >= g.strides[i] && g.output_padding[i] >= g.dilations[i])
      fail(op, "attribute 'output_padding' entry ", i, " (", spatial_letter(g.spatial_rank, i),
           ") is ", g.output_padding[i], ", expected less than stride ", g.strides[i],
           " or dilation ", g.dilations[i]);
  std::vector<int64_t> full(s);  // output size with zero padding
  for (size_t i = 0; i < s; ++i)
    full[i] = g.strides[i] * (g.in_spatial[i] - 1) + g.output_padding[i] +
              g.dilations[i] * (g.kernel[i] - 1) + 1;
  if (op.has_attr("output_shape")) {
    const std::vector<int64_t>& want = op.attr_ints("output_shape");
    if (want.size() != s)
      fail(op, "attribute 'output_shape' has ", want.size(), " entries, expected ", s,
           " (one per spatial dim)");
    for (size_t i = 0; i < s; ++i) {
      int64_t total = full[i] - want[i];
      if (want[i] < 1 || total < 0)
        fail(op, "attribute 'output_shape' entry ", i, " (", spatial_letter(g.spatial_rank, i),
             ") is ", want[i], ", expected 1 to ", full[i]);
      g.pad_begin[i] = total - total / 2;
      g.pad_end[i] = total / 2;
    }
  }
  g.out_spatial.clear();
  for (size_t i = 0; i < s; ++i) {
    int64_t out = full[i] - g.pad_begin[i] - g.pad_end[i];
    if (out < 1)
      fail(op, "output spatial dim ", i, " (", spatial_letter(g.spatial_rank, i), ") is ", out,
           ": pads ", g.pad_begin[i], "+", g.pad_end[i], " exceed the unpadded output size ",
           full[i]);
    g.out_spatial.push_back(out);
  }
}

}  // namespace

Shape ConvGeometry::output_shape() const {
  Shape out(size_t(spatial_rank) + 2, 0);
  out[size_t(output_pos[0])] = batch;
  out[size_t(output_pos[1])] = out_channels;
  for (int i = 0; i < spatial_rank; ++i) out[size_t(output_pos[size_t(2 + i)])] = out_spatial[size_t(i)];
  return out;
}

std::string spatial_letters(int spatial_rank) {
  switch (spatial_rank) {
    case 1: return "W";
    case 2: return "HW";
    case 3: return "DHW";
    default: throw Error(cat("spatial rank ", spatial_rank, " is not supported, expected 1 to 3"));
  }
}

std::string layout_letters(const std::string& layout, const std::string& letters,
                           const std::string& what) {
  if (layout.empty() || !std::isdigit(static_cast<unsigned char>(layout[0]))) return layout;
  // Permutation form: "0,2,3,1" puts canonical dims (the order of `letters`) 0, 2, 3, 1 at
  // physical positions 0..3, i.e. "NHWC" for an "NCHW" canonical order.
  std::string out;
  size_t start = 0;
  while (start <= layout.size()) {
    size_t comma = layout.find(',', start);
    std::string item = layout.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool digits = !item.empty() && item.size() <= 2 &&
                  std::all_of(item.begin(), item.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    size_t index = digits ? size_t(std::stoi(item)) : letters.size();
    if (index >= letters.size())
      throw Error(cat(what, " is '", layout, "', expected a permutation of 0..", letters.size() - 1,
                      " or of the letters '", letters, "'"));
    out += letters[index];
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int> parse_layout(const std::string& raw_layout, const std::string& letters,
                              const std::string& what) {
  const std::string layout = layout_letters(raw_layout, letters, what);
  std::vector<int> pos(letters.size(), -1);
  bool ok = layout.size() == letters.size();
  for (size_t i = 0; ok && i < layout.size(); ++i) {
    size_t l = letters.find(layout[i]);
    if (l == std::string::npos || pos[l] >= 0) {
      ok = false;
    } else {
      pos[l] = int(i);
    }
  }
  if (!ok) throw Error(cat(what, " is '", raw_layout, "', expected a permutation of '", letters, "'"));
  return pos;
}

ConvGeometry conv_geometry(const Op& op) {
  if (op.kind != OpKind::Conv && op.kind != OpKind::ConvTranspose && op.kind != OpKind::Im2Col &&
      op.kind != OpKind::ConvInteger)
    fail(op, "internal: conv_geometry called on a non-conv op");
  ConvGeometry g;
  g.transposed = op.kind == OpKind::ConvTranspose;
  read_input(op, g, "input_layout");
  std::string sp = spatial_letters(g.spatial_rank);
  g.filter_layout = layout_letters(op.attr_string_or("filter_layout", (g.transposed ? "CF" : "FC") + sp),
                                   "FC" + sp, cat(op.describe(), ": filter_layout"));
  g.filter_pos = parse_layout(g.filter_layout, "FC" + sp, cat(op.describe(), ": filter_layout"));
  if (op.kind == OpKind::Im2Col) {
    g.output_layout = "NC" + sp;  // im2col has its own [N, (G,) P, K] result; see the header
  } else {
    g.output_layout = layout_letters(op.attr_string_or("output_layout", "NC" + sp), "NC" + sp,
                                     cat(op.describe(), ": output_layout"));
  }
  g.output_pos = parse_layout(g.output_layout, "NC" + sp, cat(op.describe(), ": output_layout"));
  g.strides = spatial_attr(op, "strides", g.spatial_rank, 1, 1);
  g.dilations = spatial_attr(op, "dilations", g.spatial_rank, 1, 1);
  read_pads(op, g);
  check_groups(op, g);
  g.output_padding.assign(size_t(g.spatial_rank), 0);
  if (op.kind == OpKind::Im2Col) {
    g.kernel = spatial_attr(op, "kernel", g.spatial_rank, 1, 1);
    g.out_channels = 0;
    forward_output_sizes(op, g, false);
    return g;
  }
  read_filter(op, g);
  if (g.transposed) {
    transposed_output_sizes(op, g);
  } else {
    forward_output_sizes(op, g, false);
  }
  return g;
}

ConvGeometry pool_geometry(const Op& op) {
  if (op.kind != OpKind::MaxPool && op.kind != OpKind::AvgPool &&
      op.kind != OpKind::MaxPoolWithIndices)
    fail(op, "internal: pool_geometry called on a non-pool op");
  ConvGeometry g;
  read_input(op, g, "layout");
  g.output_layout = g.input_layout;
  g.output_pos = g.input_pos;
  g.out_channels = g.in_channels;
  g.groups = 1;
  g.output_padding.assign(size_t(g.spatial_rank), 0);
  if (op.attr_bool("global")) {
    // Global pooling has no window attributes; accepting them would hide a conversion mistake.
    for (const char* a : {"kernel", "strides", "dilations", "pads"})
      if (op.has_attr(a)) fail(op, "attribute '", a, "' must not be given when global is true");
    if (op.attr_bool("ceil_mode")) fail(op, "attribute 'ceil_mode' must be false when global is true");
    g.kernel = g.in_spatial;
    g.strides.assign(size_t(g.spatial_rank), 1);
    g.dilations.assign(size_t(g.spatial_rank), 1);
    g.pad_begin.assign(size_t(g.spatial_rank), 0);
    g.pad_end.assign(size_t(g.spatial_rank), 0);
    for (size_t i = 0; i < size_t(g.spatial_rank); ++i)
      if (g.in_spatial[i] < 1)
        fail(op, "input spatial dim ", i, " (", spatial_letter(g.spatial_rank, i),
             ") is 0, global pooling needs at least 1 element");
    g.out_spatial.assign(size_t(g.spatial_rank), 1);
    return g;
  }
  if (!op.has_attr("kernel")) fail(op, "missing attribute 'kernel' (required unless global is true)");
  g.kernel = spatial_attr(op, "kernel", g.spatial_rank, 1, 1);
  g.strides = spatial_attr(op, "strides", g.spatial_rank, 1, 1);
  g.dilations = spatial_attr(op, "dilations", g.spatial_rank, 1, 1);
  read_pads(op, g);
  // As in ONNX Runtime: a pad as large as the kernel would allow windows entirely in padding.
  for (size_t i = 0; i < size_t(g.spatial_rank); ++i)
    if (g.pad_begin[i] >= g.kernel[i] || g.pad_end[i] >= g.kernel[i])
      fail(op, "pads for spatial dim ", i, " (", spatial_letter(g.spatial_rank, i), ") are ",
           g.pad_begin[i], "+", g.pad_end[i], ", each must be smaller than kernel ", g.kernel[i]);
  forward_output_sizes(op, g, op.attr_bool("ceil_mode"));
  return g;
}

Im2ColColumns im2col_columns(const ConvGeometry& g) {
  Im2ColColumns cols;
  std::string sp = spatial_letters(g.spatial_rank);
  cols.k = 1;
  for (char c : g.filter_layout) {
    if (c == 'F') continue;
    int64_t extent = c == 'C' ? g.in_channels_per_group() : g.kernel[sp.find(c)];
    cols.order.push_back(c);
    cols.extents.push_back(extent);
    cols.k *= extent;
  }
  return cols;
}

std::vector<int64_t> logical_strides(const Shape& physical, const std::vector<int>& pos) {
  std::vector<int64_t> phys = shape_strides(physical);
  std::vector<int64_t> out(pos.size());
  for (size_t i = 0; i < pos.size(); ++i) out[i] = phys[size_t(pos[i])];
  return out;
}

}  // namespace vkc::ir
