// BatchNormalization (inference form). y = x * a + b with a = scale / sqrt(var + eps) and
// b = bias - mean * a per channel. When x comes straight from a conv or conv_transpose whose
// weights are constants and nothing else reads the conv's result, a and b are folded into that
// conv's weights and bias, so the BatchNormalization costs nothing at run time. Otherwise it
// becomes a mul and an add with constant per-channel operands.
#include <cmath>

#include "onnx/import_context.h"
#include "support/error.h"

namespace vkc::onnx {
namespace {

using K = ir::OpKind;

struct Affine {
  std::vector<double> a, b;
};

Affine batchnorm_affine(NodeContext& n, int64_t channels) {
  double eps = n.attrs.get_float("epsilon", 1e-5);
  n.attrs.ignore("momentum");  // training only
  n.attrs.ignore("spatial");   // opset < 9: spatial=1 is the only form exporters emit
  if (n.attrs.get_int("training_mode", 0) != 0) n.unsupported("training_mode 1 is not supported");
  if (n.attrs.get_int("is_test", 1) == 0 && n.opset() < 7) n.unsupported("is_test 0 is not supported");
  for (int i = 1; i < n.num_outputs(); ++i)
    if (n.output_used(i)) n.unsupported("the training outputs (mean, var) are not supported");
  std::vector<double> scale = n.constant_floats(1, "scale");
  std::vector<double> bias = n.constant_floats(2, "B");
  std::vector<double> mean = n.constant_floats(3, "input_mean");
  std::vector<double> var = n.constant_floats(4, "input_var");
  for (auto* v : {&scale, &bias, &mean, &var})
    if (int64_t(v->size()) != channels) n.unsupported("parameters do not match the channel count");
  Affine f;
  for (int64_t c = 0; c < channels; ++c) {
    double a = scale[size_t(c)] / std::sqrt(var[size_t(c)] + eps);
    f.a.push_back(a);
    f.b.push_back(bias[size_t(c)] - mean[size_t(c)] * a);
  }
  return f;
}

// Folds into the producing conv when allowed; returns false when it is not.
bool fold_into_conv(NodeContext& n, ir::Value* x, const Affine& f) {
  ir::Op* conv = x->producer;
  if (!conv || (conv->kind != K::Conv && conv->kind != K::ConvTranspose)) return false;
  // Only when the BatchNormalization is the conv result's sole reader (no residual branch, not a
  // graph output): the unscaled result must not be needed anywhere else.
  const std::string& name = n.node.input(0);
  auto uses = n.ctx.use_counts.find(name);
  if (uses == n.ctx.use_counts.end() || uses->second != 1 || !n.ctx.graph.users(x).empty())
    return false;
  const HostTensor* w = constant_data(conv->operand(1));
  const HostTensor* bias = conv->num_operands() > 2 ? constant_data(conv->operand(2)) : nullptr;
  if (!w || (conv->num_operands() > 2 && !bias) || !is_float(w->dtype())) return false;
  int64_t groups = conv->attr_int("groups");
  int64_t channels = int64_t(f.a.size());
  const Shape& ws = w->shape();
  int64_t per_out_channel = 1;  // weights per output channel, contiguous for conv
  for (size_t i = 1; i < ws.size(); ++i) per_out_channel *= ws[i];
  HostTensor new_w = *w;
  if (conv->kind == K::Conv) {
    if (ws[0] != channels) return false;
    for (int64_t o = 0; o < channels; ++o)
      for (int64_t k = 0; k < per_out_channel; ++k) {
        int64_t i = o * per_out_channel + k;
        new_w.set_f64(i, w->get_f64(i) * f.a[size_t(o)]);
      }
  } else {
    // conv_transpose weights are [C_in, C_out/groups, k...]; output channel = g*Fg + f.
    int64_t cin = ws[0], fg = ws[1], kernel = per_out_channel / fg;
    if (fg * groups != channels) return false;
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t fo = 0; fo < fg; ++fo) {
        int64_t o = (c / (cin / groups)) * fg + fo;
        for (int64_t k = 0; k < kernel; ++k) {
          int64_t i = (c * fg + fo) * kernel + k;
          new_w.set_f64(i, w->get_f64(i) * f.a[size_t(o)]);
        }
      }
  }
  HostTensor new_b(w->dtype(), {channels});
  for (int64_t o = 0; o < channels; ++o)
    new_b.set_f64(o, (bias ? bias->get_f64(o) : 0.0) * f.a[size_t(o)] + f.b[size_t(o)]);
  conv->operands[1] = n.constant(std::move(new_w));
  if (conv->num_operands() > 2) conv->operands[2] = n.constant(std::move(new_b));
  else conv->operands.push_back(n.constant(std::move(new_b)));
  // The new constants were appended after the conv; keep the execution order valid.
  n.ctx.graph.move_before(conv->operands[1]->producer, conv);
  n.ctx.graph.move_before(conv->operands[2]->producer, conv);
  return true;
}

void import_batch_norm(NodeContext& n) {
  ir::Value* x = n.input(0);
  if (x->type.rank() < 2) n.unsupported("input rank must be at least 2");
  int64_t channels = x->type.shape[1];
  Affine f = batchnorm_affine(n, channels);
  if (fold_into_conv(n, x, f)) return n.set_output(0, x);
  Shape param_shape(size_t(x->type.rank() - 1), 1);
  param_shape[0] = channels;
  HostTensor a(x->type.dtype, param_shape), b(x->type.dtype, param_shape);
  for (int64_t c = 0; c < channels; ++c) {
    a.set_f64(c, f.a[size_t(c)]);
    b.set_f64(c, f.b[size_t(c)]);
  }
  ir::Value* y = n.emit(K::Mul, {x, n.constant(std::move(a))});
  n.set_output(0, n.emit(K::Add, {y, n.constant(std::move(b))}));
}

}  // namespace

void register_normalization_importers(std::map<std::string, OpImporter>& r) {
  r["BatchNormalization"] = import_batch_norm;
}

}  // namespace vkc::onnx
