// Resize (opset 10 and 11..19+) and Upsample (7..9), onto the IR resize op.
//
// The IR op takes explicit output sizes, plus the scales when ONNX gave scales: ONNX's coordinate
// transforms divide by the given scale (and align_corners / tf_crop_and_resize use in * scale
// unrounded), not by out / in, so they must survive the rounding of the output size. ONNX's
// input-level options (axes, keep_aspect_ratio_policy, roi per axis) are resolved here.
#include <algorithm>
#include <cmath>

#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

// Output size and transform scale per dim; `scales` is empty when ONNX gave sizes (the transform
// then uses out / in).
struct ResizeTarget {
  std::vector<int64_t> sizes;
  std::vector<double> scales;
};

// Maps per-axis values onto all dims (others get `fill`), checking the count.
template <typename T>
std::vector<T> spread_over_axes(const std::vector<T>& values, const std::vector<int64_t>& axes,
                                int64_t rank, T fill, const std::string& what) {
  if (axes.empty()) {
    if (int64_t(values.size()) != rank)
      throw Error(cat(what, " has ", values.size(), " entries, expected ", rank, " (one per input dim)"));
    return values;
  }
  if (values.size() != axes.size())
    throw Error(cat(what, " has ", values.size(), " entries, expected ", axes.size(), " (one per entry of 'axes')"));
  std::vector<T> full(size_t(rank), fill);
  for (size_t i = 0; i < axes.size(); ++i) full[size_t(axes[i])] = values[i];
  return full;
}

ResizeTarget from_scales(const Shape& in, const std::vector<double>& scales, const std::string& what) {
  ResizeTarget t;
  for (size_t i = 0; i < scales.size(); ++i) {
    double s = scales[i];
    if (!std::isfinite(s) || s <= 0)
      throw Error(cat(what, " entry ", i, " is ", s, ", expected a finite value > 0"));
    double out = std::floor(double(in[i]) * s);  // ONNX: floor(input_dim * scale)
    if (out < 1 || out > double(int64_t(1) << 40))
      throw Error(cat(what, " entry ", i, " is ", s, ": it resizes dim ", i, " of size ", in[i], " to ",
                      out, " elements, expected 1 to 2^40"));
    t.sizes.push_back(int64_t(out));
  }
  t.scales = scales;
  return t;
}

// sizes with keep_aspect_ratio_policy (opset 18): "stretch" takes them as they are;
// "not_larger" / "not_smaller" scale the listed axes by one common factor, the smallest /
// largest of sizes / in, and round the result (half up, as ONNX).
ResizeTarget from_sizes(const Shape& in, const std::vector<int64_t>& sizes, const std::vector<int64_t>& axes,
                        const std::string& policy, const std::string& what) {
  ResizeTarget t;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 1) throw Error(cat(what, " entry ", i, " is ", sizes[i], ", expected >= 1"));
  if (policy == "stretch") {
    t.sizes = sizes;
    return t;
  }
  if (policy != "not_larger" && policy != "not_smaller")
    throw Error(cat("attribute 'keep_aspect_ratio_policy' is '", policy,
                    "', expected stretch, not_larger or not_smaller"));
  std::vector<int64_t> listed = axes;
  if (listed.empty())
    for (size_t i = 0; i < in.size(); ++i) listed.push_back(int64_t(i));
  double scale = policy == "not_larger" ? INFINITY : 0;
  for (int64_t a : listed) {
    double r = double(sizes[size_t(a)]) / double(in[size_t(a)]);
    scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
  }
  t.sizes.assign(in.begin(), in.end());
  t.scales.assign(in.size(), 1.0);
  for (int64_t a : listed) {
    t.sizes[size_t(a)] = std::max<int64_t>(1, int64_t(std::floor(scale * double(in[size_t(a)]) + 0.5)));
    t.scales[size_t(a)] = scale;
  }
  return t;
}

// ONNX Resize-10 and Upsample predate coordinate modes; ONNX Runtime (their de facto definition)
// maps x to x / scale and takes floor when upsampling, ceil when downsampling.
std::string legacy_nearest_mode(NodeContext& n, const Shape& in, const ResizeTarget& t) {
  bool up = false, down = false;
  for (size_t i = 0; i < in.size(); ++i) {
    double s = t.scales.empty() ? double(t.sizes[i]) / double(in[i]) : t.scales[i];
    up = up || s > 1;
    down = down || s < 1;
  }
  if (up && down) n.unsupported("nearest mode mixing upsampled and downsampled dims is not supported before opset 11");
  return down ? "ceil" : "floor";
}

void emit_resize(NodeContext& n, ir::Value* x, const ResizeTarget& t, ir::AttrMap attrs) {
  attrs["sizes"] = t.sizes;
  if (!t.scales.empty()) attrs["scales"] = t.scales;
  n.set_output(0, n.emit(K::Resize, {x}, std::move(attrs)));
}

std::string checked_mode(NodeContext& n) {
  std::string mode = n.attrs.get_string("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";  // Upsample-1 / common aliases
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    n.unsupported(cat("mode '", mode, "' is not supported (nearest, linear or cubic)"));
  if (mode == "cubic" && n.op_type_is("Upsample")) n.unsupported("mode 'cubic' is not an Upsample mode");
  return mode;
}

void import_upsample(NodeContext& n) {
  ir::Value* x = n.input(0);
  const Shape& in = x->type.shape;
  std::string mode = checked_mode(n);
  if (n.opset() < 7) n.unsupported("Upsample before opset 7 (height_scale / width_scale) is not supported");
  std::vector<double> scales =
      n.opset() >= 9 ? n.constant_floats(1, "scales") : n.attrs.get_floats("scales");
  const std::string what = n.opset() >= 9 ? "input 1 'scales'" : "attribute 'scales'";
  ResizeTarget t = from_scales(in, spread_over_axes(scales, {}, x->type.rank(), 1.0, what), what);
  ir::AttrMap attrs{{"mode", mode}, {"coordinate_mode", std::string("asymmetric")}};
  if (mode == "nearest") attrs["nearest_mode"] = legacy_nearest_mode(n, in, t);
  emit_resize(n, x, t, std::move(attrs));
}

void import_resize(NodeContext& n) {
  ir::Value* x = n.input(0);
  const Shape& in = x->type.shape;
  const int64_t rank = x->type.rank();
  std::string mode = checked_mode(n);
  const bool legacy = n.opset() < 11;  // Resize-10: inputs X, scales; no coordinate modes
  std::string coords = legacy ? "asymmetric" : n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (n.attrs.get_int("antialias", 0) != 0) n.unsupported("antialias = 1 is not supported");
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t& a : axes) {
    a = normalize_axis(a, rank, "attribute 'axes' entry");
    if (seen[size_t(a)]) throw Error(cat("attribute 'axes' lists dim ", a, " twice"));
    seen[size_t(a)] = true;
  }
  std::string policy = n.attrs.get_string("keep_aspect_ratio_policy", "stretch");
  // An input is absent when its name is empty or, for scales / sizes, when it has no elements
  // (exporters pass an empty constant for the one they do not use).
  auto given = [&](int i) { return n.has_input(i) && n.input(i)->type.numel() > 0; };
  const int scales_input = legacy ? 1 : 2;
  const bool has_scales = given(scales_input), has_sizes = !legacy && given(3);
  if (has_scales && has_sizes) throw Error("input 2 'scales' and input 3 'sizes' are both given; exactly one is allowed");
  ResizeTarget t;
  if (has_scales) {
    const std::string what = cat("input ", scales_input, " 'scales'");
    t = from_scales(in, spread_over_axes(n.constant_floats(scales_input, "scales"), axes, rank, 1.0, what), what);
  } else if (has_sizes) {
    const std::string what = "input 3 'sizes'";
    std::vector<int64_t> sizes = spread_over_axes(n.constant_ints(3, "sizes"), axes, rank, int64_t(0), what);
    for (size_t i = 0; i < sizes.size(); ++i)
      if (!axes.empty() && !seen[i]) sizes[i] = in[i];
    t = from_sizes(in, sizes, axes, policy, what);
  } else {
    throw Error("neither input 'scales' nor input 'sizes' is given");
  }
  ir::AttrMap attrs{{"mode", mode}, {"coordinate_mode", coords},
                    {"cubic_coeff_a", n.attrs.get_float("cubic_coeff_a", -0.75)},
                    {"exclude_outside", n.attrs.get_int("exclude_outside", 0) != 0},
                    {"extrapolation_value", n.attrs.get_float("extrapolation_value", 0.0)}};
  if (mode == "nearest")
    attrs["nearest_mode"] = legacy ? legacy_nearest_mode(n, in, t) : n.attrs.get_string("nearest_mode", "round_prefer_floor");
  else
    n.attrs.ignore("nearest_mode");
  // roi is read only by tf_crop_and_resize (ONNX ignores it otherwise).
  if (coords == "tf_crop_and_resize" && given(1)) {
    std::vector<double> roi = n.constant_floats(1, "roi");
    const std::string what = "input 1 'roi'";
    size_t listed = axes.empty() ? size_t(rank) : axes.size();
    if (roi.size() != 2 * listed)
      throw Error(cat(what, " has ", roi.size(), " entries, expected ", 2 * listed, " (starts then ends)"));
    std::vector<double> starts(roi.begin(), roi.begin() + std::ptrdiff_t(listed));
    std::vector<double> ends(roi.begin() + std::ptrdiff_t(listed), roi.end());
    starts = spread_over_axes(starts, axes, rank, 0.0, what);
    ends = spread_over_axes(ends, axes, rank, 1.0, what);
    starts.insert(starts.end(), ends.begin(), ends.end());
    attrs["roi"] = starts;
  }
  emit_resize(n, x, t, std::move(attrs));
}

}  // namespace

void register_resize_importers(std::map<std::string, OpImporter>& r) {
  r["Resize"] = import_resize;
  r["Upsample"] = import_upsample;
}

}  // namespace vkc::onnx
