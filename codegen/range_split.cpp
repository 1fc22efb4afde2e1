#include "codegen/range_split.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <variant>

#include "codegen/box_copy.h"
#include "codegen/range_split_internal.h"
#include "codegen/range_split_parts.h"
#include "codegen/split_axes.h"
#include "codegen/storage_plan.h"
#include "ir/conv_geometry.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {
namespace split_detail {

std::vector<Bound> bound_tensors(const ir::Op& op, const AxisMap& m, const std::set<const ir::Value*>& in_registers) {
  std::vector<Bound> b;
  for (int k = 0; k < op.num_operands(); ++k)
    b.push_back({op.operand_label(k), op.operand(k), m.operand_axis[size_t(k)], in_registers.count(op.operand(k)) > 0,
                 k == 0 ? m.window : std::vector<std::optional<Window>>(m.parallel.size())});
  for (size_t r = 0; r < op.results.size(); ++r) {
    std::vector<int> id(m.parallel.size());
    std::iota(id.begin(), id.end(), 0);
    b.push_back({op.results.size() == 1 ? "result" : cat("result ", r), op.result(int(r)), id,
                 in_registers.count(op.result(int(r))) > 0, std::vector<std::optional<Window>>(m.parallel.size()), true});
  }
  return b;
}

// The box of one piece in a tensor: dims that follow a result dim before `axis` hold one index,
// the dim that follows `axis` holds `run`, every other dim is whole. Through a window, the input
// rows that one index (before `axis`) or the run reads, halo included (at most).
std::vector<int64_t> piece_extent(const Bound& t, int axis, int64_t run) {
  std::vector<int64_t> e = t.value->type.shape;
  for (int d = 0; d <= axis; ++d) {
    const int td = t.axis_of[size_t(d)];
    if (td < 0) continue;
    if (const std::optional<Window>& w = t.window[size_t(d)])
      e[size_t(td)] = std::min(e[size_t(td)], w->max_input_rows(d == axis ? run : 1));
    else e[size_t(td)] = d == axis ? run : 1;
  }
  return e;
}

bool too_big(const Bound& t, const std::vector<int64_t>& extent, const Limits& l) {
  return !t.in_registers && too_big(t.value->type, extent, l);
}

std::string limit_text(const ir::TensorType& t, const std::vector<int64_t>& extent, const Limits& l) {
  if (bytes_of(t, extent) > l.bytes) return cat(bytes_of(t, extent), " bytes, above ", l.range_name);
  return cat(shape_numel(extent), " elements, above 32-bit indexing (", l.elements, ")");
}

// Tensors too big to bind whole: their pieces must be views, contiguous runs at view_alignment
// offsets. A piece of a smaller operand (a bias, a broadcast row, a transposed filter) may be a
// copy made by an ordinary slice kernel, and smaller results (a reduction's) may be joined by an
// ordinary concat kernel; both bind the whole tensor, which fits.
bool must_view(const Bound& t, const Limits& l) { return too_big(t, t.value->type.shape, l); }

// The cut with the fewest pieces, or the reason there is none. `copy_operands`: pieces of operands
// need not be views (codegen/box_copy.h copies them), and result pieces need be contiguous runs
// only, at any offset (Splitter::assemble copies them into aligned chunks of the result).
std::variant<Cut, std::string> choose_cut(const ir::Op& op, const AxisMap& m, const std::vector<Bound>& tensors,
                                          const Limits& l, bool copy_operands) {
  const Shape& out = op.result()->type.shape;
  std::string why = "none of its result dims can be computed piece by piece";
  int64_t prefix = 1;  // pieces from the dims before `axis`
  for (int axis = 0; axis < int(out.size()); ++axis) {
    // A windowed dim before the cut goes one output index at a time, each reading its window of
    // input rows (a depth slice of a volume, then rows within it); not im2col's runs of whole rows.
    if (axis > 0 && m.window[size_t(axis - 1)] && m.window[size_t(axis - 1)]->unit != 1) {
      why += cat("; ", op_name(op.kind), " is cut along at most one dim of output positions");
      break;
    }
    if (!m.parallel[size_t(axis)]) {
      if (axis > 0) why += cat("; ", op_name(op.kind), " cannot be cut along dim ", axis, " of its result");
      break;
    }
    // Each piece starts at a multiple of the run's stride in every viewed tensor cut along `axis`,
    // and at one index of each dim before it: both must keep offsets at the view alignment.
    uint64_t granule = 1;
    bool fits = true, aligned = true;
    for (const Bound& t : tensors) {
      // Through a window of `unit` result indices per row, pieces are whole rows.
      if (const std::optional<Window>& w = t.window[size_t(axis)]) granule = std::lcm(granule, uint64_t(w->unit));
      std::vector<int64_t> one = piece_extent(t, axis, 1);
      if (too_big(t, one, l)) {
        fits = false;
        bool cut_here = std::any_of(t.axis_of.begin(), t.axis_of.begin() + axis + 1, [](int a) { return a >= 0; });
        why = cut_here ? cat(t.label, " ", t.value->type.str(), " needs ", limit_text(t.value->type, one, l),
                             " even for one index of dims 0..", axis)
                       : cat(t.label, " ", t.value->type.str(), " is read whole by every piece and is ",
                             limit_text(t.value->type, one, l));
      }
      if (!must_view(t, l) || (copy_operands && !t.is_result)) continue;
      // Contiguous for one index and for two is contiguous for any run.
      std::vector<int64_t> two = piece_extent(t, axis, std::min<int64_t>(2, out[size_t(axis)]));
      std::vector<int64_t> zero(one.size(), 0);
      if (!contiguous_run_offset(t.value->type.shape, zero, one) || !contiguous_run_offset(t.value->type.shape, zero, two)) {
        fits = false;
        why = cat("a piece of ", t.label, " ", t.value->type.str(), " along dim ", axis, " is not one contiguous range");
      }
      if (copy_operands) continue;  // result pieces written at any offset (Splitter::assemble)
      for (int d = 0; d <= axis; ++d) {
        int td = t.axis_of[size_t(d)];
        if (td < 0) continue;
        uint64_t stride = uint64_t(shape_numel(Shape(t.value->type.shape.begin() + td + 1, t.value->type.shape.end()))) *
                          dtype_size(t.value->type.dtype);
        // Through a window, piece b starts at row b * stride - pad: both terms must keep alignment.
        const std::optional<Window>& w = t.window[size_t(d)];
        const uint64_t step = w ? stride * uint64_t(w->stride) : stride;
        if (w && (uint64_t(w->pad_begin) * stride) % l.align != 0) aligned = false;
        if (w && w->uneven()) aligned = false;  // pieces start at uneven rows: copies
        if (d < axis && step % l.align != 0) aligned = false;
        if (d == axis) granule = std::lcm(granule, uint64_t(w ? w->unit : 1) * (l.align / std::gcd(step, l.align)));
      }
    }
    if (fits && !aligned) why = cat("pieces cut at dim ", axis, " would not start at ", l.align, "-byte offsets");
    if (fits && aligned) {
      // The longest run that fits every tensor (sizes grow linearly with the run).
      int64_t run = out[size_t(axis)];
      for (const Bound& t : tensors) {
        int td = t.axis_of[size_t(axis)];
        if (td < 0 || t.in_registers) continue;
        std::vector<int64_t> one = piece_extent(t, axis, 1);
        if (const std::optional<Window>& w = t.window[size_t(axis)]) {
          // (run - 1) * stride + span rows of `row` bytes each must fit.
          one[size_t(td)] = 1;
          const uint64_t row = std::max<uint64_t>(bytes_of(t.value->type, one), 1);
          const int64_t row_elems = std::max<int64_t>(shape_numel(one), 1);
          const int64_t rows = std::min<int64_t>(int64_t(l.bytes / row), l.elements / row_elems);
          run = std::min<int64_t>(run, w->max_run(rows));
          continue;
        }
        run = std::min<int64_t>(run, int64_t(l.bytes / std::max<uint64_t>(bytes_of(t.value->type, one), 1)));
        run = std::min<int64_t>(run, l.elements / std::max<int64_t>(shape_numel(one), 1));
      }
      if (run < out[size_t(axis)]) run -= run % int64_t(granule);
      if (run >= 1) {
        int64_t pieces = prefix * ceil_div(out[size_t(axis)], run);
        if (pieces <= kMaxPieces) return Cut{axis, run, pieces};
        return cat("it would take ", pieces, " pieces (at most ", kMaxPieces, ")");
      }
      why = cat("pieces cut at dim ", axis, " cannot both fit and start at ", l.align, "-byte offsets");
    }
    prefix *= out[size_t(axis)];
  }
  return why;
}

// A resize cut along a resized dim (or a crop-and-resize, whose coordinates depend on the whole
// extents): the piece computes the whole op's coordinates for its window of the output, reading
// its operand at the whole input's indices less the operand's start (ir/resize_geometry.h).
void resize_window(const ir::Op& op, const std::vector<int64_t>& index, int64_t begin, int64_t run, int axis,
                   const Bound& input, ir::AttrMap& attrs) {
  const Shape& in = op.operand(0)->type.shape;
  const Shape& out = op.result()->type.shape;
  const size_t rank = out.size();
  std::vector<int64_t> window(4 * rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t out_start = 0, extent = out[d], in_start = 0;
    if (int(d) < axis) {
      out_start = in_start = index[d], extent = 1;
      if (const std::optional<Window>& w = input.window[d]) in_start = w->input_rows(index[d], 1, in[d]).first;
    }
    if (int(d) == axis) {
      out_start = in_start = begin;
      extent = run;
      if (const std::optional<Window>& w = input.window[d]) in_start = w->input_rows(begin, run, in[d]).first;
    }
    window[d] = out_start;
    window[rank + d] = extent;
    window[2 * rank + d] = in_start;
    window[3 * rank + d] = in[d];
  }
  attrs["window"] = window;
}

ir::AttrMap piece_attrs(const ir::Op& op, const Shape& piece_shape, const std::vector<int64_t>& index, int64_t begin,
                        int64_t run, int axis, const Bound& input) {
  ir::AttrMap attrs = op.attrs;
  bool windowed = false;  // a resized dim at or before the cut
  for (int d = 0; d <= axis; ++d) windowed = windowed || input.window[size_t(d)].has_value();
  if (op.kind == ir::OpKind::Resize && (windowed || ir::resize_geometry(op).extrapolates())) {
    resize_window(op, index, begin, run, axis, input, attrs);
    return attrs;
  }
  // Cut through windows (the cut dim, and windowed dims before it one output index at a time):
  // the piece pads only where its rows reach past the input's edge.
  std::vector<int64_t> pads, output_padding;
  for (int d = 0; d <= axis; ++d) {
    const std::optional<Window>& w = input.window[size_t(d)];
    if (!w || w->resize) continue;
    int64_t b = d < axis ? index[size_t(d)] : begin, r = d < axis ? 1 : run;
    ir::ConvGeometry g = op.schema().category == ir::OpCategory::Pool ? ir::pool_geometry(op) : ir::conv_geometry(op);
    if (pads.empty()) {
      pads = g.pad_begin;
      pads.insert(pads.end(), g.pad_end.begin(), g.pad_end.end());
      output_padding = g.output_padding;
    }
    const int64_t dim = input.value->type.shape[size_t(input.axis_of[size_t(d)])];
    if (w->transposed) {
      // The piece's output row 0 is the op's row `b`: its rows [first, last) gathered, the
      // piece's own pads cropping what they give outside [b, b + r), output_padding making up
      // rows no input reaches at the end (less than a stride).
      const auto [first, last] = w->input_rows(b, r, dim);
      const int64_t pb = b + w->pad_begin - first * w->stride;
      const int64_t pe = (last - first - 1) * w->stride + w->span - pb - r;
      pads[size_t(w->spatial)] = pb;
      pads[size_t(g.spatial_rank + w->spatial)] = std::max<int64_t>(0, pe);
      output_padding[size_t(w->spatial)] = std::max<int64_t>(0, -pe);
      attrs.erase("output_shape");  // it would override the pads
      attrs["output_padding"] = output_padding;
    } else {
      b /= w->unit;  // in output rows
      r = w->rows(r);
      pads[size_t(w->spatial)] = std::max<int64_t>(0, w->pad_begin - b * w->stride);
      // At most the op's own end pad: a ceil_mode window reaching past it stays a ceil_mode window.
      pads[size_t(g.spatial_rank + w->spatial)] = std::min<int64_t>(
          g.pad_end[size_t(w->spatial)], std::max<int64_t>(0, (b + r - 1) * w->stride - w->pad_begin + w->span - dim));
    }
    attrs["pads"] = pads;
  }
  // Causal attention cut along its query rows: the piece's rows [begin, begin + run) of Sq keep
  // the whole op's diagonal (key j hidden from row i when j > i + Sk - Sq + causal_offset).
  if (op.kind == ir::OpKind::Attention && op.attr_bool("causal") && size_t(axis) + 2 == piece_shape.size())
    attrs["causal_offset"] = op.attr_int("causal_offset") + begin + run - op.result()->type.shape[size_t(axis)];
  // Attributes that spell out the whole result shape follow the piece (a depthwise conv's groups:
  // its channels; codegen/split_axes.cpp cuts no other grouped conv along channels).
  if (op.kind == ir::OpKind::Conv && op.attr_int("groups") > 1) {
    const ir::ConvGeometry g = ir::conv_geometry(op);
    if (g.groups == g.in_channels && g.groups == g.out_channels) attrs["groups"] = piece_shape[size_t(g.output_pos[1])];
  }
  if (op.kind == ir::OpKind::Resize) attrs["sizes"] = std::vector<int64_t>(piece_shape);
  if (op.kind == ir::OpKind::Broadcast) attrs["shape"] = std::vector<int64_t>(piece_shape);
  return attrs;
}

class Splitter {
 public:
  // `made`: collects the slices and concats it inserts (views, not work to split again).
  Splitter(ir::Graph& g, ir::Op* op, const Cut& cut, std::vector<Bound> tensors, const Limits& l,
           std::set<const ir::Op*>& made, bool assemble)
      : g_(g), op_(op), cut_(cut), tensors_(std::move(tensors)), l_(l), made_(made), assemble_(assemble) {}

  // Inserts the pieces and the concats before op_, redirects its uses and erases it.
  std::vector<ir::Op*> run() {
    std::vector<int64_t> index;
    pieces_of_.resize(op_->results.size());
    std::vector<ir::Value*> joined = build(0, index);
    if (assemble_) {
      joined.clear();
      for (size_t r = 0; r < op_->results.size(); ++r) joined.push_back(assemble(int(r)));
    }
    for (size_t r = 0; r < op_->results.size(); ++r) g_.replace_all_uses(op_->result(int(r)), joined[r]);
    g_.erase_op(op_);
    return pieces_;
  }

  std::vector<Ints> operand0_starts;  // per piece: where its box of operand 0 starts

 private:
  ir::Value* slice(const Bound& t, const std::vector<int64_t>& index, int64_t begin, int64_t run) {
    std::vector<int64_t> starts, ends, axes;
    for (int d = 0; d <= cut_.axis; ++d) {
      int td = t.axis_of[size_t(d)];
      if (td < 0) continue;
      int64_t s = d < cut_.axis ? index[size_t(d)] : begin;
      int64_t e = s + (d < cut_.axis ? 1 : run);
      if (const std::optional<Window>& w = t.window[size_t(d)]) {  // the rows read
        const int64_t dim = t.value->type.shape[size_t(td)];
        std::tie(s, e) = w->input_rows(s, e - s, dim);
      }
      starts.push_back(s);
      ends.push_back(e);
      axes.push_back(td);
    }
    std::vector<int64_t> box_start(t.value->type.shape.size(), 0), box_extent = t.value->type.shape;
    for (size_t i = 0; i < axes.size(); ++i) {
      box_start[size_t(axes[i])] = starts[i];
      box_extent[size_t(axes[i])] = ends[i] - starts[i];
    }
    if (&t == &tensors_[0]) operand0_starts.push_back(box_start);
    if (starts.empty()) return const_cast<ir::Value*>(t.value);
    if (must_view(t, l_)) {  // a view where the piece is one aligned run, else a copy through windows
      return copy_box(g_, op_, const_cast<ir::Value*>(t.value), box_start, box_extent, {l_.bytes, l_.align}, made_);
    }
    ir::Op* s = g_.insert_op(op_, ir::OpKind::Slice, {const_cast<ir::Value*>(t.value)},
                             {{"starts", starts}, {"ends", ends}, {"axes", axes}}, cat(op_->name, ".in"), op_->loc);
    made_.insert(s);
    return s->result();
  }

  // The op's results for the index prefix `index` (one index per dim before `level`).
  std::vector<ir::Value*> build(int level, std::vector<int64_t>& index) {
    const Shape& out = op_->result()->type.shape;
    std::vector<std::vector<ir::Value*>> parts(op_->results.size());
    if (level == cut_.axis) {
      for (int64_t begin = 0; begin < out[size_t(level)]; begin += cut_.run) {
        int64_t run = std::min(cut_.run, out[size_t(level)] - begin);
        std::vector<ir::Value*> operands;
        for (int k = 0; k < op_->num_operands(); ++k) operands.push_back(slice(tensors_[size_t(k)], index, begin, run));
        Shape piece_shape = out;
        for (int d = 0; d <= cut_.axis; ++d) piece_shape[size_t(d)] = d < cut_.axis ? 1 : run;
        ir::Op* piece = g_.insert_op(op_, op_->kind, operands, piece_attrs(*op_, piece_shape, index, begin, run, cut_.axis, tensors_[0]),
                                     cat(op_->name, op_->name.empty() ? "" : ".", "part", pieces_.size()), op_->loc);
        check(piece->result()->type.shape == piece_shape, "internal: piece of ", op_->describe(), " has shape ",
              shape_str(piece->result()->type.shape), ", expected ", shape_str(piece_shape));
        pieces_.push_back(piece);
        for (size_t r = 0; r < parts.size(); ++r) parts[r].push_back(piece->result(int(r)));
      }
    } else {
      for (int64_t i = 0; i < out[size_t(level)]; ++i) {
        index.push_back(i);
        std::vector<ir::Value*> sub = build(level + 1, index);
        index.pop_back();
        for (size_t r = 0; r < parts.size(); ++r) parts[r].push_back(sub[r]);
      }
    }
    std::vector<ir::Value*> joined;
    if (assemble_) {  // pieces kept in order for assemble()
      if (level == cut_.axis)
        for (size_t r = 0; r < parts.size(); ++r) pieces_of_[r].insert(pieces_of_[r].end(), parts[r].begin(), parts[r].end());
      return std::vector<ir::Value*>(parts.size(), nullptr);
    }
    for (std::vector<ir::Value*>& p : parts) {
      if (p.size() == 1) {
        joined.push_back(p[0]);
        continue;
      }
      ir::Op* c = g_.insert_op(op_, ir::OpKind::Concat, p, {{"axis", int64_t(level)}}, cat(op_->name, ".join"), op_->loc);
      made_.insert(c);
      joined.push_back(c->result());
    }
    return joined;
  }

  ir::Value* add(ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs) {
    ir::Op* o = g_.insert_op(op_, kind, std::move(operands), std::move(attrs), cat(op_->name, ".join"), op_->loc);
    made_.insert(o);
    return o->result();
  }
  ir::Value* flat(ir::Value* v) {
    return v->type.shape.size() == 1 ? v : add(ir::OpKind::Reshape, {v}, {{"shape", Ints{v->type.numel()}}});
  }

  // Result r from its pieces in row-major order (split_detail::assemble_runs).
  ir::Value* assemble(int r) {
    std::vector<ir::Value*> flats;
    for (ir::Value* p : pieces_of_[size_t(r)]) flats.push_back(flat(p));
    return assemble_runs(flats, op_->result(r)->type, l_,
                         [&](ir::OpKind k, std::vector<ir::Value*> operands, ir::AttrMap attrs) {
                           return add(k, std::move(operands), std::move(attrs));
                         });
  }

  ir::Graph& g_;
  ir::Op* op_;
  Cut cut_;
  std::vector<Bound> tensors_;
  Limits l_;
  std::vector<ir::Op*> pieces_;
  std::set<const ir::Op*>& made_;
  bool assemble_;
  std::vector<std::vector<ir::Value*>> pieces_of_;  // per result: its pieces in row-major order
};

std::vector<ir::Op*> cut_into_pieces(ir::Graph& g, ir::Op* op, const Cut& cut, std::vector<Bound> tensors,
                                     const Limits& l, std::set<const ir::Op*>& made, bool assemble,
                                     std::vector<Ints>* operand0_starts) {
  Splitter s(g, op, cut, std::move(tensors), l, made, assemble);
  std::vector<ir::Op*> pieces = s.run();
  if (operand0_starts) *operand0_starts = s.operand0_starts;
  return pieces;
}

// 1 + the last dim before `axis` that `t` reads through a window (0: none).
int windowed_before(const Bound& t, int axis) {
  for (int d = axis - 1; d >= 0; --d)
    if (t.window[size_t(d)]) return d + 1;
  return 0;
}

// A concat whose operands lie end to end in its result and each fit: storage_plan.h may write it
// in place.
bool concat_may_be_in_place(const ir::Op& op, const Limits& l) {
  const Shape& out = op.result()->type.shape;
  int axis = normalized_axis(op.attr_int("axis"), out.size());
  for (int d = 0; d < axis; ++d)
    if (out[size_t(d)] != 1) return false;
  for (const ir::Value* v : op.operands)
    if (too_big(v->type, v->type.shape, l)) return false;
  return true;
}

// One binding: within maxStorageBufferRange, and within one allocation where the target says how
// large one may be (so that storage above it can be held in segments cut between the pieces).
Limits limits_of(const TargetLimits& target) {
  const uint64_t alloc = target.max_memory_allocation_size;
  if (alloc != 0 && alloc < target.max_storage_buffer_range)
    return {alloc, kMaxPieceElements, view_alignment(target),
            cat("target '", target.name, "' maxMemoryAllocationSize ", alloc), target.shader_int64};
  return {target.max_storage_buffer_range, kMaxPieceElements, view_alignment(target),
          cat("target '", target.name, "' maxStorageBufferRange ", target.max_storage_buffer_range), target.shader_int64};
}

}  // namespace split_detail

using namespace split_detail;

bool exceeds_binding_limits(const ir::Graph& graph, const TargetLimits& target) {
  const Limits l = limits_of(target);
  for (const ir::Op* op : graph.ops()) {
    for (const ir::Value* v : op->operands)
      if (too_big(v->type, v->type.shape, l)) return true;
    for (const ir::Value* v : op->results)
      if (too_big(v->type, v->type.shape, l)) return true;
  }
  return false;
}

namespace split_detail {

// Partial results of `op` joined by adds in order; the sum replaces `op`, which is erased.
// Returns the partials (the pieces a later round may cut further).
std::vector<ir::Op*> replace_by_sum(ir::Graph& g, ir::Op* op, const std::vector<ir::Op*>& partials) {
  ir::Value* sum = nullptr;
  for (ir::Op* part : partials)
    sum = sum ? g.insert_op(op, ir::OpKind::Add, {sum, part->result()}, {}, cat(op->name, ".sum"), op->loc)->result()
              : part->result();
  g.replace_all_uses(op->result(), sum);
  g.erase_op(op);
  return partials;
}

// A conv whose input is too big even for one image, in a layout with the channels outside the rows
// (NCHW): partial convs over blocks of input channels, each block one contiguous run of the input,
// summed by adds. Returns the partial convs, or nothing when the conv is not of that kind or no
// block fits. The partial results are as large as the result: a later round cuts them further.
std::vector<ir::Op*> split_input_channels(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made) {
  if (op->kind != ir::OpKind::Conv) return {};
  const ir::ConvGeometry geo = ir::conv_geometry(*op);
  const ir::Value* x = op->operand(0);
  const Shape& in = x->type.shape;
  const size_t c_axis = size_t(geo.input_pos[1]);
  if (geo.groups != 1 || geo.in_channels < 2 || !too_big(x->type, in, l)) return {};
  for (size_t d = 0; d < c_axis; ++d)
    if (in[d] != 1) return {};
  Shape unit_shape = in;
  unit_shape[c_axis] = 1;
  const uint64_t unit = bytes_of(x->type, unit_shape);  // one input channel, all rows
  int64_t block = std::min<int64_t>(int64_t(l.bytes / std::max<uint64_t>(unit, 1)),
                                    l.elements / std::max<int64_t>(shape_numel(unit_shape), 1));
  block -= block % int64_t(l.align / std::gcd(unit, l.align));
  if (block < 1 || block >= geo.in_channels) return {};
  std::vector<ir::Op*> partials;
  for (int64_t c0 = 0; c0 < geo.in_channels; c0 += block) {
    const int64_t c1 = std::min(geo.in_channels, c0 + block);
    auto channels = [&](ir::Value* v, int64_t axis) {
      ir::Op* s = g.insert_op(op, ir::OpKind::Slice, {v}, {{"starts", Ints{c0}}, {"ends", Ints{c1}}, {"axes", Ints{axis}}},
                              cat(op->name, ".in"), op->loc);
      made.insert(s);
      return s->result();
    };
    std::vector<ir::Value*> operands{channels(op->operand(0), int64_t(c_axis)), channels(op->operand(1), geo.filter_pos[1])};
    if (op->num_operands() == 3 && c0 == 0) operands.push_back(op->operand(2));  // the bias once
    partials.push_back(g.insert_op(op, ir::OpKind::Conv, operands, op->attrs,
                                   cat(op->name, op->name.empty() ? "" : ".", "channels", c0, "-", c1 - 1), op->loc));
  }
  return replace_by_sum(g, op, partials);
}

// A grouped conv whose one image is beyond a binding (ResNeXt's and RegNet's at high resolution):
// convs over blocks of whole groups, each on its groups' input channels, filters and bias, joined
// along the output channels (in place where the dims before them are 1, as for one image). Each
// piece is an ordinary conv of fewer groups, cut again in later rounds where still too large (one
// group is an ordinary conv, cut along rows or input channels).
std::vector<ir::Op*> split_conv_groups(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made) {
  if (op->kind != ir::OpKind::Conv) return {};
  const ir::ConvGeometry geo = ir::conv_geometry(*op);
  if (geo.groups < 2) return {};
  const ir::Value* y = op->result();
  // The join along the output channels is in place only for one image with channels outside the
  // rows: several images first become one conv per image (joined along the batch, in place), each
  // cut by groups in the next round.
  if (geo.input_pos[0] != 0 || geo.output_pos[0] != 0 || geo.output_pos[1] != 1) return {};
  if (y->type.shape[0] > 1) {
    std::vector<ir::Op*> images;
    std::vector<ir::Value*> results;
    for (int64_t i = 0; i < y->type.shape[0]; ++i) {
      std::vector<ir::Value*> operands = op->operands;
      operands[0] = slice_along(g, op, op->operand(0), 0, i, i + 1, l, made);
      images.push_back(g.insert_op(op, ir::OpKind::Conv, operands, op->attrs,
                                   cat(op->name, op->name.empty() ? "" : ".", "image", i), op->loc));
      results.push_back(images.back()->result());
    }
    ir::Op* joined = g.insert_op(op, ir::OpKind::Concat, results, {{"axis", int64_t(0)}}, cat(op->name, ".images_joined"), op->loc);
    made.insert(joined);
    g.replace_all_uses(op->result(), joined->result());
    g.erase_op(op);
    return images;
  }
  const int64_t in_g = geo.in_channels_per_group(), out_g = geo.out_channels / geo.groups;
  // The most groups a piece may hold so that its input and result fit one binding (at least 1).
  const uint64_t per_group = std::max(bytes_of(op->operand(0)->type, op->operand(0)->type.shape) / uint64_t(geo.groups),
                                      bytes_of(y->type, y->type.shape) / uint64_t(geo.groups));
  const int64_t block = std::clamp<int64_t>(int64_t(l.bytes / std::max<uint64_t>(per_group, 1)), 1, geo.groups - 1);
  if (ceil_div(geo.groups, block) > kMaxPieces) return {};
  std::vector<ir::Op*> pieces;
  std::vector<ir::Value*> results;
  for (int64_t g0 = 0; g0 < geo.groups; g0 += block) {
    const int64_t g1 = std::min(geo.groups, g0 + block);
    std::vector<ir::Value*> operands{slice_along(g, op, op->operand(0), geo.input_pos[1], g0 * in_g, g1 * in_g, l, made),
                                     slice_along(g, op, op->operand(1), geo.filter_pos[0], g0 * out_g, g1 * out_g, l, made)};
    if (op->num_operands() == 3) operands.push_back(slice_along(g, op, op->operand(2), 0, g0 * out_g, g1 * out_g, l, made));
    ir::AttrMap attrs = op->attrs;
    attrs["groups"] = g1 - g0;
    pieces.push_back(g.insert_op(op, ir::OpKind::Conv, operands, attrs,
                                 cat(op->name, op->name.empty() ? "" : ".", "groups", g0, "-", g1 - 1), op->loc));
    results.push_back(pieces.back()->result());
  }
  ir::Op* joined = g.insert_op(op, ir::OpKind::Concat, results, {{"axis", int64_t(geo.output_pos[1])}},
                               cat(op->name, ".groups_joined"), op->loc);
  made.insert(joined);
  g.replace_all_uses(op->result(), joined->result());
  g.erase_op(op);
  return pieces;
}

// Pieces that are contiguous runs of a result in row-major order, at offsets a device may not
// bind: written as chunks of the flat result that start at aligned offsets and fit a binding, each
// chunk a concat of the parts of the pieces it overlaps (slice kernels where a piece is cut by a
// chunk boundary); the chunks lie end to end in the result (an in-place concat).
ir::Value* assemble_runs(const std::vector<ir::Value*>& flats, const ir::TensorType& whole, const Limits& l,
                         const std::function<ir::Value*(ir::OpKind, std::vector<ir::Value*>, ir::AttrMap)>& add) {
  const int64_t es = int64_t(dtype_size(whole.dtype)), total = whole.numel();
  if (!too_big(whole, whole.shape, l)) {  // fits: one ordinary concat
    ir::Value* v = flats.size() == 1 ? flats[0] : add(ir::OpKind::Concat, flats, {{"axis", int64_t(0)}});
    return add(ir::OpKind::Reshape, {v}, {{"shape", whole.shape}});
  }
  const int64_t chunk = std::max<int64_t>(int64_t(l.bytes / l.align * l.align) / es, int64_t(l.align) / es);
  std::vector<ir::Value*> chunks;
  size_t k = 0;
  int64_t piece_begin = 0;  // element offset of flats[k]
  for (int64_t c0 = 0; c0 < total; c0 += chunk) {
    const int64_t c1 = std::min(total, c0 + chunk);
    std::vector<ir::Value*> parts;
    bool sliced = false;  // the last part is a slice of its piece
    while (k < flats.size() && piece_begin < c1) {
      const int64_t n = flats[k]->type.numel(), lo = std::max(c0, piece_begin), hi = std::min(c1, piece_begin + n);
      ir::Value* part = flats[k];
      sliced = lo - piece_begin != 0 || hi - piece_begin != n;
      if (sliced)
        part = add(ir::OpKind::Slice, {part}, {{"starts", Ints{lo - piece_begin}}, {"ends", Ints{hi - piece_begin}},
                                               {"axes", Ints{0}}});
      parts.push_back(part);
      if (piece_begin + n > c1) break;  // the rest of this piece goes into the next chunk
      piece_begin += n;
      ++k;
    }
    // A chunk that is one part of one piece would be a view into that piece (storage_plan.h),
    // which cannot itself be placed inside the result: two slices joined make it a tensor.
    if (parts.size() == 1 && sliced && parts[0]->type.numel() >= 2) {
      ir::Op* sl = parts[0]->producer;
      ir::Value* src = sl->operand(0);
      const int64_t b = sl->attr_ints("starts")[0], e = sl->attr_ints("ends")[0];
      parts = {add(ir::OpKind::Slice, {src}, {{"starts", Ints{b}}, {"ends", Ints{b + 1}}, {"axes", Ints{0}}}),
               add(ir::OpKind::Slice, {src}, {{"starts", Ints{b + 1}}, {"ends", Ints{e}}, {"axes", Ints{0}}})};
    }
    chunks.push_back(parts.size() == 1 ? parts[0] : add(ir::OpKind::Concat, parts, {{"axis", int64_t(0)}}));
  }
  ir::Value* v = chunks.size() == 1 ? chunks[0] : add(ir::OpKind::Concat, chunks, {{"axis", int64_t(0)}});
  return add(ir::OpKind::Reshape, {v}, {{"shape", whole.shape}});
}

// A slice [k0, k1) of `v` along `axis`: through codegen/box_copy.h where `v` is too large to bind
// whole (a view where the slice is one aligned run), else an ordinary slice kernel.
ir::Value* slice_along(ir::Graph& g, ir::Op* at, ir::Value* v, int64_t axis, int64_t k0, int64_t k1, const Limits& l,
                       std::set<const ir::Op*>& made) {
  if (too_big(v->type, v->type.shape, l)) {
    std::vector<int64_t> start(v->type.shape.size(), 0), extent = v->type.shape;
    start[size_t(axis)] = k0;
    extent[size_t(axis)] = k1 - k0;
    return copy_box(g, at, v, start, extent, {l.bytes, l.align}, made);
  }
  ir::Op* s = g.insert_op(at, ir::OpKind::Slice, {v}, {{"starts", Ints{k0}}, {"ends", Ints{k1}}, {"axes", Ints{axis}}},
                          cat(at->name, ".in"), at->loc);
  made.insert(s);
  return s->result();
}

// A matmul, batch_matmul or gemm whose operands are too big even for one row or column of the
// result (a long K): partial products over blocks of K, each block of both operands fitting,
// summed by adds (gemm: alpha on every partial, beta * C on the first only). The partial results
// are as large as the result: a later round cuts them further.
std::vector<ir::Op*> split_contraction_k(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made) {
  if (op->schema().category != ir::OpCategory::Contraction) return {};
  ir::Value* a = op->operand(0);
  ir::Value* b = op->operand(1);
  if (a->type.shape.size() < 2 || b->type.shape.size() < 2) return {};
  const bool ta = op->attr_bool("transpose_a"), tb = op->attr_bool("transpose_b");
  const int64_t a_axis = int64_t(a->type.shape.size()) - (ta ? 2 : 1);
  const int64_t b_axis = int64_t(b->type.shape.size()) - (tb ? 1 : 2);
  const int64_t k = a->type.shape[size_t(a_axis)];
  if (k < 2) return {};
  // The longest block whose slices of both operands fit (sizes grow linearly with it).
  int64_t block = k;
  for (auto [v, axis] : {std::pair{a, a_axis}, std::pair{b, b_axis}}) {
    Shape one = v->type.shape;
    one[size_t(axis)] = 1;
    block = std::min<int64_t>(block, int64_t(l.bytes / std::max<uint64_t>(bytes_of(v->type, one), 1)));
    block = std::min<int64_t>(block, l.elements / std::max<int64_t>(shape_numel(one), 1));
  }
  if (block < 1 || block >= k || ceil_div(k, block) > kMaxPieces) return {};
  std::vector<ir::Op*> partials;
  for (int64_t k0 = 0; k0 < k; k0 += block) {
    const int64_t k1 = std::min(k, k0 + block);
    std::vector<ir::Value*> operands{slice_along(g, op, a, a_axis, k0, k1, l, made),
                                     slice_along(g, op, b, b_axis, k0, k1, l, made)};
    if (op->num_operands() == 3 && k0 == 0) operands.push_back(op->operand(2));  // beta * C once
    partials.push_back(g.insert_op(op, op->kind, operands, op->attrs,
                                   cat(op->name, op->name.empty() ? "" : ".", "k", k0, "-", k1 - 1), op->loc));
  }
  return replace_by_sum(g, op, partials);
}

// How a reduction too large for one binding along its reduced dims is computed in pieces: each
// piece reduces a block of one reduced dim (`partial`, keeping dims), the blocks' results are
// joined along that dim and reduced again (`combine`); a mean sums and divides once at the end.
struct PartialReduction {
  ir::OpKind partial, combine;
  const char* how;  // for the report
};

std::optional<PartialReduction> partial_reduction(ir::OpKind kind) {
  using K = ir::OpKind;
  switch (kind) {
    case K::ReduceSum: return PartialReduction{K::ReduceSum, K::ReduceSum, "summed"};
    case K::ReduceMean: return PartialReduction{K::ReduceSum, K::ReduceSum, "summed, then divided by the count"};
    case K::ReduceMax: return PartialReduction{K::ReduceMax, K::ReduceMax, "combined by reduce_max"};
    case K::ReduceMin: return PartialReduction{K::ReduceMin, K::ReduceMin, "combined by reduce_min"};
    case K::ReduceProd: return PartialReduction{K::ReduceProd, K::ReduceProd, "multiplied"};
    case K::ReduceL1: return PartialReduction{K::ReduceL1, K::ReduceSum, "summed"};
    case K::ReduceL2: return PartialReduction{K::ReduceL2, K::ReduceL2, "combined by reduce_l2"};
    case K::ReduceLogSumExp:
      return PartialReduction{K::ReduceLogSumExp, K::ReduceLogSumExp, "combined by reduce_log_sum_exp"};
    default: return std::nullopt;
  }
}

// The longest block of x along `axis` (every other dim whole) one binding holds, cut to a multiple
// of the offset-alignment granule where longer than one: blocks that start at aligned offsets are
// views where contiguous (else copies). At most the dim's length; 0 when not one slice fits.
int64_t binding_block(const ir::TensorType& t, int64_t axis, const Limits& l) {
  const Shape& in = t.shape;
  const int64_t n = in[size_t(axis)];
  Shape one = in;
  one[size_t(axis)] = 1;
  int64_t b = std::min<int64_t>(int64_t(l.bytes / std::max<uint64_t>(bytes_of(t, one), 1)),
                                l.elements / std::max<int64_t>(shape_numel(one), 1));
  b = std::min(b, n);
  const uint64_t stride = uint64_t(shape_numel(Shape(in.begin() + axis + 1, in.end()))) * dtype_size(t.dtype);
  const int64_t granule = int64_t(l.align / std::gcd(std::max<uint64_t>(stride, 1), l.align));
  if (b < n && b > granule) b -= b % granule;
  return b;
}

int64_t binding_block(const ir::Value* x, int64_t axis, const Limits& l) { return binding_block(x->type, axis, l); }

// A reduction whose input is too big to bind even for one index of its kept dims (a reduction to
// a scalar, or along a dim longer than a binding): partial reductions over blocks of one reduced
// dim (the dim that gives the fewest blocks that fit), joined along it by a concat and reduced
// again by the combining op with the original attributes. The combining reduction is an ordinary
// op: a later round cuts it again where it is still too large. Returns the partial reductions
// (empty when the op is not such a reduction or no block fits) and sets `how` for the report.
std::vector<ir::Op*> split_reduced_dim(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                       std::string& how) {
  const std::optional<PartialReduction> pr = partial_reduction(op->kind);
  if (!pr) return {};
  ir::Value* x = op->operand(0);
  const Shape& in = x->type.shape;
  std::vector<int64_t> axes;
  for (int64_t a : op->attr_ints_or("axes", {})) axes.push_back(normalized_axis(a, in.size()));
  if (axes.empty())
    for (size_t d = 0; d < in.size(); ++d) axes.push_back(int64_t(d));
  int64_t axis = -1, block = 0, pieces = 0;
  for (int64_t a : axes) {
    const int64_t b = binding_block(x, a, l);
    if (b < 1 || b >= in[size_t(a)] || ceil_div(in[size_t(a)], b) > kMaxPieces) continue;
    if (axis < 0 || ceil_div(in[size_t(a)], b) < pieces) {
      axis = a;
      block = b;
      pieces = ceil_div(in[size_t(a)], b);
    }
  }
  if (axis < 0) return {};
  ir::AttrMap partial_attrs = op->attrs;
  partial_attrs["keepdims"] = true;
  std::vector<ir::Op*> partials;
  std::vector<ir::Value*> results;
  for (int64_t k0 = 0; k0 < in[size_t(axis)]; k0 += block) {
    const int64_t k1 = std::min(in[size_t(axis)], k0 + block);
    ir::Value* piece = slice_along(g, op, x, axis, k0, k1, l, made);
    ir::Op* p = g.insert_op(op, pr->partial, {piece}, partial_attrs,
                            cat(op->name, op->name.empty() ? "" : ".", "block", k0, "-", k1 - 1), op->loc);
    partials.push_back(p);
    results.push_back(p->result());
  }
  ir::Value* joined =
      g.insert_op(op, ir::OpKind::Concat, results, {{"axis", axis}}, cat(op->name, ".partials"), op->loc)->result();
  ir::Op* combine = g.insert_op(op, pr->combine, {joined}, op->attrs, cat(op->name, ".combine"), op->loc);
  ir::Value* result = combine->result();
  if (op->kind == ir::OpKind::ReduceMean) {  // the count of reduced elements, divided once
    int64_t count = 1;
    for (int64_t a : axes) count *= in[size_t(a)];
    HostTensor n(result->type.dtype, {});
    n.set_f64(0, double(count));
    ir::Value* c = g.add_constant(std::move(n), cat(op->name, ".count"));
    g.move_before(c->producer, op);
    result = g.insert_op(op, ir::OpKind::Div, {result, c}, {}, cat(op->name, ".mean"), op->loc)->result();
  }
  g.replace_all_uses(op->result(), result);
  g.erase_op(op);
  how = cat("partial ", op_name(pr->partial), " over blocks of ", block, " of dim ", axis, ", ", pr->how);
  return partials;
}

// A cumsum along a dim too long for one binding: cut along that dim like a parallel one (each
// piece the cumsum of its block, with the op's exclusive and reverse), then a carry pass adds to
// each block the sum of the blocks before it (after it, reversed), from per-block reduce_sums of
// the block's input. Returns the pieces (empty when the op is no such cumsum or no cut along its
// axis fits) and the cut for the report.
std::vector<ir::Op*> split_scan_with_carry(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                           std::string& note) {
  if (op->kind != ir::OpKind::CumSum) return {};
  const Shape& shape = op->result()->type.shape;
  const int axis = normalized_axis(op->attr_int("axis"), shape.size());
  AxisMap m = axis_map(*op);
  m.parallel[size_t(axis)] = true;  // blocks of the axis, joined by the carry pass below
  m.operand_axis[0][size_t(axis)] = axis;
  std::vector<Bound> tensors = bound_tensors(*op, m, {});
  bool copies = false;
  std::variant<Cut, std::string> cut = choose_cut(*op, m, tensors, l, false);
  if (!std::holds_alternative<Cut>(cut) || std::get<Cut>(cut).axis != axis) {
    cut = choose_cut(*op, m, tensors, l, true);
    copies = true;
  }
  if (!std::holds_alternative<Cut>(cut) || std::get<Cut>(cut).axis != axis) return {};
  const Cut c = std::get<Cut>(cut);
  const std::string name = op->name;
  const ir::Location loc = op->loc;
  const bool reverse = op->attr_bool("reverse");
  std::vector<ir::Op*> pieces = Splitter(g, op, c, std::move(tensors), l, made, copies).run();
  const size_t per_group = size_t(ceil_div(shape[size_t(axis)], c.run));  // blocks per index of the dims before
  for (size_t g0 = 0; g0 < pieces.size(); g0 += per_group) {
    const std::vector<ir::Op*> group(pieces.begin() + std::ptrdiff_t(g0), pieces.begin() + std::ptrdiff_t(g0 + per_group));
    // Everything goes before the first op that joins a piece of this group (after all of them).
    std::vector<ir::Op*> order = g.ops();
    ir::Op* at = nullptr;
    size_t at_index = order.size();
    for (ir::Op* p : group)
      for (ir::Op* u : g.users(p->result())) {
        size_t i = size_t(std::find(order.begin(), order.end(), u) - order.begin());
        if (i < at_index) at_index = i, at = u;
      }
    check(at != nullptr, "internal: cumsum piece of '", name, "' has no user");
    auto insert = [&](ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const char* what) {
      ir::Op* o = g.insert_op(at, kind, std::move(operands), std::move(attrs), cat(name, ".", what), loc);
      made.insert(o);
      return o->result();
    };
    std::vector<ir::Value*> totals;
    for (ir::Op* p : group)
      totals.push_back(insert(ir::OpKind::ReduceSum, {p->operand(0)}, {{"axes", Ints{axis}}, {"keepdims", true}}, "total"));
    ir::Value* carry = nullptr;
    for (size_t k = 0; k < group.size(); ++k) {
      const size_t j = reverse ? group.size() - 1 - k : k;  // blocks in scan order
      ir::Value* piece = group[j]->result();
      if (carry) {
        ir::Value* sum = insert(ir::OpKind::Add, {piece, carry}, {}, "carried");
        for (ir::Op* u : g.users(piece))
          if (u != sum->producer)
            for (ir::Value*& operand : u->operands)
              if (operand == piece) operand = sum;
        for (ir::GraphOutput& o : g.outputs())
          if (o.value == piece) o.value = sum;
      }
      carry = carry ? insert(ir::OpKind::Add, {carry, totals[j]}, {}, "carry") : totals[j];
    }
  }
  int64_t along = ceil_div(shape[size_t(axis)], c.run);
  note = cat("split into ", c.pieces, " pieces of ", c.run, " along the cumsum axis ", dim_name(*pieces[0], axis),
             c.pieces > along ? " (for each index of the dims before it)" : "",
             ", each block's result plus the sum of the blocks ", reverse ? "after" : "before", " it");
  if (copies) note += "; operand pieces that are not aligned contiguous ranges are copied through aligned windows";
  return pieces;
}

// A block's indices along the split dim, moved by the block's start k0 to index the whole dim.
ir::Value* from_block_start(ir::Graph& g, ir::Op* op, ir::Value* idx, int64_t k0) {
  if (k0 == 0) return idx;
  HostTensor start(idx->type.dtype, {});
  start.set_i64(0, k0);
  ir::Value* c = g.add_constant(std::move(start), cat(op->name, ".start", k0));
  g.move_before(c->producer, op);
  return g.insert_op(op, ir::OpKind::Add, {idx, c}, {}, cat(op->name, ".indices"), op->loc)->result();
}

// The blocks' results joined back along `axis`, before `op`.
ir::Value* join_along(ir::Graph& g, ir::Op* op, const std::vector<ir::Value*>& parts, int64_t axis, const char* what) {
  return g.insert_op(op, ir::OpKind::Concat, parts, {{"axis", axis}}, cat(op->name, ".", what), op->loc)->result();
}

// A topk along a dim too long for one binding: the topk of each block of that dim (k, or the
// block's length where shorter), the blocks' indices moved by the block's start, the candidates
// joined, and a topk over the candidates with the op's attributes, whose positions pick the
// original indices (gather_elements). Where the candidates are still beyond one binding, the same
// again over blocks of the candidates (their original indices picked per block by
// gather_elements), level after level until they fit. Ties keep the lower index: candidates are in
// block order and each block's in index order among equals, so at every level a lower position
// among equal values is a lower original index. The final topk is an ordinary op, cut again in a
// later round where it is still too large. Returns the first level's per-block topks (empty when
// no block fits or a level would not shrink the candidates) and sets `how`.
std::vector<ir::Op*> split_topk_candidates(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                           std::string& how) {
  if (op->kind != ir::OpKind::TopK) return {};
  if (op->result(1)->type.dtype == DType::i64 && !l.int64_arithmetic) return {};  // indices not movable
  ir::Value* x = op->operand(0);
  const DType index_type = op->result(1)->type.dtype;
  const Shape& in = x->type.shape;
  const int64_t axis = normalized_axis(op->attr_int("axis"), in.size());
  const int64_t k = op->attr_int("k");
  // The levels, planned before any op is inserted: per level, the block length along the axis.
  std::vector<int64_t> blocks;
  Shape level = in;
  for (;;) {
    const int64_t n = level[size_t(axis)];
    int64_t block = binding_block(ir::TensorType{x->type.dtype, level}, axis, l);
    if (!blocks.empty()) block = std::min(block, binding_block(ir::TensorType{index_type, level}, axis, l));
    if (block < 1 || block >= n || ceil_div(n, block) > kMaxPieces || blocks.size() >= 8) return {};
    int64_t candidates = 0;
    for (int64_t k0 = 0; k0 < n; k0 += block) candidates += std::min(k, std::min(n, k0 + block) - k0);
    if (candidates >= n) return {};  // k as long as a block: no level shrinks the candidates
    blocks.push_back(block);
    level[size_t(axis)] = candidates;
    // The final topk and the gather read the candidates (values and indices) whole.
    if (!too_big(x->type, level, l) && !too_big(ir::TensorType{index_type, level}, level, l)) break;
    // Candidates beyond a binding are joined in place, which needs every dim before the axis to
    // be 1, or are cut along those dims by a later round, which needs one index of them to fit;
    // else the topk is sorted by blocks (codegen/range_split_sort.cpp).
    Shape one_row = level;
    for (int64_t d = 0; d < axis; ++d) one_row[size_t(d)] = 1;
    if (one_row != level && (too_big(x->type, one_row, l) || too_big(ir::TensorType{index_type, one_row}, one_row, l)))
      return {};
  }
  auto join = [&](const std::vector<ir::Value*>& parts, const char* what) { return join_along(g, op, parts, axis, what); };
  std::vector<ir::Op*> partials;
  ir::Value* values = x;
  ir::Value* origin = nullptr;  // per candidate, its index in x (none at the first level)
  for (size_t lv = 0; lv < blocks.size(); ++lv) {
    const int64_t n = values->type.shape[size_t(axis)], block = blocks[lv];
    std::vector<ir::Value*> level_values, level_indices;
    for (int64_t k0 = 0; k0 < n; k0 += block) {
      const int64_t k1 = std::min(n, k0 + block);
      ir::AttrMap attrs = op->attrs;
      attrs["k"] = std::min(k, k1 - k0);
      const std::string name = cat(op->name, op->name.empty() ? "" : ".", lv ? cat("level", lv, ".") : "", "block", k0, "-", k1 - 1);
      ir::Op* p = g.insert_op(op, ir::OpKind::TopK, {slice_along(g, op, values, axis, k0, k1, l, made)}, attrs, name, op->loc);
      if (lv == 0) partials.push_back(p);
      level_values.push_back(p->result(0));
      ir::Value* idx = p->result(1);
      level_indices.push_back(
          origin ? g.insert_op(op, ir::OpKind::GatherElements, {slice_along(g, op, origin, axis, k0, k1, l, made), idx},
                               {{"axis", axis}}, name + ".indices", op->loc)->result()
                 : from_block_start(g, op, idx, k0));
    }
    values = join(level_values, "candidates");
    origin = join(level_indices, "candidate_indices");
  }
  ir::Op* final = g.insert_op(op, ir::OpKind::TopK, {values}, op->attrs, cat(op->name, ".of_candidates"), op->loc);
  ir::Value* picked = g.insert_op(op, ir::OpKind::GatherElements, {origin, final->result(1)}, {{"axis", axis}},
                                  cat(op->name, ".picked"), op->loc)->result();
  g.replace_all_uses(op->result(0), final->result(0));
  g.replace_all_uses(op->result(1), picked);
  g.erase_op(op);
  how = cat("per-block topk over blocks of ", blocks[0], " of dim ", axis);
  for (size_t lv = 1; lv < blocks.size(); ++lv) how += cat(", then over blocks of ", blocks[lv], " of the candidates");
  how += cat(", then a topk of the ", values->type.shape[size_t(axis)], " candidates");
  return partials;
}

// The box [start, start + extent) of `v`: through codegen/box_copy.h where `v` is too large to
// bind whole, else an ordinary slice kernel.
ir::Value* box_of(ir::Graph& g, ir::Op* at, ir::Value* v, const Ints& start, const Ints& extent, const Limits& l,
                  std::set<const ir::Op*>& made) {
  if (extent == v->type.shape) return v;
  if (too_big(v->type, v->type.shape, l)) return copy_box(g, at, v, start, extent, {l.bytes, l.align}, made);
  Ints starts, ends, axes;
  for (size_t d = 0; d < start.size(); ++d)
    if (start[d] != 0 || extent[d] != v->type.shape[d]) {
      starts.push_back(start[d]);
      ends.push_back(start[d] + extent[d]);
      axes.push_back(int64_t(d));
    }
  ir::Op* s = g.insert_op(at, ir::OpKind::Slice, {v}, {{"starts", starts}, {"ends", ends}, {"axes", axes}},
                          cat(at->name, ".in"), at->loc);
  made.insert(s);
  return s->result();
}

// Attention whose k or v of one batch index is beyond one binding: per batch index, pieces over
// blocks of keys, each an attention with with_lse (its rows normalized over its own keys, and their
// log-sum-exp), combined as out = sum_b exp(lse_b - L) * out_b, L the log-sum-exp of the lse_b
// joined (reduce_log_sum_exp); the batch indices' results joined by concats. A row hidden from a
// block's keys is 0 with lse -inf there, so it weighs nothing; hidden from every key, it is NaN, as
// the op's. A causal piece keeps the whole op's diagonal (causal_offset + Sk - (k1 - k0) - k0);
// the mask's key dim follows, its batch dims where they are not broadcast. The pieces and the
// combining ops are ordinary ops a later round cuts by rows.
std::vector<ir::Op*> split_attention_keys(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                          std::string& how) {
  if (op->kind != ir::OpKind::Attention || op->attr_bool("with_lse")) return {};
  ir::Value* q = op->operand(0);
  ir::Value* k = op->operand(1);
  ir::Value* v = op->operand(2);
  std::vector<ir::Value*> masks(op->operands.begin() + 3, op->operands.end());
  const size_t r = v->type.shape.size();
  if (r < 2) return {};
  const size_t k_axis = op->attr_bool("k_transposed") ? r - 1 : r - 2, v_axis = r - 2;
  const int64_t sk = v->type.shape[v_axis];
  auto one_batch = [&](const ir::Value* x) {
    Shape s = x->type.shape;
    for (size_t d = 0; d + 2 < r; ++d) s[d] = 1;
    return ir::TensorType{x->type.dtype, s};
  };
  const int64_t block = std::min(binding_block(one_batch(k), int64_t(k_axis), l), binding_block(one_batch(v), int64_t(v_axis), l));
  const Shape batch(q->type.shape.begin(), q->type.shape.end() - 2);
  if (block < 1 || block >= sk || shape_numel(batch) * ceil_div(sk, block) > kMaxPieces) return {};
  std::vector<ir::Op*> pieces;
  auto insert = [&](ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const std::string& what) {
    return g.insert_op(op, kind, std::move(operands), std::move(attrs), cat(op->name, ".", what), op->loc)->result();
  };
  // One batch index (idx): the key-block pieces and their combination.
  auto one = [&](const Ints& idx) {
    // x's box for batch index idx (x's leading dims, aligned right with the scores' where x is
    // the mask; broadcast dims whole), and keys [k0, k1) along `key_dim` (-1: all).
    auto box = [&](ir::Value* x, int64_t key_dim, int64_t k0, int64_t k1) {
      const Shape& xs = x->type.shape;
      Ints start(xs.size(), 0), extent = xs;
      for (size_t d = 0; d < xs.size(); ++d) {
        const int64_t sd = int64_t(d) + int64_t(r) - int64_t(xs.size());  // the scores' dim
        if (sd >= 0 && size_t(sd) + 2 < r && xs[d] != 1) start[d] = idx[size_t(sd)], extent[d] = 1;
      }
      if (key_dim >= 0 && xs[size_t(key_dim)] == sk) start[size_t(key_dim)] = k0, extent[size_t(key_dim)] = k1 - k0;
      return box_of(g, op, x, start, extent, l, made);
    };
    std::string at;
    for (int64_t i : idx) at += cat(i, ".");
    std::vector<ir::Op*> parts;
    std::vector<ir::Value*> lses;
    for (int64_t k0 = 0; k0 < sk; k0 += block) {
      const int64_t k1 = std::min(sk, k0 + block);
      std::vector<ir::Value*> operands{box(q, -1, 0, 0), box(k, int64_t(k_axis), k0, k1), box(v, int64_t(v_axis), k0, k1)};
      for (ir::Value* mask : masks) operands.push_back(box(mask, int64_t(mask->type.shape.size()) - 1, k0, k1));
      ir::AttrMap attrs = op->attrs;
      attrs["with_lse"] = true;
      if (op->attr_bool("causal")) attrs["causal_offset"] = op->attr_int("causal_offset") + sk - (k1 - k0) - k0;
      parts.push_back(g.insert_op(op, ir::OpKind::Attention, operands, attrs,
                                  cat(op->name, op->name.empty() ? "" : ".", at, "keys", k0, "-", k1 - 1), op->loc));
      lses.push_back(parts.back()->result(1));
    }
    ir::Value* lse_all = insert(ir::OpKind::ReduceLogSumExp, {join_along(g, op, lses, int64_t(r) - 1, "lse")},
                                {{"axes", Ints{int64_t(r) - 1}}, {"keepdims", true}}, at + "lse_all");
    ir::Value* sum = nullptr;
    for (ir::Op* p : parts) {
      ir::Value* w = insert(ir::OpKind::Exp, {insert(ir::OpKind::Sub, {p->result(1), lse_all}, {}, at + "lse_diff")}, {},
                            at + "weight");
      ir::Value* part = insert(ir::OpKind::Mul, {p->result(0), w}, {}, at + "weighted");
      sum = sum ? insert(ir::OpKind::Add, {sum, part}, {}, at + "combined") : part;
    }
    pieces.insert(pieces.end(), parts.begin(), parts.end());
    return sum;
  };
  // The batch dims one index at a time, joined by concats level by level.
  Ints idx;
  std::function<ir::Value*(size_t)> build = [&](size_t level) -> ir::Value* {
    if (level == batch.size()) return one(idx);
    std::vector<ir::Value*> parts;
    for (int64_t i = 0; i < batch[level]; ++i) {
      idx.push_back(i);
      parts.push_back(build(level + 1));
      idx.pop_back();
    }
    return parts.size() == 1 ? parts[0] : join_along(g, op, parts, int64_t(level), "batches");
  };
  ir::Value* result = build(0);
  g.replace_all_uses(op->result(), result);
  g.erase_op(op);
  how = cat("per-block attention over blocks of ", block, " keys per batch index, each with its rows' log-sum-exp, combined by the "
            "weights exp(lse - log-sum-exp of all blocks)");
  return pieces;
}

// An argmax or argmin along a dim too long for one binding: per block of that dim, its extreme
// value (reduce_max or reduce_min) and its index moved by the block's start; the argmax (argmin)
// of the blocks' extremes, with the op's select_last_index, picks the block, whose index is the
// result. NaN is the extreme for both (as the op's): reduce_max and reduce_min propagate it.
std::vector<ir::Op*> split_arg_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                      std::string& how) {
  if (op->kind != ir::OpKind::ArgMax && op->kind != ir::OpKind::ArgMin) return {};
  if (!l.int64_arithmetic) return {};  // i64 indices not movable by the block's start
  ir::Value* x = op->operand(0);
  const Shape& in = x->type.shape;
  const int64_t axis = normalized_axis(op->attr_int("axis"), in.size());
  const int64_t n = in[size_t(axis)];
  const int64_t block = binding_block(x, axis, l);
  if (block < 1 || block >= n || ceil_div(n, block) > kMaxPieces) return {};
  const ir::OpKind extreme = op->kind == ir::OpKind::ArgMax ? ir::OpKind::ReduceMax : ir::OpKind::ReduceMin;
  ir::AttrMap attrs = op->attrs;
  attrs["keepdims"] = true;
  std::vector<ir::Op*> partials;
  std::vector<ir::Value*> extremes, indices;
  for (int64_t k0 = 0; k0 < n; k0 += block) {
    const int64_t k1 = std::min(n, k0 + block);
    ir::Value* piece = slice_along(g, op, x, axis, k0, k1, l, made);
    const std::string name = cat(op->name, op->name.empty() ? "" : ".", "block", k0, "-", k1 - 1);
    ir::Op* p = g.insert_op(op, op->kind, {piece}, attrs, name, op->loc);
    partials.push_back(p);
    extremes.push_back(
        g.insert_op(op, extreme, {piece}, {{"axes", Ints{axis}}, {"keepdims", true}}, name + ".extreme", op->loc)->result());
    ir::Value* idx = p->result();
    indices.push_back(from_block_start(g, op, idx, k0));
  }
  auto join = [&](const std::vector<ir::Value*>& parts, const char* what) { return join_along(g, op, parts, axis, what); };
  ir::Value* best_block = g.insert_op(op, op->kind, {join(extremes, "extremes")}, attrs, cat(op->name, ".block"), op->loc)->result();
  ir::Value* picked = g.insert_op(op, ir::OpKind::GatherElements, {join(indices, "candidates"), best_block},
                                  {{"axis", axis}}, cat(op->name, ".picked"), op->loc)->result();
  if (picked->type.shape != op->result()->type.shape)  // keepdims false
    picked = g.insert_op(op, ir::OpKind::Reshape, {picked}, {{"shape", op->result()->type.shape}}, cat(op->name, ".result"),
                         op->loc)->result();
  g.replace_all_uses(op->result(), picked);
  g.erase_op(op);
  how = cat("per-block ", op_name(extreme), " and ", op_name(partials[0]->kind), " over blocks of ", block, " of dim ", axis,
            ", then the ", op_name(partials[0]->kind), " of the blocks' extremes picks the block");
  return partials;
}

// What the split never cuts, for the refusal: "" where the reason above says it all.
std::string not_split_along(const ir::Op& op) {
  const size_t rank = op.operand(0)->type.shape.size();
  if (op.kind == ir::OpKind::Sort)
    return cat("; sort is cut along its axis (dim ", normalized_axis(op.attr_int("axis"), rank), " of length ",
               op.operand(0)->type.shape[size_t(normalized_axis(op.attr_int("axis"), rank))],
               ") only in at most 64 blocks, two of which (every dim after the axis whole, 8 bytes a key) fit one "
               "binding");
  if (op.kind == ir::OpKind::Attention)
    return "; attention is cut along its keys only in blocks whose k and v of one batch index fit one binding";
  if (op.kind == ir::OpKind::Im2Col)
    return "; an im2col whose one output row is beyond a binding is cut into rows only where each row's input rows "
           "(all channels) fit one binding or are one aligned run of the input, and each row starts at an aligned "
           "offset of the result";
  if (op.kind == ir::OpKind::MaxPoolWithIndices)
    return "; max_pool_with_indices is cut only where the target has shaderInt64 (its i64 indices are moved by each "
           "piece's start) and each piece's input box is single indices, then one range, then whole dims in the "
           "index's order (N, C, spatial): not NHWC with several channels or storage_order 1 cut along rows";
  if (op.kind == ir::OpKind::ScatterND)
    return "; scatter_nd is cut over blocks of its index tuples where one tuple's index and update each fit one "
           "binding, and over blocks of dim 0 of its data where one index of dim 0 fits and i64 indices may be added "
           "to (shaderInt64)";
  if (op.kind == ir::OpKind::ScatterElements)
    return "; scatter_elements is cut over blocks of its axis only where its indices and updates each fit one binding "
           "(every piece reads them whole), its indices span the dims before the axis whole and each row before it "
           "starts at an aligned offset, one index of the axis fits, and i64 indices may be added to (shaderInt64)";
  if (op.kind == ir::OpKind::ArgMax || op.kind == ir::OpKind::ArgMin || op.kind == ir::OpKind::TopK)
    return cat("; ", op_name(op.kind), " is cut along its axis only where the target has shaderInt64 (its i64 indices "
               "are moved by each block's start), the blocks are at most ", kMaxPieces,
               op.kind == ir::OpKind::TopK ? " (a k as long as a block: sorted in at most 64 blocks, two of which fit one binding)" : "");
  return "";
}

}  // namespace split_detail

std::map<const ir::Op*, std::string> split_to_binding_limits(ir::Graph& graph, const TargetLimits& target,
                                                             const std::set<const ir::Value*>& in_registers) {
  const Limits l = limits_of(target);
  std::map<const ir::Op*, std::string> notes;
  std::set<const ir::Op*> made;  // the slices and concats the rounds inserted
  // Rounds: a conv split over its input channels leaves partial results and sums as large as its
  // result, which the next round cuts like any other op.
  for (int round = 0, changed = 1; changed && round < 4; ++round) {
  changed = 0;
  for (ir::Op* op : graph.ops()) {
    if (op->kind == ir::OpKind::Constant || op->schema().category == ir::OpCategory::Reshape) continue;
    // A contiguous slice (e.g. one this pass made) and an in-place concat are views: they bind
    // nothing. A concat that turns out not to be in place binds its whole result and is caught by
    // the compiler's per-binding check.
    if (made.count(op) || (op->kind == ir::OpKind::Slice && contiguous_slice_offset(*op))) continue;
    if (op->kind == ir::OpKind::Concat && concat_may_be_in_place(*op, l)) continue;
    std::string over;  // "result tensor<...> is N bytes, above ..."
    for (const Bound& t : bound_tensors(*op, no_parallel(*op), in_registers))
      if (too_big(t, t.value->type.shape, l))
        over = cat(t.label, " ", t.value->type.str(), " is ", limit_text(t.value->type, t.value->type.shape, l));
    if (over.empty()) continue;
    if (!op->results.empty() && op->result()->type.numel() == 0) continue;  // no dispatch
    // Split, nothing stays in registers: the pieces read slices and write into a concat.
    AxisMap m = axis_map(*op);
    std::vector<Bound> tensors = bound_tensors(*op, m, {});
    std::variant<Cut, std::string> cut = choose_cut(*op, m, tensors, l, false);
    bool copies = false;  // some operand pieces are copies, not views
    if (std::holds_alternative<std::string>(cut)) {
      std::variant<Cut, std::string> copied = choose_cut(*op, m, tensors, l, true);
      if (std::holds_alternative<Cut>(copied)) {
        cut = copied;
        copies = true;
      }
    }
    changed = 1;
    // A piece of an earlier round cut again: its pieces get their own notes, which end with the
    // earlier round's (the whole op's cut and limit).
    const std::string earlier = notes.count(op) ? cat("; the op cut is ", notes[op]) : "";
    notes.erase(op);
    if (auto* why = std::get_if<std::string>(&cut)) {
      const std::string described = op->describe();
      std::vector<ir::Op*> partials = split_input_channels(graph, op, l, made);
      std::string what = "partial convs over blocks of input channels, summed";
      if (partials.empty()) {
        partials = split_conv_groups(graph, op, l, made);
        what = "per-block convs over blocks of whole groups, joined along the output channels";
      }
      if (partials.empty()) {
        partials = split_contraction_k(graph, op, l, made);
        what = "partial products over blocks of K, summed";
      }
      // Blocks of a dim every output element reads: the ops that combine the blocks (reductions,
      // adds, topks, gathers; not the slices, concats and reshapes around them) get a note too.
      const std::vector<ir::Op*> before = graph.ops();
      std::set<const ir::Op*> old(before.begin(), before.end());
      old.erase(op);  // erased by the split: a new op may take its address
      auto note_combining_ops = [&](size_t pieces, const std::string& how) {
        for (const ir::Op* o : graph.ops())
          if (!old.count(o) && !notes.count(o) && o->kind != ir::OpKind::Constant && o->kind != ir::OpKind::Slice &&
              o->kind != ir::OpKind::Concat && o->schema().category != ir::OpCategory::Reshape)
            notes[o] = cat("combines the ", pieces, " pieces of ", described, " (", how, "): ", over, earlier);
      };
      if (partials.empty()) partials = split_attention_keys(graph, op, l, made, what);
      if (partials.empty()) partials = split_reduced_dim(graph, op, l, made, what);
      if (partials.empty()) partials = split_topk_candidates(graph, op, l, made, what);
      if (partials.empty()) partials = split_sort_blocks(graph, op, l, made, what);
      if (partials.empty()) partials = split_gather_blocks(graph, op, l, made, what);
      if (partials.empty()) partials = split_arg_blocks(graph, op, l, made, what);
      if (partials.empty()) partials = split_normalization(graph, op, what);
      if (partials.empty()) partials = split_softmax(graph, op, what);
      if (partials.empty()) partials = split_pool_with_indices(graph, op, l, made, what);
      if (partials.empty()) partials = split_scatter_blocks(graph, op, l, made, what);
      if (partials.empty()) partials = split_im2col_rows(graph, op, l, made, what);
      if (partials.empty()) {
        std::string note;
        std::vector<ir::Op*> pieces = split_scan_with_carry(graph, op, l, made, note);
        for (ir::Op* p : pieces) notes[p] = cat(note, ": ", over, earlier);
        if (!pieces.empty()) {
          note_combining_ops(pieces.size(), "a carry pass");
          continue;
        }
      }
      if (partials.empty()) throw Error(cat(described, ": ", over, ", and it cannot be split: ", *why, not_split_along(*op)));
      for (ir::Op* p : partials) notes[p] = cat("one of ", partials.size(), " ", what, ": ", over, earlier);
      if (what.find("partial convs") == std::string::npos && what.find("partial products") == std::string::npos)
        note_combining_ops(partials.size(), what);
      continue;
    }
    const Cut& c = std::get<Cut>(cut);
    int64_t along = ceil_div(op->result()->type.shape[size_t(c.axis)], c.run);
    std::string note = cat("split into ", c.pieces, " pieces of ", c.run, " along ", dim_name(*op, c.axis),
                           c.pieces > along ? " (for each index of the dims before it)" : "",
                           windowed_before(tensors[0], c.axis)
                               ? cat(" (", dim_name(*op, windowed_before(tensors[0], c.axis) - 1),
                                     " and any windowed dim before it one output index at a time, each with the input "
                                     "rows its window reads)")
                               : "",
                           tensors[0].window[size_t(c.axis)] && tensors[0].window[size_t(c.axis)]->resize
                               ? " (resized: each piece reads the input rows its outputs sample)"
                               : "",
                           ": ", over);
    if (copies) note += "; operand pieces that are not aligned contiguous ranges are copied through aligned windows";
    for (ir::Op* piece : Splitter(graph, op, c, std::move(tensors), l, made, copies).run()) notes[piece] = note + earlier;
  }
  }
  return notes;
}

}  // namespace vkc::codegen
