// Constant conv filters stored in the layout the GEMM kernels read best: output channels
// outermost, then the taps, then the input channels of a group ("FHWC" in 2-D).
// - float16, the tensor-core kernel: it reads such a filter in place; in any other layout it packs
//   the filter in an extra dispatch on every execution (codegen/kernels/conv.cpp), one per conv:
//   53 of resnet50's dispatches in the precision mode. A constant costs the permutation once, here.
// - float32, the SIMT GEMM whose K slices each hold one tap (codegen/conv_planner.h,
//   conv_slices_hold_one_tap): its columns are tap-major, so a slice's quads of columns are four
//   neighbouring input channels, contiguous in this layout (16 floats apart in OIHW for a 3x3).
#include <cstring>
#include <vector>

#include "ir/conv_geometry.h"
#include "ir/passes.h"

namespace vkc::ir {
namespace {

const HostTensor* sole_constant(Graph& g, const Value* v) {
  if (v->producer == nullptr || v->producer->kind != OpKind::Constant || g.users(v).size() != 1 || g.is_output(v))
    return nullptr;
  return v->producer->attr_tensor("value").get();
}

bool pack_one(Graph& g, Op* conv, const ConvFilterPacked& wanted) {
  if (conv->kind != OpKind::Conv) return false;  // a transposed conv's filter is gathered, not packed
  const HostTensor* w = sole_constant(g, conv->operand(1));
  if (w == nullptr || (w->dtype() != DType::f16 && w->dtype() != DType::f32)) return false;
  const size_t bytes = dtype_size(w->dtype());
  const ConvGeometry geo = conv_geometry(*conv);
  const std::string packed = "F" + spatial_letters(geo.spatial_rank) + "C";
  if (geo.filter_layout == packed || (wanted && !wanted(*conv))) return false;
  // Logical filter dims [F, C, K0..]; physical positions old (filter_pos) and new (F, K.., C).
  const size_t rank = size_t(2 + geo.spatial_rank);
  std::vector<int64_t> logical(rank);
  for (size_t d = 0; d < rank; ++d) logical[d] = w->shape()[size_t(geo.filter_pos[d])];
  std::vector<int> new_pos(rank);
  new_pos[0] = 0;
  for (size_t i = 0; i < size_t(geo.spatial_rank); ++i) new_pos[2 + i] = int(1 + i);
  new_pos[1] = int(rank - 1);
  Shape new_shape(rank);
  for (size_t d = 0; d < rank; ++d) new_shape[size_t(new_pos[d])] = logical[d];
  const std::vector<int64_t> old_strides = shape_strides(w->shape()), new_strides = shape_strides(new_shape);
  HostTensor out(w->dtype(), new_shape);
  std::vector<int64_t> index(rank, 0);  // logical
  for (int64_t n = 0; n < w->numel(); ++n) {
    int64_t from = 0, to = 0;
    for (size_t d = 0; d < rank; ++d) {
      from += index[d] * old_strides[size_t(geo.filter_pos[d])];
      to += index[d] * new_strides[size_t(new_pos[d])];
    }
    std::memcpy(static_cast<uint8_t*>(out.data()) + to * bytes, static_cast<const uint8_t*>(w->data()) + from * bytes,
                bytes);
    for (size_t d = rank; d-- > 0;)
      if (++index[d] < logical[d]) break;
      else index[d] = 0;
  }
  AttrMap attrs = conv->attrs;
  attrs["filter_layout"] = packed;
  Value* filter = g.insert_op(conv, OpKind::Constant, {}, {{"value", std::make_shared<const HostTensor>(std::move(out))}},
                              conv->operand(1)->name + ".packed")
                      ->result();
  std::vector<Value*> operands(conv->operands.begin(), conv->operands.end());
  operands[1] = filter;
  Op* repacked = g.insert_op(conv, OpKind::Conv, operands, std::move(attrs), conv->name, conv->loc);
  g.replace_all_uses(conv->result(), repacked->result());
  return true;
}

// One sweep over the convs there were at the start (a repacked conv is not looked at again), and
// one removal of the replaced ops at the end: linear in the graph, as compile time must stay.
bool pack_filters(Graph& g, const ConvFilterPacked& wanted) {
  std::vector<Op*> convs;
  for (Op* op : g.ops())
    if (op->kind == OpKind::Conv) convs.push_back(op);
  bool changed = false;
  for (Op* conv : convs) changed |= pack_one(g, conv, wanted);
  if (changed) g.remove_dead_ops();
  return changed;
}

}  // namespace

Pass pack_conv_filters_pass(ConvFilterPacked wanted) {
  return {"pack-conv-filters", "store constant float16 conv filters output channels, taps, input channels",
          [wanted](Graph& g) { return pack_filters(g, wanted); }};
}

}  // namespace vkc::ir
