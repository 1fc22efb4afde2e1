// Shared pieces of the sort / topk kernel family (private to codegen/kernels/sort_*.cpp).
//
// Every pass works on (key, index) pairs of uint: keys are order-preserving images of the sort
// keys (shaders/sort_keys.glsl) with descending order folded in, indices are positions along the
// axis. Rows are the lines along the sort axis; the passes produce `order`, a scratch tensor with
// the first `len` sorted positions of every row, and gather passes turn it into the results.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/kernel_context.h"
#include "support/int_math.h"

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
  std::string out_indices;  // equal to in_* for an in-place pass; empty: not written (a pass
                            // that reads the tensor and writes `direct` results only)
  int64_t out_period = 1, out_len = 1;
  // Only with `keys` (the tensor is bound): results written directly, values from the keys
  // (4-byte keys; else read back at the index) and a payload read at the index.
  const ir::Value* values = nullptr;
  const ir::Value* payload_source = nullptr;
  const ir::Value* payload = nullptr;
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

// ---- LSD radix sort of long rows (sort_radix.cpp, sort_radix_passes.cpp) ----
// Each digit pass: `count` (per-tile digit histograms), `scan` (per row and digit, over the
// tiles), `scatter` (stable ranking inside a tile, then a write to the pass's output rows).

// Scratch tensors come from the caller's planner, which names, sizes and checks them.
using AddScratch = std::function<std::string(const std::string& suffix, int64_t elements)>;

// The keys one count / scatter workgroup owns: `workgroup` invocations x `items` consecutive keys.
// `subgroup_ranking`: the scatter ranks with subgroup ballots (sort_radix_scatter_subgroup.comp),
// whose counters need room for `max_subgroups` subgroups.
struct RadixTile {
  uint32_t workgroup = 0, items = 0;
  bool subgroup_ranking = false;
  uint32_t max_subgroups = 0;
  uint32_t keys() const { return workgroup * items; }
};
// Whether the target offers what the subgroup ranking needs (ballot and arithmetic, a known
// smallest subgroup size).
bool radix_subgroup_ranking_possible(const TargetLimits& target);
// The largest tile whose scatter pass fits the target's workgroup memory (none on targets with
// very little); `small` (forced radix on short rows) makes tests exercise many tiles per row.
// Subgroup ranking is used where possible unless `no_subgroups`.
std::optional<RadixTile> radix_tile(const TargetLimits& target, bool small, bool no_subgroups = false);
// Whether the radix plan fits the target (else the planner keeps the global bitonic sort).
bool radix_sort_fits(const SortRows& rows, const TargetLimits& target);

// Buffers hold pairs as two halves (the words of every row, back to back, then the indices), and
// the histograms and digit totals share one buffer, so no pass binds more than four buffers
// (vulkan-min allows four per stage).
//
// A pair is (word, index). The word is the key image (shaders/sort_keys.glsl, descending folded
// in), or with `raw_words` (4-byte keys) the key tensor's own bits, whose image every pass derives
// again: then the last pass can write the sorted values themselves, bit-exact (NaN payloads,
// -0.0), where the image alone would not tell -0.0 from +0.0. The index is the position along the
// axis, or with `payload` the payload tensor's own 32-bit word, carried so that the last pass
// writes the sorted payload too and no gather is needed.
struct RadixPass {
  const KeySource* keys = nullptr;  // first pass: keys from the tensor, indices implicit
  std::string in_pairs;             // later passes
  DType key_type = DType::f32;
  bool descending = false;
  bool raw_words = false;
  std::string payload;              // first pass: the tensor whose words replace the indices
  int64_t rows = 0, n = 0;
  SortRows layout;                  // of the key tensor and the results written by the last pass
  RadixTile tile;
  uint32_t shift = 0;     // the digit is key bits [shift, shift + 8)
  std::string hist;       // rows x 256 x tiles tile counts ([row][digit][tile]), then rows x 256 totals
  std::string out_pairs;  // empty: the last pass, which writes what the three below name
  std::string order;      // the first out_len positions of each row (empty: not needed)
  std::string values;     // the sorted values (raw_words only; empty: not written here)
  std::string payload_out;  // the sorted payload (payload only)
  int64_t out_len = 0;
  int64_t tiles() const { return ceil_div(n, tile.keys()); }
};
EmittedKernel emit_sort_radix_count(const RadixPass& pass, const KernelContext& ctx, const std::string& what);
EmittedKernel emit_sort_radix_scan(const RadixPass& pass, const KernelContext& ctx, const std::string& what);
EmittedKernel emit_sort_radix_scatter(const RadixPass& pass, const KernelContext& ctx, const std::string& what);

// What the last pass of a plan writes itself, so fewer gathers follow.
struct SortDirect {
  std::string order;        // empty: nothing gathers from `order`, so it is not written
  const ir::Value* values = nullptr;  // the sorted key values result
  const ir::Value* payload_source = nullptr, *payload = nullptr;  // one payload and its result
};

// Every pass of a radix sort of `keys`; the last writes the first out_len positions of each row
// to `direct.order` and whichever results `direct` names (see radix_writes_values and
// radix_carries_payload). `portable_ranking` keeps the scatter off subgroup operations (tests).
std::vector<EmittedKernel> emit_sort_radix(const KeySource& keys, const SortDirect& direct, int64_t out_len,
                                           bool small_tiles, bool portable_ranking, const AddScratch& add_scratch,
                                           const KernelContext& ctx, const std::string& what);
// Which results the radix plan can write directly: values when the keys are 4-byte words, a
// payload when it is one too (the pair then carries it instead of the index).
bool radix_writes_values(DType key_type);
bool radix_carries_payload(DType key_type, DType payload_type);

// ---- Topk by radix selection (sort_select.cpp, shaders/topk_select.comp) ----
// Each workgroup keeps the best k pairs of a segment of a row (segments so a single row fills the
// GPU); levels of candidates shrink until one segment per row is left, whose picks are sorted in
// workgroup memory and written straight to the used topk results (no gather passes). Ties, NaN
// and -0.0 follow the (key, index) pair order like every other pass.
// Whether the target's workgroup memory and invocations hold a plan for k.
bool topk_select_fits(const SortRows& rows, int64_t k, const TargetLimits& target);
// The topk results the final level writes; null: unused (at least one must be used).
struct SelectOutputs {
  const ir::Value* values = nullptr;
  const ir::Value* indices = nullptr;
};
// small_segments: tiny segments and workgroups, so tests reach several levels on small rows.
std::vector<EmittedKernel> emit_topk_select(const KeySource& keys, int64_t k, const SelectOutputs& out,
                                            bool small_segments, const AddScratch& add_scratch,
                                            const KernelContext& ctx, const std::string& what);

}  // namespace vkc::codegen::kernels
