// Attribute checks and coordinate arithmetic of resize; see resize_geometry.h for why it is shared.
#include "ir/resize_geometry.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "support/error.h"

namespace vkc::ir {
namespace {

template <typename... Parts>
[[noreturn]] void fail(const Op& op, const Parts&... parts) {
  throw Error(cat(op.describe(), ": ", parts...));
}

template <typename E>
E parse_choice(const Op& op, const std::string& attr,
               const std::vector<std::pair<const char*, E>>& choices) {
  const std::string& value = op.attr_string(attr);
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names += cat(names.empty() ? "" : ", ", name);
  }
  fail(op, "attribute '", attr, "' is '", value, "', expected one of ", names);
}

// A float-list attribute with one entry per dim (or 2 per dim for roi), every entry finite.
std::vector<double> per_dim_floats(const Op& op, const std::string& attr, size_t expected,
                                   const char* why) {
  const std::vector<double>& v = op.attr_floats(attr);
  if (v.size() != expected)
    fail(op, "attribute '", attr, "' has ", v.size(), " entries, expected ", expected, " (", why, ")");
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) fail(op, "attribute '", attr, "' entry ", i, " is ", v[i], ", expected a finite value");
  return v;
}

// The affine form of the transform (see ResizeAxis::slope).
void affine_form(ResizeCoordinates c, ResizeAxis& a) {
  using C = ResizeCoordinates;
  const double in = double(a.in), s = a.scale, len = a.length;
  switch (c) {
    case C::HalfPixel: a.slope = 1 / s; a.offset = 0.5 / s - 0.5; break;
    case C::HalfPixelSymmetric: {
      double center_shift = in / 2 * (1 - double(a.out) / len);
      a.slope = 1 / s;
      a.offset = center_shift + 0.5 / s - 0.5;
      break;
    }
    case C::PytorchHalfPixel:
      a.slope = len > 1 ? 1 / s : 0;
      a.offset = len > 1 ? 0.5 / s - 0.5 : 0;
      break;
    case C::AlignCorners: a.slope = len == 1 ? 0 : (in - 1) / (len - 1); a.offset = 0; break;
    case C::Asymmetric: a.slope = 1 / s; a.offset = 0; break;
    case C::TfHalfPixelForNn: a.slope = 1 / s; a.offset = 0.5 / s; break;
    case C::TfCropAndResize:
      a.slope = len > 1 ? (a.roi_end - a.roi_start) * (in - 1) / (len - 1) : 0;
      a.offset = len > 1 ? a.roi_start * (in - 1) : 0.5 * (a.roi_start + a.roi_end) * (in - 1);
      break;
  }
}

}  // namespace

Shape ResizeGeometry::output_shape() const {
  Shape s;
  for (const ResizeAxis& a : axes) s.push_back(a.piece_out);
  return s;
}

int ResizeGeometry::taps_per_dim() const {
  switch (interpolation) {
    case ResizeInterpolation::Nearest: return 1;
    case ResizeInterpolation::Linear: return 2;
    case ResizeInterpolation::Cubic: return 4;
  }
  return 1;
}

ResizeGeometry resize_geometry(const Op& op) {
  if (op.kind != OpKind::Resize) fail(op, "internal: resize_geometry called on another op");
  using I = ResizeInterpolation;
  using R = ResizeRounding;
  using C = ResizeCoordinates;
  ResizeGeometry g;
  g.interpolation = parse_choice<I>(op, "mode", {{"nearest", I::Nearest}, {"linear", I::Linear}, {"cubic", I::Cubic}});
  g.coordinates = parse_choice<C>(
      op, "coordinate_mode",
      {{"half_pixel", C::HalfPixel}, {"half_pixel_symmetric", C::HalfPixelSymmetric},
       {"pytorch_half_pixel", C::PytorchHalfPixel}, {"align_corners", C::AlignCorners},
       {"asymmetric", C::Asymmetric}, {"tf_half_pixel_for_nn", C::TfHalfPixelForNn},
       {"tf_crop_and_resize", C::TfCropAndResize}});
  g.rounding = parse_choice<R>(op, "nearest_mode",
                               {{"round_prefer_floor", R::RoundPreferFloor},
                                {"round_prefer_ceil", R::RoundPreferCeil}, {"floor", R::Floor},
                                {"ceil", R::Ceil}});
  g.cubic_coeff_a = op.attr_float("cubic_coeff_a");
  if (!std::isfinite(g.cubic_coeff_a))
    fail(op, "attribute 'cubic_coeff_a' is ", g.cubic_coeff_a, ", expected a finite value");
  g.exclude_outside = op.attr_bool("exclude_outside");
  g.extrapolation_value = op.attr_float("extrapolation_value");

  const TensorType& in = op.operand(0)->type;
  const size_t rank = size_t(in.rank());
  if (rank == 0) fail(op, "input is a scalar (", in.str(), "), expected rank >= 1");
  const std::vector<int64_t>& sizes = op.attr_ints("sizes");
  if (sizes.size() != rank)
    fail(op, "attribute 'sizes' has ", sizes.size(), " entries, expected ", rank,
         " (one per dim of input ", in.str(), ")");
  std::vector<double> scales, roi;
  if (op.has_attr("scales")) scales = per_dim_floats(op, "scales", rank, "one per input dim");
  if (op.has_attr("roi")) {
    if (!g.extrapolates())
      fail(op, "attribute 'roi' is only used by coordinate_mode 'tf_crop_and_resize'");
    roi = per_dim_floats(op, "roi", 2 * rank, "starts then ends, one per input dim");
  }
  // A piece of a larger resize: [output starts, output extents, input starts, whole input dims].
  std::vector<int64_t> window;
  if (op.has_attr("window")) {
    window = op.attr_ints("window");
    if (window.size() != 4 * rank)
      fail(op, "attribute 'window' has ", window.size(), " entries, expected ", 4 * rank,
           " (output starts, output extents, input starts, whole input dims: one per dim of input ", in.str(), ")");
  }
  for (size_t d = 0; d < rank; ++d) {
    ResizeAxis a;
    a.in = window.empty() ? in.shape[d] : window[3 * rank + d];
    a.out = sizes[d];
    a.piece_out = window.empty() ? a.out : window[rank + d];
    a.out_start = window.empty() ? 0 : window[d];
    a.piece_in = in.shape[d];
    a.in_start = window.empty() ? 0 : window[2 * rank + d];
    if (!window.empty() && (a.in < 1 || a.in_start < 0 || a.in_start + a.piece_in > a.in))
      fail(op, "attribute 'window': input dim ", d, " holds indices [", a.in_start, ", ", a.in_start + a.piece_in,
           ") of a whole input of ", a.in, ", which they must lie within");
    if (!window.empty() && (a.out_start < 0 || a.piece_out < 1 || a.out_start + a.piece_out > a.out))
      fail(op, "attribute 'window': output dim ", d, " is indices [", a.out_start, ", ", a.out_start + a.piece_out,
           ") of 'sizes' entry ", a.out, ", expected a non-empty range within it");
    if (a.in < 1) fail(op, "input dim ", d, " is ", a.in, ", resize needs at least one element to sample");
    if (a.out < 1) fail(op, "attribute 'sizes' entry ", d, " is ", a.out, ", expected >= 1");
    if (!scales.empty()) {
      a.scale = scales[d];
      if (!(a.scale > 0)) fail(op, "attribute 'scales' entry ", d, " is ", a.scale, ", expected > 0");
      a.length = double(a.in) * a.scale;
    } else {
      a.scale = double(a.out) / double(a.in);
      a.length = double(a.out);
    }
    if (!roi.empty()) {
      a.roi_start = roi[d];
      a.roi_end = roi[rank + d];
    }
    affine_form(g.coordinates, a);
    g.axes.push_back(a);
  }
  // Identity dims, decided from the reference coordinates themselves: O(out) per dim.
  for (size_t d = 0; d < rank; ++d) {
    ResizeAxis& a = g.axes[d];
    bool identity = a.in == a.out;
    for (int64_t x = 0; identity && x < a.out; ++x) identity = resize_source_coordinate(g, d, x) == double(x);
    a.identity = identity;
  }
  // A piece reads only its operand: every tap of its outputs must lie in the operand's indices.
  for (size_t d = 0; d < rank && !window.empty(); ++d) {
    const ResizeAxis& a = g.axes[d];
    const auto [first, last] = resize_input_range(g, d, a.out_start, a.out_start + a.piece_out);
    if (first < a.in_start || last > a.in_start + a.piece_in)
      fail(op, "attribute 'window': output indices [", a.out_start, ", ", a.out_start + a.piece_out, ") of dim ", d,
           " read input indices [", first, ", ", last, "), outside the operand's [", a.in_start, ", ",
           a.in_start + a.piece_in, ")");
  }
  return g;
}

std::pair<int64_t, int64_t> resize_input_range(const ResizeGeometry& g, size_t d, int64_t begin, int64_t end) {
  const ResizeAxis& a = g.axes[d];
  if (a.identity) return {begin, end};
  int64_t first = a.in, last = 0;
  for (int64_t x = begin; x < end; ++x) {
    const double xi = resize_source_coordinate(g, d, x);
    if (g.extrapolates() && !resize_coordinate_inside(xi, a.in)) continue;
    if (g.interpolation == ResizeInterpolation::Nearest) {
      const int64_t i = resize_nearest_index(g, xi, a.in);
      first = std::min(first, i);
      last = std::max(last, i + 1);
      continue;
    }
    const ResizeTaps t = resize_interpolation_taps(g, xi, a.in);
    for (int k = 0; k < t.count; ++k) {
      first = std::min(first, t.index[size_t(k)]);
      last = std::max(last, t.index[size_t(k)] + 1);
    }
  }
  if (first >= last) return {0, 1};
  return {first, last};
}

double resize_source_coordinate(const ResizeGeometry& g, size_t d, int64_t xi) {
  using C = ResizeCoordinates;
  const ResizeAxis& a = g.axes[d];
  const double x = double(xi), in = double(a.in), s = a.scale, len = a.length;
  switch (g.coordinates) {
    case C::HalfPixel: return (x + 0.5) / s - 0.5;
    case C::HalfPixelSymmetric: {
      double center_shift = in / 2 * (1 - double(a.out) / len);
      return center_shift + (x + 0.5) / s - 0.5;
    }
    case C::PytorchHalfPixel: return len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case C::AlignCorners: return len == 1 ? 0.0 : x * (in - 1) / (len - 1);
    case C::Asymmetric: return x / s;
    case C::TfHalfPixelForNn: return (x + 0.5) / s;
    case C::TfCropAndResize:
      return len > 1 ? a.roi_start * (in - 1) + x * (a.roi_end - a.roi_start) * (in - 1) / (len - 1)
                     : 0.5 * (a.roi_start + a.roi_end) * (in - 1);
  }
  return x;
}

bool resize_coordinate_inside(double x_in, int64_t in) { return x_in >= 0 && x_in <= double(in - 1); }

int64_t resize_nearest_index(const ResizeGeometry& g, double x, int64_t in) {
  double f = std::floor(x);
  bool tie = x == f + 0.5;
  double r = 0;
  switch (g.rounding) {
    case ResizeRounding::RoundPreferFloor: r = tie ? f : std::round(x); break;
    case ResizeRounding::RoundPreferCeil: r = tie ? f + 1 : std::round(x); break;
    case ResizeRounding::Floor: r = f; break;
    case ResizeRounding::Ceil: r = std::ceil(x); break;
  }
  // Clamped as a double first: converting an out-of-range double to an integer is undefined.
  return int64_t(std::clamp(r, 0.0, double(in - 1)));
}

std::array<double, 4> resize_cubic_coefficients(double r, double a) {
  auto near = [&](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };     // |t| <= 1
  auto far = [&](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < |t| < 2
  return {far(1 + r), near(r), near(1 - r), far(2 - r)};
}

ResizeTaps resize_interpolation_taps(const ResizeGeometry& g, double x, int64_t in) {
  ResizeTaps t;
  // Clamped before the integer conversion (see resize_nearest_index); beyond this range every
  // tap is outside the input anyway.
  double f = std::clamp(std::floor(x), -8.0, double(in) + 8);
  double r = x - std::floor(x);
  int64_t base = int64_t(f);
  if (g.interpolation == ResizeInterpolation::Linear) {
    t.count = 2;
    t.index = {base, base + 1, 0, 0};
    t.weight = {1 - r, r, 0, 0};
  } else {
    t.count = 4;
    t.index = {base - 1, base, base + 1, base + 2};
    t.weight = resize_cubic_coefficients(r, g.cubic_coeff_a);
  }
  if (g.exclude_outside) {
    double sum = 0;
    for (int i = 0; i < t.count; ++i) {
      if (t.index[size_t(i)] < 0 || t.index[size_t(i)] >= in) t.weight[size_t(i)] = 0;
      sum += t.weight[size_t(i)];
    }
    for (int i = 0; i < t.count; ++i) t.weight[size_t(i)] /= sum;
  }
  for (int i = 0; i < t.count; ++i) t.index[size_t(i)] = std::clamp<int64_t>(t.index[size_t(i)], 0, in - 1);
  return t;
}

}  // namespace vkc::ir
