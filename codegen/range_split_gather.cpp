// Gather whose data is beyond one binding along its gathered axis (an embedding table larger than
// a minimum-spec device's 2^27 bytes: GPT-2's 50257 x 768 floats are 154 MB): a gather from each
// block of the axis with the indices moved to the block's start, and the blocks' results chosen
// per index by whether it falls in the block.
//
// Which rows an index reads is known only at run time, so every block is gathered for every index
// (the output, usually small next to the table, is computed once per block) and selects keep the
// right one: result = select(in block 0, g_0, 0), then select(in block b, g_b, result) for each
// later block. An index out of range (after negative indices wrap once, as the op defines) is in
// no block and keeps the 0 the op gives it; one that wraps inside another block's gather is
// masked away. The pieces are ordinary gathers, selects and comparisons, cut again in later rounds
// where the output is beyond a binding.
#include "codegen/range_split_internal.h"
#include "codegen/split_axes.h"
#include "support/error.h"

namespace vkc::codegen::split_detail {

std::vector<ir::Op*> split_gather_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                         std::string& how) {
  if (op->kind != ir::OpKind::Gather) return {};
  ir::Value* data = op->operand(0);
  ir::Value* idx = op->operand(1);
  const Shape& ds = data->type.shape;
  if (ds.empty()) return {};
  const int64_t axis = normalized_axis(op->attr_int("axis"), ds.size());
  const int64_t n = ds[size_t(axis)];
  const DType it = idx->type.dtype;
  if (it == DType::i64 && !l.int64_arithmetic) return {};  // the indices are moved by each block's start
  const int64_t block = binding_block(data, axis, l);
  if (block < 1 || block >= n || ceil_div(n, block) > kMaxPieces) return {};

  const std::string base = cat(op->name, op->name.empty() ? "" : ".");
  auto insert = [&](ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const std::string& what) {
    return g.insert_op(op, kind, std::move(operands), std::move(attrs), base + what, op->loc)->result();
  };
  auto scalar = [&](DType t, int64_t v, const std::string& what) {
    HostTensor c(t, {});
    c.set_i64(0, v);
    ir::Value* value = g.add_constant(std::move(c), base + what);
    g.move_before(value->producer, op);
    return value;
  };
  // Negative indices wrap once (idx + n where -n <= idx < 0).
  ir::Value* zero = scalar(it, 0, "zero");
  ir::Value* wrapped = insert(ir::OpKind::Select,
                              {insert(ir::OpKind::Less, {idx, zero}, {}, "negative"),
                               insert(ir::OpKind::Add, {idx, scalar(it, n, "n")}, {}, "wrapped"), idx},
                              {}, "index");
  // A block's mask, shaped to broadcast against the result: the indices' dims, then one per data
  // dim after the axis.
  Shape mask_shape = idx->type.shape;
  for (size_t d = size_t(axis) + 1; d < ds.size(); ++d) mask_shape.push_back(1);
  HostTensor zero_value(data->type.dtype, {});
  ir::Value* result = g.add_constant(std::move(zero_value), base + "out_of_range");
  g.move_before(result->producer, op);
  std::vector<ir::Op*> pieces;
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t r1 = std::min(n, r0 + block);
    const std::string at = cat("rows", r0, "-", r1 - 1);
    ir::Value* rows = slice_along(g, op, data, axis, r0, r1, l, made);
    ir::Value* shifted = r0 == 0 ? wrapped : insert(ir::OpKind::Sub, {wrapped, scalar(it, r0, cat("start", r0))}, {}, at + ".index");
    ir::Op* piece = g.insert_op(op, ir::OpKind::Gather, {rows, shifted}, op->attrs, base + at, op->loc);
    pieces.push_back(piece);
    ir::Value* inside = insert(ir::OpKind::And,
                               {insert(ir::OpKind::GreaterOrEqual, {wrapped, scalar(it, r0, cat("from", r0))}, {}, at + ".from"),
                                insert(ir::OpKind::Less, {wrapped, scalar(it, r1, cat("to", r1))}, {}, at + ".to")},
                               {}, at + ".inside");
    ir::Value* mask = insert(ir::OpKind::Reshape, {inside}, {{"shape", mask_shape}}, at + ".mask");
    result = insert(ir::OpKind::Select, {mask, piece->result(), result}, {}, at + ".chosen");
  }
  g.replace_all_uses(op->result(), result);
  g.erase_op(op);
  how = cat("per-block gather over blocks of ", block, " rows of dim ", axis,
            " (indices moved to each block's start), each index's block chosen by selects");
  return pieces;
}

}  // namespace vkc::codegen::split_detail
