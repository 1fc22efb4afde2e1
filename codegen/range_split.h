// Work on tensors larger than one binding may be: ops split into pieces over buffer ranges.
//
// A Vulkan dispatch may bind at most maxStorageBufferRange bytes of a buffer per descriptor (2^27
// on minimum-spec devices and lavapipe), and vkc's kernels index with 32-bit integers. An op with
// an operand or result beyond either limit is rewritten into pieces that fit: the op on slices of
// its operands, its results rejoined by concat. The pieces cut one dim where every result element
// depends only on the operand elements at the same index of that dim (batch, channels, rows of a
// matmul, the kept dims of a reduction, ...). Every slice and concat it creates is a run of
// contiguous bytes at an offset aligned for the target (view_alignment), which
// codegen/storage_plan.h turns into views:
// the pieces bind sub-ranges of the original tensors and write straight into the result, with no
// copy. The tensors themselves stay whole.
//
// Conv and pooling are also cut along one spatial dim of their result: each piece reads its input
// rows plus the halo its window overlaps into, with pads of its own at the input's edges. Resize
// is cut along one resized dim alike: each piece, a resize with the attribute 'window', computes
// the whole op's coordinates and reads the input rows its taps sample. Where one output index of
// such a dim is still beyond a binding (a depth slice of a volume, one output row of an image),
// that dim goes one index at a time (with its window of input rows and pads) and the next one is
// cut in runs. Causal attention cut along query rows keeps the whole op's diagonal through the
// attribute 'causal_offset'.
//
// A conv whose single image is beyond a binding in a channels-outside-rows layout (NCHW) runs as
// partial convs over blocks of input channels (each block one contiguous run), summed by adds;
// the pass runs in rounds, so partial results still too large are cut again.
//
// A matmul, batch_matmul or gemm whose operands are beyond a binding even for one row or column
// of the result runs as partial products over blocks of K, summed by adds (gemm: alpha on each
// partial, beta * C on the first only), cut again in later rounds where still too large.
//
// Along a dim every output element reads (the fallbacks when no cut of the dims above fits): a
// reduction runs as partial reductions over blocks of a reduced dim, joined and reduced again by
// the combining op (mean: sums, divided once at the end); a cumsum as per-block scans plus a
// carry pass (the sums of the blocks before); a topk as per-block topks (again over blocks of the
// candidates, level after level, while they are beyond a binding), then a topk over the
// candidates whose positions pick the original indices; an argmax (argmin) as per-block extremes
// and indices, the argmax of the extremes picking the block.
//
// Where no cut gives pieces that are all views, a second choice lets operand pieces be copies
// (codegen/box_copy.h: windows bound at offsets aligned down, read at the residual offset), so
// unaligned starts and non-contiguous pieces (columns of a row-major rhs) are cut too; result
// pieces must then be contiguous runs only, at any offset, and are assembled into aligned chunks
// of the result. Only the split path pays these copies.
//
// Attention whose k or v of one batch index is beyond a binding runs, per batch index, as pieces
// over blocks of keys that also return their rows' log-sum-exp (attribute 'with_lse'), combined
// by their softmax weights exp(lse_b - logsumexp of all).
//
// A grouped conv whose one image is beyond a binding (channels outside the rows) runs as convs over
// blocks of whole groups, joined along the output channels, one image at a time.
//
// A gather whose data is beyond a binding along the gathered axis (an embedding table) runs as a
// gather per block of that axis with the indices moved to the block's start, each index's block
// chosen by selects (codegen/range_split_gather.cpp).
//
// A sort along an axis beyond a binding, and a topk whose k is as long as a block of it, run as an
// odd-even transposition sort over blocks of the axis, each step an ordinary sort of two
// neighbouring blocks (codegen/range_split_sort.cpp).
//
// Cuts in files of their own (range_split_<what>.cpp, sharing codegen/range_split_internal.h and
// codegen/range_split_parts.h), tried after the ones above: layer_norm and group_norm (instance
// norm) whose normalized group is beyond a binding run as their primitive ops (reduce_mean, the
// variance around the mean in a second pass, elementwise), each cut in a later round;
// max_pool_with_indices is cut as max_pool, each piece's indices moved by its input box's flat
// position in the whole input; scatter_nd (dim 0) and scatter_elements (its axis) run as
// per-block scatters into blocks of the data, the indices moved into each block and those outside
// it skipped (a scatter_nd whose indices or updates are beyond a binding first as a chain of
// scatter_nds over blocks of its tuples, in order; a scatter_elements with longer dims before its
// axis first as one piece per row); an im2col whose one output row is beyond a binding runs as
// one piece per output row, each cut along its columns in a later round.
//
// Not split (refused with the reason): a sort axis of more blocks than that network takes (64),
// argmax and topk axes where i64 indices cannot be added to (without shaderInt64) beyond the
// limit, one key's row of attention's k or v beyond it, results whose pieces are not contiguous runs
// (columns of a row-major result that is itself beyond the limit), operands every piece reads
// whole (a conv filter, scatter_elements' indices and updates) that are themselves beyond the limit,
// gathers, and max_pool_with_indices where the i64 indices cannot be moved (no shaderInt64) or
// a piece's input box is not one range in the index's order (NHWC cut along rows).
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/graph.h"
#include "module/target_limits.h"

namespace vkc::codegen {

// Elements one piece may hold in any operand or result: kernels index with (some with signed)
// 32-bit integers.
inline constexpr int64_t kMaxPieceElements = (int64_t(1) << 31) - 1;

// Whether any op has an operand or result above the limits below (most graphs: no, and the
// compiler skips the rest).
bool exceeds_binding_limits(const ir::Graph& graph, const TargetLimits& target);

// Rewrites every op that binds more than target.max_storage_buffer_range bytes (or more than
// target.max_memory_allocation_size where that is known and smaller), or more than
// kMaxPieceElements elements of a tensor. `in_registers`: values that fusion keeps inside one
// kernel (a conv result whose quantize is fused), which bind nothing and so need no split. Returns,
// per piece op, how and why it was cut (for `vk-compile --report`). Throws vkc::Error naming the
// op, the tensor and the limit when an op cannot be split.
std::map<const ir::Op*, std::string> split_to_binding_limits(ir::Graph& graph, const TargetLimits& target,
                                                             const std::set<const ir::Value*>& in_registers = {});

}  // namespace vkc::codegen
