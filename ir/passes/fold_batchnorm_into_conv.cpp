// BatchNormalization at inference is y = conv(x) * s + t with per-output-channel constants s, t.
// With constant conv weights W and bias b this is the conv with W' = W * s (per output channel)
// and b' = b * s + t: the whole normalization costs nothing at run time.
#include <optional>

#include "ir/conv_geometry.h"
#include "ir/passes.h"

namespace vkc::ir {
namespace {

const HostTensor* constant_of(const Value* v) {
  if (v->producer == nullptr || v->producer->kind != OpKind::Constant) return nullptr;
  return v->producer->attr_tensor("value").get();
}

// The per-channel values of `c` broadcast against a conv result of `shape` whose channel dim is
// `channel_dim`: a scalar or a tensor whose only non-1 dim is that one. nullopt otherwise.
std::optional<std::vector<double>> per_channel(const HostTensor& c, const Shape& shape, int channel_dim) {
  int64_t channels = shape[size_t(channel_dim)];
  if (c.shape().size() > shape.size()) return std::nullopt;
  size_t offset = shape.size() - c.shape().size();
  for (size_t d = 0; d < c.shape().size(); ++d)
    if (c.shape()[d] != 1 && !(d + offset == size_t(channel_dim) && c.shape()[d] == channels))
      return std::nullopt;
  std::vector<double> v(static_cast<size_t>(channels));
  for (int64_t f = 0; f < channels; ++f) v[size_t(f)] = c.get_f64(c.numel() == 1 ? 0 : f);
  return v;
}

bool fold_one(Graph& g, Op* conv) {
  Value* y = conv->result();
  if (!is_float(y->type.dtype) || g.users(y).size() != 1 || g.is_output(y)) return false;
  Op* user = g.users(y)[0];
  if (user->kind != OpKind::Mul && user->kind != OpKind::Add) return false;
  if (user->result()->type != y->type) return false;  // the constant must not broadcast y
  const HostTensor* w = constant_of(conv->operand(1));
  const HostTensor* b = conv->num_operands() > 2 ? constant_of(conv->operand(2)) : nullptr;
  if (w == nullptr || (conv->num_operands() > 2 && b == nullptr)) return false;
  Value* other = user->operand(0) == y ? user->operand(1) : user->operand(0);
  const HostTensor* k = constant_of(other);
  if (k == nullptr) return false;
  ConvGeometry geo = conv_geometry(*conv);
  std::optional<std::vector<double>> s = per_channel(*k, y->type.shape, geo.output_pos[1]);
  if (!s) return false;

  int64_t channels = geo.out_channels;
  std::vector<double> bias(size_t(channels), 0.0);
  if (b) for (int64_t f = 0; f < channels; ++f) bias[size_t(f)] = b->get_f64(f);
  HostTensor new_w = *w;
  if (user->kind == OpKind::Mul) {
    // Scale every weight of output channel f: index f along the filter's F dim.
    std::vector<int64_t> strides = shape_strides(w->shape());
    int64_t fdim = geo.filter_pos[0], extent = w->shape()[size_t(fdim)];
    for (int64_t i = 0; i < w->numel(); ++i) {
      int64_t f = (i / strides[size_t(fdim)]) % extent;
      new_w.set_f64(i, w->get_f64(i) * (*s)[size_t(f)]);
    }
    for (int64_t f = 0; f < channels; ++f) bias[size_t(f)] *= (*s)[size_t(f)];
  } else {
    for (int64_t f = 0; f < channels; ++f) bias[size_t(f)] += (*s)[size_t(f)];
  }
  HostTensor new_b(y->type.dtype, {channels});
  for (int64_t f = 0; f < channels; ++f) new_b.set_f64(f, bias[size_t(f)]);
  auto constant = [&](HostTensor t, const std::string& name) {
    AttrMap attrs{{"value", std::make_shared<const HostTensor>(std::move(t))}};
    return g.insert_op(conv, OpKind::Constant, {}, std::move(attrs), name)->result();
  };
  std::vector<Value*> operands{conv->operand(0), constant(std::move(new_w), conv->name + ".folded_weight"),
                               constant(std::move(new_b), conv->name + ".folded_bias")};
  Op* folded = g.insert_op(user, OpKind::Conv, operands, conv->attrs, conv->name, conv->loc);
  g.replace_all_uses(user->result(), folded->result());
  g.remove_dead_ops();
  return true;
}

bool fold_batchnorm(Graph& g) { return rewrite_each(g, OpKind::Conv, fold_one); }

}  // namespace

Pass fold_batchnorm_into_conv_pass() {
  return {"fold-batchnorm-into-conv", "fold per-channel mul/add constants into conv weights and bias",
          fold_batchnorm};
}

}  // namespace vkc::ir
