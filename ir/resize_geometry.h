// Normalized geometry of the resize op: the per-dim coordinate transform and the tap rules.
//
// The verifier, the reference interpreter and the GPU kernel all read a resize through this file,
// so they cannot disagree about which input elements an output element reads. The formulas are
// ONNX Resize's (opset 11..19), evaluated in float64 in ONNX's own operation order: nearest
// resizing picks one element by rounding the source coordinate, so a different order could round
// a tie (x.5) the other way and pick another element.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace vkc::ir {

enum class ResizeInterpolation { Nearest, Linear, Cubic };
enum class ResizeRounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
enum class ResizeCoordinates {
  HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn,
  TfCropAndResize
};

struct ResizeAxis {
  int64_t in = 1, out = 1;
  // The scale the transform divides by: the attribute 'scales' when given, else out / in.
  double scale = 1;
  // ONNX's length_resized: in * scale when 'scales' is given (not rounded: ONNX's align_corners
  // and crop formulas use the unrounded length), else out.
  double length = 1;
  double roi_start = 0, roi_end = 1;  // tf_crop_and_resize: the crop window as input fractions
  // Every output index x reads input index x with weight 1 (out == in and the transform maps
  // every x to exactly x). Such dims are copied, never interpolated, by every implementation.
  bool identity = false;
  // The transform written as x_in = x_out * slope + offset (equal in real arithmetic to the
  // reference formula); kernels evaluate this form in f32.
  double slope = 0, offset = 0;
  // A piece of a larger resize (attribute 'window', made by the range split): the op computes
  // output indices [out_start, out_start + piece_out) of the whole resize above (in, out are the
  // whole op's) from its operand, which holds input indices [in_start, in_start + piece_in). Every
  // coordinate and tap is the whole op's; indices are then moved by in_start. No window: the
  // piece is the whole op.
  int64_t out_start = 0, piece_out = 1, in_start = 0, piece_in = 1;
};

struct ResizeGeometry {
  ResizeInterpolation interpolation = ResizeInterpolation::Nearest;
  ResizeRounding rounding = ResizeRounding::RoundPreferFloor;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  std::vector<ResizeAxis> axes;  // one per dim of the input

  Shape output_shape() const;
  // tf_crop_and_resize: an output element whose source coordinate leaves [0, in - 1] along any
  // dim is extrapolation_value.
  bool extrapolates() const { return coordinates == ResizeCoordinates::TfCropAndResize; }
  int taps_per_dim() const;  // 1 nearest, 2 linear, 4 cubic
};

// Checks every attribute against the input and throws vkc::Error naming the op, the attribute
// and the dim.
ResizeGeometry resize_geometry(const Op& op);

// The input indices [first, last) of the whole op that output indices [begin, end) of dim `d`
// read (every tap, clamped as the op clamps them; with tf_crop_and_resize only coordinates inside
// the crop window). At least one index, also where no output reads any.
std::pair<int64_t, int64_t> resize_input_range(const ResizeGeometry& g, size_t d, int64_t begin, int64_t end);

// Source coordinate of output index x along dim `d`: float64, in the reference's operation order.
double resize_source_coordinate(const ResizeGeometry& g, size_t d, int64_t x);

// tf_crop_and_resize: whether a source coordinate lies inside [0, in - 1].
bool resize_coordinate_inside(double x_in, int64_t in);

// Nearest mode: the input index of a source coordinate, rounded by g.rounding (ties exactly as
// ONNX: round_prefer_floor takes floor for x.5) and clamped to [0, in).
int64_t resize_nearest_index(const ResizeGeometry& g, double x_in, int64_t in);

// Linear and cubic modes: the taps of a source coordinate. Tap t reads index
// floor(x_in) - (taps/2 - 1) + t, clamped to [0, in) (edge replication); weights are
// [1 - r, r] (linear) or Keys' cubic coefficients with cubic_coeff_a, r = x_in - floor(x_in). With
// exclude_outside, taps outside [0, in) get weight 0 and the rest are renormalized to sum 1.
struct ResizeTaps {
  int count = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};
ResizeTaps resize_interpolation_taps(const ResizeGeometry& g, double x_in, int64_t in);

// Keys' cubic convolution weights of the taps at distances 1 + r, r, 1 - r, 2 - r.
std::array<double, 4> resize_cubic_coefficients(double r, double a);

}  // namespace vkc::ir
