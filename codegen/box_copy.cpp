#include "codegen/box_copy.h"

#include "codegen/storage_plan.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace {

using Ints = std::vector<int64_t>;

class BoxCopier {
 public:
  BoxCopier(ir::Graph& g, ir::Op* position, ir::Value* source, const BoxCopyLimits& l, std::set<const ir::Op*>& made)
      : g_(g), at_(position), src_(source), l_(l), made_(made) {}

  ir::Value* copy(const Ints& start, const Ints& extent) {
    const Shape& shape = src_->type.shape;
    const int rank = int(shape.size());
    const uint64_t es = dtype_size(src_->type.dtype);
    if (std::optional<int64_t> off = contiguous_run_offset(shape, start, extent); off && (uint64_t(*off) * es) % l_.align == 0)
      return slice(src_, start, extent);  // a view as it is
    // The first dim the box spans more than one index of: the box is rows of it.
    int j = rank - 1;
    for (int d = 0; d < rank; ++d)
      if (extent[size_t(d)] != 1) {
        j = d;
        break;
      }
    const int64_t row = product(Ints(shape.begin() + j + 1, shape.end()));  // elements per index of dim j
    int64_t base = 0;  // element offset of the box's first row
    for (int d = 0; d < rank; ++d) base = base * shape[size_t(d)] + (d <= j ? start[size_t(d)] : 0);
    // A window holds up to align - es bytes before the box's first row.
    const uint64_t room = l_.bytes > l_.align ? l_.bytes - l_.align : 0;
    const int64_t rows = int64_t(room / es) / std::max<int64_t>(row, 1);
    std::vector<ir::Value*> parts;
    if (rows >= 1) {
      for (int64_t r0 = start[size_t(j)]; r0 < start[size_t(j)] + extent[size_t(j)]; r0 += rows) {
        const int64_t n = std::min(rows, start[size_t(j)] + extent[size_t(j)] - r0);
        const int64_t lo = base + (r0 - start[size_t(j)]) * row, hi = lo + n * row;
        const int64_t a = lo - int64_t((uint64_t(lo) * es % l_.align) / es);  // aligned down
        ir::Value* v = slice(flat(), {a}, {hi - a});  // a view
        if (a != lo) v = slice(v, {lo - a}, {hi - lo});  // the copy
        Ints rows_shape{n};
        rows_shape.insert(rows_shape.end(), shape.begin() + j + 1, shape.end());
        v = reshape(v, rows_shape);
        Ints s(rows_shape.size(), 0), e = rows_shape;
        for (int d = j + 1; d < rank; ++d) {
          s[size_t(d - j)] = start[size_t(d)];
          e[size_t(d - j)] = extent[size_t(d)];
        }
        if (e != rows_shape) v = slice(v, s, e);  // the columns of those rows: a copy
        Ints part = extent;
        part[size_t(j)] = n;
        parts.push_back(reshape(v, part));
      }
    } else {
      // One index of dim j is beyond a window: one at a time, each a box of the dims after it.
      for (int64_t i = start[size_t(j)]; i < start[size_t(j)] + extent[size_t(j)]; ++i) {
        Ints s = start, e = extent;
        s[size_t(j)] = i;
        e[size_t(j)] = 1;
        parts.push_back(copy(s, e));
      }
    }
    return parts.size() == 1 ? parts[0] : concat(parts, j);
  }

 private:
  ir::Value* flat() {
    if (!flat_) flat_ = reshape(src_, {src_->type.numel()});
    return flat_;
  }
  ir::Value* reshape(ir::Value* v, const Ints& shape) {
    if (v->type.shape == shape) return v;
    return add(ir::OpKind::Reshape, {v}, {{"shape", shape}});
  }
  ir::Value* slice(ir::Value* v, const Ints& start, const Ints& extent) {
    Ints ends(start.size()), axes(start.size());
    for (size_t d = 0; d < start.size(); ++d) {
      ends[d] = start[d] + extent[d];
      axes[d] = int64_t(d);
    }
    if (extent == v->type.shape) return v;
    return add(ir::OpKind::Slice, {v}, {{"starts", start}, {"ends", ends}, {"axes", axes}});
  }
  ir::Value* concat(const std::vector<ir::Value*>& parts, int axis) {
    return add(ir::OpKind::Concat, parts, {{"axis", int64_t(axis)}});
  }
  ir::Value* add(ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs) {
    ir::Op* op = g_.insert_op(at_, kind, std::move(operands), std::move(attrs), cat(at_->name, ".copy"), at_->loc);
    made_.insert(op);
    return op->result();
  }

  ir::Graph& g_;
  ir::Op* at_;
  ir::Value* src_;
  ir::Value* flat_ = nullptr;
  BoxCopyLimits l_;
  std::set<const ir::Op*>& made_;
};

}  // namespace

ir::Value* copy_box(ir::Graph& g, ir::Op* position, ir::Value* source, const std::vector<int64_t>& start,
                    const std::vector<int64_t>& extent, const BoxCopyLimits& limits, std::set<const ir::Op*>& made) {
  check(start.size() == source->type.shape.size() && extent.size() == start.size(), "internal: box of rank ",
        start.size(), " in ", source->type.str());
  return BoxCopier(g, position, source, limits, made).copy(start, extent);
}

}  // namespace vkc::codegen
