#include "codegen/strided_view.h"

#include <algorithm>

#include "codegen/op_codegen.h"
#include "ir/slice_geometry.h"

namespace vkc::codegen {
namespace {

bool any_zero(const Shape& s) {
  return std::any_of(s.begin(), s.end(), [](int64_t d) { return d == 0; });
}

// Strides for `out` viewing the same elements as (shape, strides), when the dims it merges or
// splits are contiguous with each other: walk both shapes from the innermost dim in chunks of
// old dims that are contiguous, and give each chunk's new dims strides within it.
std::optional<std::vector<int64_t>> view_strides(const Shape& shape, const std::vector<int64_t>& strides,
                                                 const Shape& out) {
  if (shape.empty() || out.empty() || any_zero(shape) || any_zero(out)) return std::nullopt;
  std::vector<int64_t> result(out.size(), 0);
  int64_t base = strides.back(), old_count = 1, new_count = 1;
  int nd = int(out.size()) - 1;
  for (int od = int(shape.size()) - 1; od >= 0; --od) {
    old_count *= shape[size_t(od)];
    const bool chunk_ends =
        od == 0 || (shape[size_t(od - 1)] != 1 && strides[size_t(od - 1)] != old_count * base);
    if (!chunk_ends) continue;
    while (nd >= 0 && (new_count < old_count || out[size_t(nd)] == 1)) {
      result[size_t(nd)] = new_count * base;
      new_count *= out[size_t(nd)];
      --nd;
    }
    if (new_count != old_count) return std::nullopt;
    if (od > 0) {
      base = strides[size_t(od - 1)];
      old_count = new_count = 1;
    }
  }
  if (nd != -1) return std::nullopt;
  return result;
}

}  // namespace

StridedView contiguous_view(const Shape& shape) {
  StridedView v;
  v.shape = shape;
  v.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * shape[d];
  return v;
}

std::optional<StridedView> apply_index_map(const StridedView& view, const ir::Op& op, const Shape& out) {
  StridedView r = view;
  const Shape& in = view.shape;
  switch (op_codegen(op.kind).prologue) {
    case Prologue::View: {
      std::optional<std::vector<int64_t>> s = view_strides(in, view.strides, out);
      if (!s) return std::nullopt;
      r.strides = *s;
      break;
    }
    case Prologue::Transpose: {
      const std::vector<int64_t>& perm = op.attr_ints("perm");
      if (perm.size() != in.size()) return std::nullopt;
      for (size_t d = 0; d < perm.size(); ++d) r.strides[d] = view.strides[size_t(perm[d])];
      break;
    }
    case Prologue::Slice: {
      for (const ir::SlicedAxis& s : ir::sliced_axes(op, in)) {
        r.offset += s.start * view.strides[s.axis];
        r.strides[s.axis] = view.strides[s.axis] * s.step;
      }
      break;
    }
    case Prologue::Broadcast: {
      // numpy broadcasting: dims align with the result's last ones; a dim of 1 reads index 0.
      if (out.size() < in.size()) return std::nullopt;
      const size_t lead = out.size() - in.size();
      r.strides.assign(out.size(), 0);
      for (size_t d = 0; d < in.size(); ++d) r.strides[d + lead] = in[d] == 1 ? 0 : view.strides[d];
      break;
    }
    case Prologue::Reverse:
      for (int64_t a : op.attr_ints("axes")) {
        if (a < 0) a += int64_t(in.size());
        r.offset += (in[size_t(a)] - 1) * view.strides[size_t(a)];
        r.strides[size_t(a)] = -view.strides[size_t(a)];
      }
      break;
    default: return std::nullopt;
  }
  r.shape = out;
  if (r.strides.size() != out.size()) return std::nullopt;
  return r;
}

}  // namespace vkc::codegen
