#include "codegen/strided_view.h"

#include <algorithm>
#include <numeric>

#include "codegen/op_codegen.h"
#include "ir/slice_geometry.h"

namespace vkc::codegen {
namespace {

bool any_zero(const Shape& s) {
  return std::any_of(s.begin(), s.end(), [](int64_t d) { return d == 0; });
}

// One strided part of a dim: `extent` indices `stride` elements apart. A dim of the view in the
// making is one or more parts, outer first; its index is their mixed-radix number.
struct Part {
  int64_t extent, stride;
};
using Dim = std::vector<Part>;

// Merges neighbouring parts that are contiguous with each other and drops parts of extent 1 (a
// dim of extent 1 keeps one part).
void simplify(Dim& dim) {
  Dim out;
  for (const Part& p : dim) {
    if (p.extent == 1) continue;
    if (!out.empty() && out.back().stride == p.extent * p.stride) {
      out.back() = Part{out.back().extent * p.extent, p.stride};
      continue;
    }
    out.push_back(p);
  }
  if (out.empty()) out.push_back(Part{1, 0});
  dim = std::move(out);
}

// The view in the making: its dims (as parts) and the offset of its first element.
struct Composer {
  std::vector<Dim> dims;
  int64_t offset = 0;

  // The dim's one stride, or nullopt when it is still several parts.
  static std::optional<int64_t> single(Dim dim) {
    simplify(dim);
    if (dim.size() != 1) return std::nullopt;
    return dim[0].stride;
  }

  // A reshape to `out`: every part in order, regrouped from the innermost into the new dims; a
  // part a new dim's boundary falls inside is split at it, where its extent allows.
  bool reshape(const Shape& out) {
    std::vector<Part> parts;
    for (Dim& d : dims) {
      simplify(d);
      for (const Part& p : d)
        if (p.extent != 1) parts.push_back(p);
    }
    std::vector<Dim> next(out.size());
    for (size_t nd = out.size(); nd-- > 0;) {
      int64_t need = out[nd];
      if (need <= 0) return false;
      Dim dim;
      while (need > 1) {
        if (parts.empty()) return false;
        Part& p = parts.back();
        const int64_t g = std::gcd(need, p.extent);
        if (g == 1) return false;  // the new dim's boundary is not a whole number of p's steps
        dim.insert(dim.begin(), Part{g, p.stride});
        need /= g;
        if (g == p.extent) {
          parts.pop_back();
        } else {
          p = Part{p.extent / g, p.stride * g};
        }
      }
      if (dim.empty()) dim.push_back(Part{1, 0});
      next[nd] = std::move(dim);
    }
    if (!parts.empty()) return false;
    dims = std::move(next);
    return true;
  }

  bool apply(const ir::Op& op, const Shape& in, const Shape& out) {
    switch (op_codegen(op.kind).prologue) {
      case Prologue::View:
        if (any_zero(in) || any_zero(out)) return false;
        return reshape(out);
      case Prologue::Transpose: {
        const std::vector<int64_t>& perm = op.attr_ints("perm");
        if (perm.size() != dims.size()) return false;
        std::vector<Dim> next;
        for (int64_t p : perm) next.push_back(dims[size_t(p)]);
        dims = std::move(next);
        return true;
      }
      case Prologue::Slice:
        for (const ir::SlicedAxis& s : ir::sliced_axes(op, in)) {
          std::optional<int64_t> stride = single(dims[s.axis]);
          if (!stride) return false;
          offset += s.start * *stride;
          dims[s.axis] = {Part{out[s.axis], *stride * s.step}};
        }
        return true;
      case Prologue::Broadcast: {
        // numpy broadcasting: dims align with the result's last ones; a dim of 1 reads index 0.
        if (out.size() < in.size()) return false;
        const size_t lead = out.size() - in.size();
        std::vector<Dim> next(out.size());
        for (size_t d = 0; d < out.size(); ++d)
          next[d] = d < lead || in[d - lead] == 1 ? Dim{Part{out[d], 0}} : dims[d - lead];
        dims = std::move(next);
        return true;
      }
      case Prologue::Reverse:
        for (int64_t a : op.attr_ints("axes")) {
          if (a < 0) a += int64_t(in.size());
          std::optional<int64_t> stride = single(dims[size_t(a)]);
          if (!stride) return false;
          offset += (in[size_t(a)] - 1) * *stride;
          dims[size_t(a)] = {Part{in[size_t(a)], -*stride}};
        }
        return true;
      default: return false;
    }
  }
};

}  // namespace

StridedView contiguous_view(const Shape& shape) {
  StridedView v;
  v.shape = shape;
  v.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * shape[d];
  return v;
}

std::optional<StridedView> compose_index_maps(const Shape& source, const std::vector<const ir::Op*>& maps) {
  const StridedView start = contiguous_view(source);
  Composer c;
  for (size_t d = 0; d < source.size(); ++d) c.dims.push_back({Part{source[d], start.strides[d]}});
  Shape in = source;
  for (const ir::Op* op : maps) {
    const Shape& out = op->result()->type.shape;
    if (!c.apply(*op, in, out) || c.dims.size() != out.size()) return std::nullopt;
    in = out;
  }
  StridedView v;
  v.shape = in;
  v.offset = c.offset;
  for (size_t d = 0; d < in.size(); ++d) {
    std::optional<int64_t> stride = Composer::single(c.dims[d]);
    if (in[d] == 1) stride = stride.value_or(0);
    if (!stride) return std::nullopt;
    v.strides.push_back(*stride);
  }
  return v;
}

}  // namespace vkc::codegen
