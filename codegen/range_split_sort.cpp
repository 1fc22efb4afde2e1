// Sort (and topk whose k is as long as a block) along an axis beyond one binding: an odd-even
// transposition sort over blocks of the axis, each step a sort of two neighbouring blocks.
//
// Why this network: which elements a step reads must be known when the module is compiled (each
// piece binds fixed sub-ranges), so a merge whose split points depend on the data (merge path)
// would need addressing beyond one binding. A sorting network over blocks has fixed partners, and
// with every comparator replaced by "sort the two blocks together, the lower block keeps the first
// half" it still sorts (the 0-1 principle; P rounds for P blocks, the last block may be shorter).
// Only neighbours are ever merged, so the stable order survives: equal keys in the lower block
// always came from lower input positions, and a stable sort of the two blocks joined keeps them
// first. The sort of two blocks is an ordinary sort op whose operands fit one binding, so every
// kernel strategy and every key type of the sort family is reused as it is.
//
// Cost: about P + 1 sorts of the whole axis and P - 1 copies (each round joins the blocks it
// merges), against one sort where the axis fits: this is the path for axes a binding cannot hold,
// not a fast one. A topk runs the same network with the positions as a co-sorted payload and keeps
// the blocks that hold its first k.
#include <algorithm>
#include <bit>
#include <numeric>

#include "codegen/range_split_internal.h"
#include "codegen/split_axes.h"
#include "support/error.h"

namespace vkc::codegen::split_detail {
namespace {

using Ints = std::vector<int64_t>;

// At most this many blocks: P rounds of P / 2 sorts each.
constexpr int64_t kMaxSortBlocks = 64;

// One block of the axis between rounds: [at, at + len) along dim 1 of the values in `parts` (the
// keys and every co-sorted operand, as [1, length, inner]).
struct Block {
  std::vector<ir::Value*> parts;
  int64_t at = 0, len = 0;
};

// The op on its operands transposed so that `axis` is the last dim, its results transposed back.
// For an axis with dims after it whose blocks are too short (every dim after the axis rides along
// in each block): along the last dim, the rows are contiguous, so the split cuts the op into rows
// and, where one row is still beyond a binding, sorts that row by blocks. The transposes are
// ordinary data movement, cut like any other where they are beyond a binding.
std::vector<ir::Op*> sort_along_last_dim(ir::Graph& g, ir::Op* op, int64_t axis, std::string& how) {
  const size_t rank = op->operand(0)->type.shape.size();
  Ints perm, back(rank);
  for (size_t d = 0; d < rank; ++d)
    if (int64_t(d) != axis) perm.push_back(int64_t(d));
  perm.push_back(axis);
  for (size_t d = 0; d < rank; ++d) back[size_t(perm[d])] = int64_t(d);
  const std::string base = cat(op->name, op->name.empty() ? "" : ".");
  std::vector<ir::Value*> operands;
  for (ir::Value* v : op->operands)
    operands.push_back(g.insert_op(op, ir::OpKind::Transpose, {v}, {{"perm", perm}}, base + "axis_last", op->loc)->result());
  ir::AttrMap attrs = op->attrs;
  attrs["axis"] = int64_t(rank) - 1;
  ir::Op* last = g.insert_op(op, op->kind, operands, attrs, base + "along_last_dim", op->loc);
  for (size_t r = 0; r < op->results.size(); ++r) {
    ir::Value* t = g.insert_op(op, ir::OpKind::Transpose, {last->result(int(r))}, {{"perm", back}}, base + "axis_back", op->loc)
                       ->result();
    g.replace_all_uses(op->result(int(r)), t);
  }
  g.erase_op(op);
  how = cat("transposed so that dim ", axis, " is the last, ", ir::op_name(last->kind),
            " along it (cut into rows, or sorted by blocks where a row is beyond the limit), transposed back");
  return {last};
}

}  // namespace

std::vector<ir::Op*> split_sort_blocks(ir::Graph& g, ir::Op* op, const Limits& l, std::set<const ir::Op*>& made,
                                       std::string& how) {
  const bool topk = op->kind == ir::OpKind::TopK;
  if (op->kind != ir::OpKind::Sort && !topk) return {};
  ir::Value* x = op->operand(0);
  const Shape& shape = x->type.shape;
  const size_t rank = shape.size();
  if (rank == 0) return {};
  const int64_t axis = normalized_axis(op->attr_int("axis"), rank);
  const int64_t n = shape[size_t(axis)];
  const int64_t outer = shape_numel(Shape(shape.begin(), shape.begin() + axis));
  const int64_t inner = shape_numel(Shape(shape.begin() + axis + 1, shape.end()));
  const bool descending = topk ? op->attr_bool("largest") : op->attr_bool("descending");
  const int64_t out_len = topk ? op->attr_int("k") : n;
  const DType index_type = topk ? op->result(1)->type.dtype : DType::i64;
  if (topk && index_type == DType::i64 && !l.int64_arithmetic) return {};  // positions not movable
  // The co-sorted operands: the keys and the sort's payloads, or the keys and their positions.
  std::vector<DType> types;
  if (topk) types = {x->type.dtype, index_type};
  else
    for (const ir::Value* v : op->operands) types.push_back(v->type.dtype);
  // A sort of two blocks binds each operand and result ([1, 2B, inner]) and the sort's scratch
  // (codegen/kernels/sort.cpp: at most two 4-byte words per key of a row padded to a power of
  // two), so a pair of blocks is the largest power of two of keys of 8 bytes (the widest element)
  // per inner column that one binding holds.
  const uint64_t per_key = uint64_t(inner) * 8;
  const uint64_t fit = std::min<uint64_t>(l.bytes / per_key, uint64_t(l.elements / inner));
  int64_t block = fit < 2 ? 0 : int64_t(std::bit_floor(fit)) / 2;
  // Blocks start at offsets a view may start at, for every operand and result.
  int64_t granule = 1;
  for (DType t : types) {
    const uint64_t stride = uint64_t(inner) * dtype_size(t);
    granule = std::lcm(granule, int64_t(l.align / std::gcd(stride, l.align)));
  }
  if (block > granule) block -= block % granule;
  const int64_t blocks = block < 1 ? 0 : ceil_div(n, block);
  if (block < 1 || block >= n || blocks > kMaxSortBlocks || outer * blocks * (blocks + 2) > 4 * kMaxPieces)
    return inner > 1 ? sort_along_last_dim(g, op, axis, how) : std::vector<ir::Op*>{};

  const std::vector<ir::Op*> existing = g.ops();
  const std::set<const ir::Op*> before(existing.begin(), existing.end());
  const std::string base = cat(op->name, op->name.empty() ? "" : ".");
  auto insert = [&](ir::OpKind kind, std::vector<ir::Value*> operands, ir::AttrMap attrs, const std::string& what) {
    return g.insert_op(op, kind, std::move(operands), std::move(attrs), base + what, op->loc);
  };
  auto sort_of = [&](std::vector<ir::Value*> operands, const std::string& what) {
    return insert(ir::OpKind::Sort, std::move(operands), {{"axis", int64_t(1)}, {"descending", descending}}, what);
  };
  auto view = [&](ir::Value* v, int64_t at, int64_t len) {
    return at == 0 && len == v->type.shape[1] ? v : slice_along(g, op, v, 1, at, at + len, l, made);
  };
  auto parts_of = [&](const Block& b) {
    std::vector<ir::Value*> p;
    for (ir::Value* v : b.parts) p.push_back(view(v, b.at, b.len));
    return p;
  };
  // The operands as [outer, n, inner] (views of the same bytes).
  auto as_3d = [&](ir::Value* v) {
    return insert(ir::OpKind::Reshape, {v}, {{"shape", Ints{outer, n, inner}}}, "rows")->result();
  };
  std::vector<ir::Value*> whole;
  if (topk) {
    whole.push_back(as_3d(x));
  } else {
    for (ir::Value* v : op->operands) whole.push_back(as_3d(v));
  }
  // Topk: each element's position along the axis, for two blocks ([1, 2B, inner]), moved by the
  // first block's start.
  ir::Value* positions = nullptr;
  if (topk) {
    HostTensor iota(index_type, {1, 2 * block, inner});
    for (int64_t j = 0; j < 2 * block; ++j)
      for (int64_t c = 0; c < inner; ++c) iota.set_i64(j * inner + c, j);
    positions = g.add_constant(std::move(iota), base + "positions");
    g.move_before(positions->producer, op);
  }
  auto positions_from = [&](int64_t start, int64_t len) {
    ir::Value* p = view(positions, 0, len);
    if (start == 0) return p;
    HostTensor s(index_type, {});
    s.set_i64(0, start);
    ir::Value* c = g.add_constant(std::move(s), cat(base, "start", start));
    g.move_before(c->producer, op);
    return insert(ir::OpKind::Add, {p, c}, {}, cat("positions", start))->result();
  };

  std::vector<ir::Op*> first_round;
  const size_t results = topk ? 2 : op->results.size();
  std::vector<std::vector<ir::Value*>> flat_pieces(results);  // per result: its pieces, flat, in order
  for (int64_t o = 0; o < outer; ++o) {
    const std::string at = outer > 1 ? cat("row", o, ".") : "";
    // This outer index's line of every operand, as [1, n, inner].
    std::vector<ir::Value*> line;
    for (ir::Value* v : whole) line.push_back(outer > 1 ? slice_along(g, op, v, 0, o, o + 1, l, made) : v);
    std::vector<Block> state(static_cast<size_t>(blocks));
    for (int64_t b = 0; b < blocks; ++b) state[size_t(b)].len = std::min(n, (b + 1) * block) - b * block;
    // Round 0 sorts pairs straight from the input (two neighbouring blocks are one run of it); a
    // block left without a partner is sorted alone.
    for (int64_t b = 0; b < blocks; b += 2) {
      const int64_t k0 = b * block, len = std::min(n, k0 + 2 * block) - k0;
      std::vector<ir::Value*> operands;
      for (ir::Value* v : line) operands.push_back(view(v, k0, len));
      if (topk) operands.push_back(positions_from(k0, len));
      ir::Op* s = sort_of(operands, cat(at, "blocks", b, b + 1 < blocks ? cat("-", b + 1) : ""));
      first_round.push_back(s);
      for (int64_t m = b; m < std::min(blocks, b + 2); ++m) {
        state[size_t(m)].parts = s->results;
        state[size_t(m)].at = (m - b) * block;
      }
    }
    for (int64_t round = 1; round < blocks; ++round) {
      for (int64_t b = round % 2; b + 1 < blocks; b += 2) {
        Block& lo = state[size_t(b)];
        Block& hi = state[size_t(b + 1)];
        std::vector<ir::Value*> a = parts_of(lo), c = parts_of(hi), operands;
        for (size_t i = 0; i < a.size(); ++i) {
          ir::Op* j = insert(ir::OpKind::Concat, {a[i], c[i]}, {{"axis", int64_t(1)}}, cat(at, "pair", b, "-", b + 1));
          made.insert(j);
          operands.push_back(j->result());
        }
        ir::Op* s = sort_of(operands, cat(at, "round", round, ".blocks", b, "-", b + 1));
        lo = Block{s->results, 0, lo.len};
        hi = Block{s->results, lo.len, hi.len};
      }
    }
    // Each block holding the first out_len positions, written whole by a dispatch of its own (a
    // sort of an already sorted run, which keeps it), seen flat: every block of every outer index
    // is one run of the flat result, in order, so one join along the flat dim puts them all in
    // place (a join of joins would not be: an inner join in place is no dispatch of its own).
    for (int64_t b = 0; b < blocks && b * block < out_len; ++b) {
      Block piece = state[size_t(b)];
      piece.len = std::min(piece.len, out_len - b * block);
      ir::Op* s = sort_of(parts_of(piece), cat(at, "block", b));
      for (size_t r = 0; r < results; ++r)
        flat_pieces[r].push_back(
            insert(ir::OpKind::Reshape, {s->result(int(r))}, {{"shape", Ints{piece.len * inner}}}, cat(at, "flat", b))->result());
    }
  }
  for (size_t r = 0; r < results; ++r) {
    ir::Value* result = op->result(int(r));
    // Pieces at aligned offsets are joined in place; where rows of the axis end unaligned (outer
    // indices after the first), they are assembled into aligned chunks (one more copy).
    bool aligned = true;
    int64_t at = 0;
    for (const ir::Value* p : flat_pieces[r]) {
      aligned = aligned && uint64_t(at) * dtype_size(p->type.dtype) % l.align == 0;
      at += p->type.numel();
    }
    ir::Value* all = nullptr;
    if (aligned) {
      ir::Op* j = insert(ir::OpKind::Concat, flat_pieces[r], {{"axis", int64_t(0)}}, "joined");
      made.insert(j);
      all = j->result();
    } else {
      all = assemble_runs(flat_pieces[r], ir::TensorType{result->type.dtype, {result->type.numel()}}, l,
                          [&](ir::OpKind k, std::vector<ir::Value*> operands, ir::AttrMap attrs) {
                            ir::Op* o = insert(k, std::move(operands), std::move(attrs), "joined");
                            made.insert(o);
                            return o->result();
                          });
    }
    ir::Value* shaped = insert(ir::OpKind::Reshape, {all}, {{"shape", result->type.shape}}, "result")->result();
    g.replace_all_uses(result, shaped);
  }
  g.erase_op(op);
  // A topk needs only the blocks that end up holding its first k: the last rounds' sorts that
  // feed none of them, and what only they read, are removed.
  for (bool erased = true; erased;) {
    erased = false;
    for (ir::Op* o : g.ops())
      if (!before.count(o) && std::none_of(o->results.begin(), o->results.end(), [&](const ir::Value* v) { return g.has_uses(v); })) {
        made.erase(o);
        std::erase(first_round, o);
        g.erase_op(o);
        erased = true;
      }
  }
  how = cat("odd-even transposition sort over ", blocks, " blocks of ", block, " of dim ", axis,
            outer > 1 ? " for each index of the dims before it" : "", ": ", blocks,
            " rounds, each a sort of neighbouring blocks joined", topk ? ", positions carried, the first k kept" : "");
  return first_round;
}

}  // namespace vkc::codegen::split_detail
