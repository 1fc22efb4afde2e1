// Shared pieces of the sort / topk kernel family (private to codegen/kernels/sort_*.cpp).
//
// Every pass works on (key, index) pairs of uint: keys are order-preserving images of the sort
// keys (shaders/sort_keys.glsl) with descending order folded in, indices are positions along the
// axis. Rows are the lines along the sort axis; the passes produce `order`, a scratch tensor with
// the first `len` sorted positions of every row, and gather passes turn it into the results.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/kernel.h"
#include "codegen/kernel_context.h"

namespace vkc::codegen::kernels {

// Lines along the sort axis of a tensor: element i of row r = (o, c) is at o*n*inner + i*inner + c.
struct SortRows {
  int64_t outer = 1;
  int64_t n = 1;  // axis length
  int64_t inner = 1;
  int64_t rows() const { return outer * inner; }
};
SortRows sort_rows(const Shape& shape, int64_t axis);

// Keys read straight from a tensor (the first pass of every plan).
struct KeySource {
  const ir::Value* value = nullptr;
  std::string tensor;
  SortRows rows;
  bool descending = false;
};

// One workgroup-memory bitonic pass (shaders/sort_block.comp). See the template for the meaning.
struct BlockPass {
  const KeySource* keys = nullptr;  // read keys from the tensor, or else from the scratch pair:
  std::string in_keys, in_indices;  // scratch rows of in_len pairs, back to back
  int64_t rows = 0, in_len = 0, in_pad = 0;
  uint32_t chunk = 2, k_lo = 2, k_hi = 1, row_mask = 0;
  std::string out_keys;     // empty: keys are not written
  std::string out_indices;  // equal to in_* for an in-place pass
  int64_t out_period = 1, out_len = 1;
  std::string strategy;
};

// Largest chunk (power of two) whose pairs fit the target's workgroup memory.
uint32_t sort_chunk_capacity(const TargetLimits& target);

EmittedKernel emit_sort_block(const BlockPass& pass, const KernelContext& ctx, const std::string& what);

// One global compare-exchange step over `pairs` pairs of in-place scratch rows of row_mask+1.
EmittedKernel emit_sort_global_step(const std::string& keys, const std::string& indices, int64_t pairs,
                                    uint32_t row_mask, uint32_t k, uint32_t j, const KernelContext& ctx,
                                    const std::string& what);

// Final gathers from `order` (rows x len positions) into a result laid out like the source with
// the axis length replaced by len.
EmittedKernel emit_sort_gather_values(const std::string& order, const SortRows& rows, int64_t len,
                                      const ir::Value* source, const ir::Value* result,
                                      const KernelContext& ctx, const std::string& what);
EmittedKernel emit_sort_gather_indices(const std::string& order, const SortRows& rows, int64_t len,
                                       const ir::Value* result, const KernelContext& ctx,
                                       const std::string& what);

}  // namespace vkc::codegen::kernels
