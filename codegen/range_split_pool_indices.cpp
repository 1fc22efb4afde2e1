// max_pool_with_indices beyond one binding: cut like max_pool (batch, channels, output rows with
// their halo and pads of their own), each piece's indices then moved from its own input to the
// whole input. The op's index is the flat position in the input seen as logical N, C, spatial
// (row-major spatial, or first spatial dim fastest with storage_order 1; ir/interpreter_pool.cpp),
// -1 for a window with no position inside. A piece's index counts over its own input box; where
// that box is, in that logical order, single indices, then one range, then whole dims, every
// position of the box is the whole input's position less one constant (the box start's position),
// so each piece's indices get that constant added (-1 kept). Cuts that give other boxes (NHWC cut
// along rows with several channels) are refused. The i64 indices need shaderInt64 to be added to.
#include <algorithm>
#include <variant>

#include "codegen/range_split_parts.h"
#include "ir/conv_geometry.h"
#include "support/error.h"

namespace vkc::codegen::split_detail {
namespace {

// Input dims in the order of the index's place values, slowest first.
std::vector<int> index_order(const ir::Op& op, const ir::ConvGeometry& g) {
  std::vector<int> order{g.input_pos[0], g.input_pos[1]};
  const bool column_major = op.attr_int("storage_order") == 1;
  for (int i = 0; i < g.spatial_rank; ++i) order.push_back(g.input_pos[size_t(2 + (column_major ? g.spatial_rank - 1 - i : i))]);
  return order;
}

}  // namespace

std::vector<ir::Op*> split_pool_with_indices(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                             std::string& how) {
  using K = ir::OpKind;
  if (op->kind != K::MaxPoolWithIndices || !l.int64_arithmetic) return {};
  const AxisMap m = pool_axis_map(*op);
  std::vector<Bound> tensors = bound_tensors(*op, m, {});
  bool copies = false;
  std::variant<Cut, std::string> chosen = choose_cut(*op, m, tensors, l, false);
  if (!std::holds_alternative<Cut>(chosen)) {
    chosen = choose_cut(*op, m, tensors, l, true);
    copies = true;
  }
  if (!std::holds_alternative<Cut>(chosen)) return {};
  const Cut cut = std::get<Cut>(chosen);
  const ir::ConvGeometry geo = ir::pool_geometry(*op);
  const Shape in = op->operand(0)->type.shape;
  // What a piece's box holds of each input dim: one index (a dim before the cut), a range (the
  // cut dim, or a windowed dim before it), or the whole dim.
  enum class Box { One, Range, Whole };
  std::vector<Box> box(in.size(), Box::Whole);
  for (int d = 0; d <= cut.axis; ++d) {
    const int td = tensors[0].axis_of[size_t(d)];
    if (td >= 0) box[size_t(td)] = d == cut.axis || tensors[0].window[size_t(d)] ? Box::Range : Box::One;
  }
  // Single indices, then at most one range, then whole dims (dims of size 1 fit anywhere).
  bool past_ones = false;
  for (int d : index_order(*op, geo)) {
    if (in[size_t(d)] == 1) continue;
    if (past_ones && box[size_t(d)] != Box::Whole) return {};
    if (box[size_t(d)] != Box::One) past_ones = true;
  }
  // The index's place value of each input dim, in the whole input.
  std::vector<int64_t> place(in.size());
  const std::vector<int> order = index_order(*op, geo);
  int64_t p = 1;
  for (size_t i = order.size(); i-- > 0;) {
    place[size_t(order[i])] = p;
    p *= in[size_t(order[i])];
  }
  const std::string name = op->name;
  const ir::Location loc = op->loc;
  std::vector<Ints> starts;
  std::vector<ir::Op*> pieces = cut_into_pieces(g, op, cut, std::move(tensors), l, made, copies, &starts);
  auto constant = [&](int64_t v, const std::string& what, ir::Op* before) {
    HostTensor t(DType::i64, {});
    t.set_i64(0, v);
    ir::Value* c = g.add_constant(std::move(t), cat(name, ".", what));
    g.move_before(c->producer, before);
    return c;
  };
  for (size_t k = 0; k < pieces.size(); ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < in.size(); ++d) offset += starts[k][d] * place[d];
    if (offset == 0) continue;
    ir::Value* idx = pieces[k]->result(1);
    const std::vector<ir::Op*> users = g.users(idx);
    // Before the first user of the piece's indices (all of them come after the piece).
    const std::vector<ir::Op*> ops = g.ops();
    ir::Op* at = nullptr;
    for (ir::Op* o : ops)
      if (std::find(users.begin(), users.end(), o) != users.end()) {
        at = o;
        break;
      }
    check(at != nullptr, "internal: indices of a piece of max_pool_with_indices '", name, "' have no user");
    const std::string what = cat(pieces[k]->name, ".whole_indices");
    ir::Value* none = g.insert_op(at, K::Less, {idx, constant(0, "zero", at)}, {}, what, loc)->result();
    ir::Value* moved = g.insert_op(at, K::Add, {idx, constant(offset, cat("offset", offset), at)}, {}, what, loc)->result();
    ir::Value* whole = g.insert_op(at, K::Select, {none, idx, moved}, {}, what, loc)->result();
    for (ir::Op* u : users)
      for (ir::Value*& operand : u->operands)
        if (operand == idx) operand = whole;
    for (ir::GraphOutput& o : g.outputs())
      if (o.value == idx) o.value = whole;
  }
  how = cat("max_pool_with_indices pieces, split into ", cut.pieces, " pieces of ", cut.run, " along ",
            dim_name(*pieces[0], cut.axis), copies ? " (operand pieces copied through aligned windows)" : "",
            ", each piece's indices moved by its input box's flat position in the whole input");
  return pieces;
}

}  // namespace vkc::codegen::split_detail
