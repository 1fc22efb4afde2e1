// conv(pad(x)) -> conv(x) with larger pads, when the pad adds zeros on spatial dims only. A conv
// already reads zeros outside its input, so the pad's bytes never need to exist.
#include "ir/conv_geometry.h"
#include "ir/passes.h"

namespace vkc::ir {
namespace {

bool fold_pads(Graph& g) {
  bool changed = false;
  for (Op* conv : g.ops()) {
    if (conv->kind != OpKind::Conv) continue;
    Value* padded = conv->operand(0);
    Op* pad = padded->producer;
    if (pad == nullptr || pad->kind != OpKind::Pad || pad->attr_float("value") != 0.0) continue;
    ConvGeometry geo = conv_geometry(*conv);
    const std::vector<int64_t>& p = pad->attr_ints("pads");
    size_t rank = size_t(padded->type.rank());
    bool spatial_only = p[size_t(geo.input_pos[0])] == 0 && p[rank + size_t(geo.input_pos[0])] == 0 &&
                        p[size_t(geo.input_pos[1])] == 0 && p[rank + size_t(geo.input_pos[1])] == 0;
    if (!spatial_only) continue;
    size_t s = size_t(geo.spatial_rank);
    std::vector<int64_t> pads(2 * s);
    for (size_t i = 0; i < s; ++i) {
      size_t dim = size_t(geo.input_pos[2 + i]);
      pads[i] = geo.pad_begin[i] + p[dim];
      pads[s + i] = geo.pad_end[i] + p[rank + dim];
    }
    conv->attrs["pads"] = pads;
    conv->operands[0] = pad->operand(0);
    changed = true;
  }
  if (changed) g.remove_dead_ops();
  return changed;
}

}  // namespace

Pass fold_pad_into_conv_pass() {
  return {"fold-pad-into-conv", "fold zero pads of spatial dims into the conv's pads", fold_pads};
}

}  // namespace vkc::ir
