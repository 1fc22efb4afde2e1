// Fused prologues and epilogues of anchor kernels (conv, conv_transpose, matmul, gemm, pooling,
// reductions, softmax).
//
// A prologue is the tree of ops that computes one of the anchor's operands from values in
// memory: reshape views, pad, reverse, transpose, cast and dequantize, and (into conv: its input
// only) elementwise math on float values. Every one of them is an index map or a per-element
// function, so the tree becomes one GLSL function `T NAME(uint i)` returning element i (C order)
// of the operand: the kernel calls it wherever it read the operand's buffer, and the intermediate
// tensors never exist. A pad is exact there whatever the consumer: the pad value is data the
// loader returns, never the consumer's own padding (a max pool's -inf, an average's excluded
// count), so pad -> max_pool fuses without changing which values a window sees.
//
// An epilogue is the chain of elementwise ops, reshape views and a final quantize applied to the
// anchor's result: it becomes `void store_result(uint i, float acc)`, which takes the f32
// accumulator of element i (C order of the anchor result) and stores the chain's last value.
// Every value in the chain has the anchor result's element count, so element i of each is at
// linear index i of its own shape; side operands broadcast from coordinates decoded from i.
//
// Neither changes a kernel's tiling or workgroup memory: prologues run where the tile loads ran
// (the tiled matmul stages the prologue's f32 results in the tiles it already had) and epilogues
// on registers before the store. What fusion costs is bindings (side operands) and,
// for 8-bit results on targets without 8-bit storage, a packed read-modify-write of the output.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/kernel_context.h"
#include "codegen/strided_view.h"

namespace vkc::codegen {

// GLSL pieces a kernel splices in, and the bindings they use (numbered from `first_binding`).
struct FusedCode {
  std::string buffers;    // buffer declarations
  std::string functions;  // helper functions, ending with the entry point
  std::vector<KernelBinding> bindings;
  std::set<DType> types;  // storage types, for glsl_extensions
  double bytes = 0;       // bytes read / written through these bindings
  // result_store also wrote `void store_result4(uint i, vec4 acc)`: elements i..i+3 (i % 4 == 0)
  // at once, each side operand read once or in one 16-byte (float16: 8-byte) read, the result in
  // one such store.
  bool quads = false;
  // operand_loader also wrote `R NAME_raw(uint i)`, element i of the one tensor the prologue reads
  // at the operand's own index (its root), and `T NAME_fin(R raw, uint i)`, the prologue's element
  // i from that raw value: a kernel may load raw values early and finish them where it stores them.
  bool deferred = false;
};

// What a kernel gathers from its loaders and stores, in binding order: add() each FusedCode as its
// bindings are numbered (bindings.size() is the next binding).
struct KernelIo {
  std::string buffers, functions;
  std::set<DType> types;
  std::vector<KernelBinding> bindings;
  double bytes = 0;
  void add(const FusedCode& f) {
    buffers += f.buffers;
    functions += f.functions;
    types.insert(f.types.begin(), f.types.end());
    bindings.insert(bindings.end(), f.bindings.begin(), f.bindings.end());
    bytes += f.bytes;
  }
};

// `T name(uint i)` returning element i of `operand` of the group's anchor, through the group's
// prologue ops (a plain buffer read when none is fused). T is the compute type of the operand.
// With `defer`, where the prologue is elementwise math on one tensor read at index i (its root;
// other reads broadcast parameters), also `R name_raw(uint i)` and `T name_fin(R raw, uint i)`
// (FusedCode::deferred).
FusedCode operand_loader(const DispatchGroup& group, const ir::Value* operand, const std::string& name,
                         uint32_t first_binding, const KernelContext& ctx, bool defer = false);

// The group's prologue in front of `operand` as one strided view (of the operand's shape) of the
// value it reads, where that prologue is index maps only (reshape views, transposes, slices, broadcasts, reversals; or none:
// the operand's own contiguous view). A kernel can then read that value in place at addresses it
// computes itself (its rows' offsets once, not an unravel per element); nullopt otherwise.
struct PrologueView {
  const ir::Value* source;
  StridedView view;
};
std::optional<PrologueView> prologue_view(const DispatchGroup& group, const ir::Value* operand);

// Where an epilogue that begins with index maps (reshape views and transposes, which only move
// elements) stores anchor element i: the maps composed over the anchor's result, with `strides[d]`
// the anchor-result stride of the stored value's dim d (a permutation of its contiguous strides),
// or nullopt where they do not compose into such a permutation. `maps`: the epilogue's leading
// index maps, in order.
std::optional<StridedView> epilogue_permutation(const ir::Value* anchor_result, const std::vector<const ir::Op*>& maps);

// `void store_result(uint i, float acc)` for the group's anchor result through its epilogue ops.
// Leading transposes in the epilogue (attention's output stored with its heads and tokens
// swapped) move element i to its place in the transposed result; the ops after them index their
// side operands there. With `quads`, also store_result4 where the chain allows it (FusedCode::quads:
// no leading transposes, no quantize, a float32 or float16 result, and each side operand either the same
// for the four elements or four consecutive ones of its own).
FusedCode result_store(const DispatchGroup& group, uint32_t first_binding, const KernelContext& ctx,
                       bool quads = false);

// The value the group finally writes (the last epilogue op's result, else the anchor's).
const ir::Value* fused_result(const DispatchGroup& group);

// Ops that may join an anchor's prologue / epilogue (shape and use constraints are checked by
// dispatch formation).
bool prologue_fusible(const ir::Op& op);
bool epilogue_fusible(const ir::Op& op);
// Elementwise math (unary except cast, binary) on float operands with a float result: joins the
// prologues of matmul, pooling and reduction kernels and of conv's input, where the kernel reads
// each element few times (codegen/dispatch_formation).
bool elementwise_prologue_fusible(const ir::Op& op);

// Storage buffers a dispatch of the group binds (anchor operands, prologue sources, side
// operands not inlined as literals, the output).
uint32_t fused_binding_count(const DispatchGroup& group);

}  // namespace vkc::codegen
