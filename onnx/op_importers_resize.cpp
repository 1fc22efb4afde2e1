// Resize / Upsample, nearest mode with integer scales only. The IR has no resize op, but with an
// integer scale s and a coordinate mapping that sends output index i to input index floor(i/s),
// nearest resizing is "repeat each element s times": reshape [.., d, ..] -> [.., d, 1, ..],
// broadcast to [.., d, s, ..], reshape to [.., d*s, ..]. Other modes and fractional scales need a
// real resize op and are reported unsupported.
#include <cmath>

#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

ir::Value* repeat_nearest(NodeContext& n, ir::Value* x, const std::vector<int64_t>& factors) {
  Shape split, expanded, out;
  for (size_t i = 0; i < factors.size(); ++i) {
    int64_t d = x->type.shape[i];
    split.push_back(d);
    expanded.push_back(d);
    if (factors[i] != 1) {
      split.push_back(1);
      expanded.push_back(factors[i]);
    }
    out.push_back(d * factors[i]);
  }
  if (out == x->type.shape) return n.reshape(x, out);
  ir::Value* v = n.reshape(x, split);
  v = n.emit(K::Broadcast, {v}, {{"shape", expanded}});
  return n.reshape(v, out);
}

std::vector<int64_t> integer_factors(NodeContext& n, const ir::Value* x,
                                     const std::vector<double>& scales) {
  if (int64_t(scales.size()) != x->type.rank()) n.unsupported("scales must have one entry per dim");
  std::vector<int64_t> f;
  for (double s : scales) {
    if (!(s >= 1.0) || s != std::floor(s) || s > 65536.0)
      n.unsupported(cat("scale ", s, " is not a positive integer (the IR has no resize op; only "
                        "nearest resizing by integer factors is expressible)"));
    f.push_back(int64_t(s));
  }
  return f;
}

void import_upsample(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::string mode = n.attrs.get_string("mode", "nearest");
  if (mode != "nearest") n.unsupported(cat("mode '", mode, "' is not supported (the IR has no resize op)"));
  std::vector<double> scales = n.has_input(1) ? n.constant_floats(1, "scales") : n.attrs.get_floats("scales");
  n.set_output(0, repeat_nearest(n, x, integer_factors(n, x, scales)));
}

void import_resize(NodeContext& n) {
  ir::Value* x = n.input(0);
  std::string mode = n.attrs.get_string("mode", "nearest");
  if (mode != "nearest") n.unsupported(cat("mode '", mode, "' is not supported (the IR has no resize op)"));
  std::string coords = n.attrs.get_string("coordinate_transformation_mode",
                                          n.opset() < 11 ? "asymmetric" : "half_pixel");
  std::string rounding = n.attrs.get_string("nearest_mode", "round_prefer_floor");
  n.attrs.ignore("cubic_coeff_a");
  n.attrs.ignore("extrapolation_value");  // only used by tf_crop_and_resize
  if (n.attrs.get_int("exclude_outside", 0) != 0) n.unsupported("exclude_outside is not supported");
  if (n.attrs.get_int("antialias", 0) != 0) n.unsupported("antialias is not supported");
  if (n.attrs.has("axes")) n.unsupported("axes is not supported");
  n.attrs.ignore("keep_aspect_ratio_policy");  // only used with sizes + axes
  // Which (coordinate mode, rounding) pairs map output i to input floor(i/s) for integer s.
  bool floor_like = ((coords == "asymmetric" || coords == "tf_half_pixel_for_nn") && rounding == "floor") ||
                    ((coords == "half_pixel" || coords == "pytorch_half_pixel") &&
                     (rounding == "round_prefer_floor" || rounding == "round_prefer_ceil"));
  if (!floor_like)
    n.unsupported(cat("coordinate_transformation_mode '", coords, "' with nearest_mode '", rounding,
                      "' is not supported (the IR has no resize op)"));
  std::vector<double> scales;
  int scales_input = n.opset() < 11 ? 1 : 2;
  if (n.has_input(scales_input) && n.input(scales_input)->type.numel() > 0) {
    scales = n.constant_floats(scales_input, "scales");
  } else if (n.opset() >= 11 && n.has_input(3)) {
    std::vector<int64_t> sizes = n.constant_ints(3, "sizes");
    if (int64_t(sizes.size()) != x->type.rank()) n.unsupported("sizes must have one entry per dim");
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t d = x->type.shape[i];
      if (d == 0 || sizes[i] % d != 0) n.unsupported("sizes are not integer multiples of the input");
      scales.push_back(double(sizes[i] / d));
    }
  } else {
    n.unsupported("neither scales nor sizes is given");
  }
  n.set_output(0, repeat_nearest(n, x, integer_factors(n, x, scales)));
}

}  // namespace

void register_resize_importers(std::map<std::string, OpImporter>& r) {
  r["Resize"] = import_resize;
  r["Upsample"] = import_upsample;
}

}  // namespace vkc::onnx
