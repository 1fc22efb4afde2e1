// scatter_nd and scatter_elements whose data (and result) is beyond one binding: pieces over
// blocks of the dim the indices address (scatter_nd: dim 0, the first index component;
// scatter_elements: its axis), each a scatter of the same kind into its block of the data, with
// every index moved into the block: resolved as the op resolves it (a negative index wraps once),
// less the block's start, and where it falls outside the block replaced by the block's length,
// which the piece skips as out of range (ir/interpreter_indexing.cpp: an out-of-range index
// skips its update). Each piece applies the updates that land in its block in the op's order, so
// duplicates and reductions come out as the op's. The dims before the blocked one are all of size
// 1, so the pieces write into the result in place (a concat); a scatter_elements with longer ones
// is first cut into one piece per row of them (split_scatter_rows). Indices and updates are read
// whole by every piece: they must fit one binding. i64 indices need shaderInt64 to be moved.
//
// A scatter_nd whose indices or updates are beyond one binding runs as a chain of scatter_nds over
// blocks of its index tuples in order, each into the result of the one before (the first into the
// data): the updates apply in the op's order, so the last write (or the reduction's order) is the
// op's. Each link is as large as the data and is cut again in a later round where it is beyond a
// binding.
#include <algorithm>

#include "codegen/range_split_parts.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen::split_detail {
namespace {

// The chain over blocks of index tuples (above).
std::vector<ir::Op*> split_scatter_tuples(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                          std::string& how) {
  ir::Value* data = op->operand(0);
  ir::Value* indices = op->operand(1);
  ir::Value* updates = op->operand(2);
  const int64_t k = indices->type.shape.back();
  const int64_t tuples = k == 0 ? 0 : indices->type.numel() / k;
  if (tuples < 2) return {};
  const std::string name = cat(op->name, op->name.empty() ? "" : ".");
  auto reshape = [&](ir::Value* v, Ints shape, const char* what) {
    return g.insert_op(op, ir::OpKind::Reshape, {v}, {{"shape", shape}}, name + what, op->loc)->result();
  };
  Ints slice_shape{tuples};  // the updates, one row per tuple
  slice_shape.insert(slice_shape.end(), data->type.shape.begin() + k, data->type.shape.end());
  // The longest block of tuples whose indices and updates each fit (sizes grow with the block).
  ir::TensorType one_index{indices->type.dtype, {1, k}}, one_update{updates->type.dtype, slice_shape};
  one_update.shape[0] = 1;
  if (too_big(one_index, one_index.shape, l) || too_big(one_update, one_update.shape, l)) return {};
  int64_t block = tuples;
  for (const ir::TensorType& t : {one_index, one_update})
    block = std::min<int64_t>({block, int64_t(l.bytes / (uint64_t(t.numel()) * dtype_size(t.dtype))), l.elements / t.numel()});
  if (block < 1 || block >= tuples || ceil_div(tuples, block) > kMaxPieces) return {};
  ir::Value* idx = reshape(indices, {tuples, k}, "tuples");
  ir::Value* upd = reshape(updates, slice_shape, "tuple_updates");
  std::vector<ir::Op*> links;
  ir::Value* acc = data;
  for (int64_t t0 = 0; t0 < tuples; t0 += block) {
    const int64_t t1 = std::min(tuples, t0 + block);
    links.push_back(g.insert_op(op, op->kind,
                                {acc, slice_along(g, op, idx, 0, t0, t1, l, made), slice_along(g, op, upd, 0, t0, t1, l, made)},
                                op->attrs, cat(name, "tuples", t0, "-", t1 - 1), op->loc));
    acc = links.back()->result();
  }
  g.replace_all_uses(op->result(), acc);
  g.erase_op(op);
  how = cat("scatter_nd over blocks of ", block, " of its ", tuples, " index tuples in order, each into the result of the "
            "one before (indices or updates beyond one binding)");
  return links;
}

// A scatter_elements with dims longer than 1 before its axis, whose rows (one index of those dims)
// are beyond one binding: one piece per row, each the scatter of its own row (the dims before the
// axis are parallel where the indices span them whole: codegen/split_axes.cpp), a view of the
// result at an aligned offset; a later round cuts each over blocks of its axis.
std::vector<ir::Op*> split_scatter_rows(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                        std::string& how) {
  const Shape& shape = op->result()->type.shape;
  const int64_t axis = normalized_axis(op->attr_int("axis"), shape.size());
  const AxisMap m = axis_map(*op);
  int64_t rows = 1, row = 1;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis && !m.parallel[size_t(d)]) return {};
    (d < axis ? rows : row) *= shape[size_t(d)];
  }
  if (rows > kMaxPieces || (uint64_t(row) * dtype_size(op->result()->type.dtype)) % l.align != 0) return {};
  std::vector<ir::Op*> pieces =
      cut_into_pieces(g, op, Cut{int(axis) - 1, 1, rows}, bound_tensors(*op, m, {}), l, made, false);
  how = cat("scatter_elements rows, one piece per index of the dims before its axis (", axis, "), each cut again over "
            "blocks of its axis");
  return pieces;
}

}  // namespace

std::vector<ir::Op*> split_scatter_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                          std::string& how) {
  using K = ir::OpKind;
  if (op->kind != K::ScatterND && op->kind != K::ScatterElements) return {};
  ir::Value* data = op->operand(0);
  ir::Value* indices = op->operand(1);
  ir::Value* updates = op->operand(2);
  const DType it = indices->type.dtype;
  if (too_big(indices->type, indices->type.shape, l) || too_big(updates->type, updates->type.shape, l))
    return op->kind == K::ScatterND ? split_scatter_tuples(g, op, l, made, how) : std::vector<ir::Op*>{};
  if (it == DType::i64 && !l.int64_arithmetic) return {};
  const Shape& shape = data->type.shape;
  const int64_t axis = op->kind == K::ScatterND ? 0 : normalized_axis(op->attr_int("axis"), shape.size());
  bool leading = false;  // a dim before the blocked one is longer than 1
  for (int64_t d = 0; d < axis; ++d) leading = leading || shape[size_t(d)] != 1;
  if (leading) return split_scatter_rows(g, op, l, made, how);
  const int64_t n = shape[size_t(axis)];
  const int64_t block = binding_block(data, axis, l);
  if (block < 1 || block >= n || ceil_div(n, block) > kMaxPieces) return {};
  const std::string name = cat(op->name, op->name.empty() ? "" : ".");
  auto insert = [&](K kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const std::string& what) {
    return g.insert_op(op, kind, std::move(operands), std::move(attrs), name + what, op->loc)->result();
  };
  auto constant = [&](int64_t v, const std::string& what) {
    HostTensor t(it, {});
    t.set_i64(0, v);
    ir::Value* c = g.add_constant(std::move(t), name + what);
    g.move_before(c->producer, op);
    return c;
  };
  // The index into the blocked dim (scatter_nd: the first component of each tuple), resolved.
  const int64_t last = int64_t(indices->type.shape.size()) - 1;
  const int64_t k = indices->type.shape.back();
  ir::Value* component = indices;
  ir::Value* rest = nullptr;  // scatter_nd: the other components, unchanged
  if (op->kind == K::ScatterND) {
    component = insert(K::Slice, {indices}, {{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{last}}}, "first_component");
    if (k > 1) rest = insert(K::Slice, {indices}, {{"starts", Ints{1}}, {"ends", Ints{k}}, {"axes", Ints{last}}}, "other_components");
  }
  ir::Value* zero = constant(0, "zero");
  ir::Value* resolved = insert(K::Select, {insert(K::Less, {component, zero}, {}, "negative"),
                                           insert(K::Add, {component, constant(n, cat("dim", n))}, {}, "wrapped"), component},
                               {}, "resolved");
  std::vector<ir::Op*> pieces;
  std::vector<ir::Value*> parts;
  for (int64_t k0 = 0; k0 < n; k0 += block) {
    const int64_t k1 = std::min(n, k0 + block);
    const std::string at = cat("block", k0, "-", k1 - 1);
    ir::Value* length = constant(k1 - k0, cat("length", k1 - k0));
    ir::Value* local = k0 == 0 ? resolved : insert(K::Sub, {resolved, constant(k0, cat("start", k0))}, {}, at + ".local");
    ir::Value* inside = insert(K::And, {insert(K::GreaterOrEqual, {local, zero}, {}, at + ".from_start"),
                                        insert(K::Less, {local, length}, {}, at + ".before_end")},
                               {}, at + ".inside");
    ir::Value* moved = insert(K::Select, {inside, local, length}, {}, at + ".indices");
    if (rest) moved = insert(K::Concat, {moved, rest}, {{"axis", last}}, at + ".tuples");
    ir::Value* piece_data = slice_along(g, op, data, axis, k0, k1, l, made);
    ir::Op* p = g.insert_op(op, op->kind, {piece_data, moved, updates}, op->attrs, name + at, op->loc);
    pieces.push_back(p);
    parts.push_back(p->result());
  }
  g.replace_all_uses(op->result(), join_along(g, op, parts, axis, "blocks"));
  g.erase_op(op);
  how = cat("per-block ", op_name(pieces[0]->kind), " over blocks of ", block, " of dim ", axis,
            ", each with the indices moved into its block (those outside it skipped)");
  return pieces;
}

}  // namespace vkc::codegen::split_detail
