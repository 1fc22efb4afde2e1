// quantize and dequantize, per tensor or per channel.
#include <algorithm>
#include <cmath>

#include "ir/interpreter_ops.h"

namespace vkc::ir::interp {
namespace {

// Which scale / zero-point entry applies to each element: all the same (per tensor: scale has one
// element) or the element's index along `axis` (per channel: scale is [input.shape[axis]]).
struct ChannelMap {
  bool per_channel = false;
  int64_t inner = 1, channels = 1;  // channel of flat i is (i / inner) % channels
  int64_t operator()(int64_t i) const { return per_channel ? (i / inner) % channels : 0; }
};

ChannelMap channel_map(const Op& op, const HostTensor& input, const HostTensor& scale,
                       const HostTensor* zero_point) {
  ChannelMap map;
  if (zero_point != nullptr && zero_point->numel() != scale.numel())
    fail(op, "zero_point has ", zero_point->numel(), " elements, scale has ", scale.numel());
  if (scale.numel() == 1 && scale.rank() <= 1) return map;
  if (scale.rank() != 1) fail(op, "scale must have rank 0 or 1, found ", shape_str(scale.shape()));
  int64_t axis = normalize_axis(op, op.attr_int("axis"), input.rank(), "axis");
  map.per_channel = true;
  map.channels = input.shape()[size_t(axis)];
  if (scale.numel() != map.channels)
    fail(op, "scale has ", scale.numel(), " elements, input dim ", axis, " has ", map.channels);
  for (size_t d = size_t(axis) + 1; d < size_t(input.rank()); ++d) map.inner *= input.shape()[d];
  return map;
}

}  // namespace

// q = saturate(round_half_to_even(x / scale) + zero_point). The quotient is taken in f32, as ONNX
// and the kernels compute it: whether a value is an exact tie depends on that rounding.
Results eval_quantize(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& x = *in[0];
  const HostTensor& scale = *in[1];
  const HostTensor* zp = in.size() > 2 ? in[2] : nullptr;
  ChannelMap ch = channel_map(op, x, scale, zp);
  HostTensor out(types[0].dtype, types[0].shape);
  if (out.dtype() != DType::i8 && out.dtype() != DType::u8)
    fail(op, "result dtype is ", dtype_name(out.dtype()), ", expected i8 or u8");
  double lo = out.dtype() == DType::i8 ? -128 : 0, hi = out.dtype() == DType::i8 ? 127 : 255;
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = ch(i);
    float quotient = float(x.get_f64(i)) / float(scale.get_f64(c));
    double q = std::nearbyint(double(quotient)) + (zp ? double(zp->get_i64(c)) : 0.0);
    if (std::isnan(q)) q = 0;  // set_f64 would also map NaN to 0; say so explicitly
    out.set_i64(i, int64_t(std::clamp(q, lo, hi)));
  }
  return {std::move(out)};
}

// x = (q - zero_point) * scale, rounded once to the result type (f32).
Results eval_dequantize(const Op& op, const Operands& in, const ResultTypes& types) {
  const HostTensor& q = *in[0];
  const HostTensor& scale = *in[1];
  const HostTensor* zp = in.size() > 2 ? in[2] : nullptr;
  ChannelMap ch = channel_map(op, q, scale, zp);
  HostTensor out(types[0].dtype, types[0].shape);
  for (int64_t i = 0; i < q.numel(); ++i) {
    int64_t c = ch(i);
    int64_t centered = q.get_i64(i) - (zp ? zp->get_i64(c) : 0);
    out.set_f64(i, double(centered) * scale.get_f64(c));
  }
  return {std::move(out)};
}

}  // namespace vkc::ir::interp
