// The three dispatches of one radix sort digit pass (count, scan, scatter); the plan that strings
// the passes together is sort_radix.cpp.
#include <algorithm>
#include <bit>
#include <set>

#include "codegen/glsl_types.h"
#include "codegen/grid.h"
#include "codegen/kernels/sort_common.h"
#include "codegen/shader_library.h"
#include "support/error.h"

namespace vkc::codegen::kernels {
namespace {

constexpr uint32_t kDigits = 256;
constexpr uint32_t kScanWorkgroup = 256;
constexpr uint32_t kScanItems = 16;  // counts one scan lane sums serially per round

std::string uint_buffer(uint32_t binding, const char* access, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", access, "buffer Buffer",
             binding, " { uint data[]; } ", instance, ";\n");
}

// Where element i of row `row` of the key tensor lies (rows are lines along the sort axis).
std::string source_address(const SortRows& r) {
  return r.inner == 1 ? cat("row * ", r.n, "u + i")
                      : cat("(row / ", r.inner, "u) * ", r.n * r.inner, "u + i * ", r.inner,
                            "u + row % ", r.inner, "u");
}

// GLSL setting `key` (the order-preserving uint image, descending folded in by complementing it,
// which reverses the order of keys but not of equal keys) for element i of row `row`.
std::string load_key(const RadixPass& pass) {
  if (pass.keys == nullptr) return cat("    key = in_pairs.data[row * ", pass.n, "u + i];\n");
  DType t = pass.keys->value->type.dtype;
  std::string convert = is_float(t) ? "vkc_sort_key_float(float(" : "vkc_sort_key_int(int(";
  return cat("    key = ", convert, "source.data[", source_address(pass.keys->rows), "]));\n",
             pass.keys->descending ? "    key = ~key;\n" : "");
}

std::string load_pair(const RadixPass& pass) {
  if (pass.keys != nullptr) return load_key(pass) + "    index = i;\n";
  return cat(load_key(pass), "    index = in_pairs.data[", pass.rows * pass.n, "u + row * ", pass.n,
             "u + i];\n");
}

// The key source binding (binding 0) of the count and scatter passes.
void bind_input(const RadixPass& pass, EmittedKernel& k, std::string& buffers, std::set<DType>& types) {
  if (pass.keys != nullptr) {
    DType t = pass.keys->value->type.dtype;
    types.insert(t);
    buffers += glsl_buffer(0, t, false, "source");
    k.bindings.push_back({pass.keys->tensor, false});
  } else {
    buffers += uint_buffer(0, "readonly ", "in_pairs");
    k.bindings.push_back({pass.in_pairs, false});
  }
}

int64_t tile_groups(const RadixPass& pass, const std::string& what) {
  int64_t groups = pass.rows * pass.tiles();
  check(uint64_t(groups) * kDigits + uint64_t(pass.rows) * kDigits <= UINT32_MAX, what, ": ", groups,
        " radix sort tiles exceed 32-bit indexing");
  return groups;
}

}  // namespace

EmittedKernel emit_sort_radix_count(const RadixPass& pass, const KernelContext& ctx, const std::string& what) {
  EmittedKernel k;
  k.kernel = "sort_radix_count";
  k.strategy = cat("radix count bits ", pass.shift, "..", pass.shift + 7);
  std::string buffers;
  std::set<DType> types;
  bind_input(pass, k, buffers, types);
  buffers += uint_buffer(1, "writeonly ", "hist");
  k.bindings.push_back({pass.hist, true});
  int64_t groups = tile_groups(pass, what);
  uint32_t wg = pass.tile.workgroup;
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * wg, wg, ctx.target, what);
  k.workgroup_memory_bytes = kDigits * 4;
  k.glsl = instantiate_shader("sort_radix_count", {{"EXTENSIONS", glsl_extensions(types)},
                                                   {"WG_SIZE", std::to_string(wg)},
                                                   {"BUFFERS", buffers},
                                                   {"KEYS", shader_source("sort_keys.glsl")},
                                                   {"GROUPS", std::to_string(groups)},
                                                   {"TILES", std::to_string(pass.tiles())},
                                                   {"TILE", std::to_string(pass.tile.keys())},
                                                   {"N", std::to_string(pass.n)},
                                                   {"LOAD_KEY", load_key(pass)},
                                                   {"SHIFT", std::to_string(pass.shift)}});
  k.tiles["tile"] = pass.tile.keys();
  k.flops = double(pass.rows) * pass.n;
  k.bytes = double(pass.rows) * pass.n * 4 + double(groups) * kDigits * 4;
  return k;
}

EmittedKernel emit_sort_radix_scan(const RadixPass& pass, const KernelContext& ctx, const std::string& what) {
  int64_t tiles = pass.tiles();
  int64_t segments = pass.rows * kDigits;
  uint32_t wg = fit_workgroup_size_x(kScanWorkgroup, ctx.target);
  // Enough lanes per segment that each sums at most kScanItems counts per round, but a whole
  // workgroup at most (longer segments take several rounds).
  int64_t lanes = std::min<int64_t>(wg, int64_t(std::bit_ceil(uint64_t((tiles + kScanItems - 1) / kScanItems))));
  int64_t items = std::min<int64_t>(kScanItems, (tiles + lanes - 1) / lanes);
  int64_t rounds = (tiles + lanes * items - 1) / (lanes * items);
  int64_t per_group = wg / lanes;
  int64_t groups = (segments + per_group - 1) / per_group;
  EmittedKernel k;
  k.kernel = "sort_radix_scan";
  k.strategy = cat("radix scan bits ", pass.shift, "..", pass.shift + 7);
  k.bindings = {{pass.hist, true}};
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * wg, wg, ctx.target, what);
  k.workgroup_memory_bytes = wg * 4;
  k.glsl = instantiate_shader("sort_radix_scan", {{"WG_SIZE", std::to_string(wg)},
                                                  {"GROUPS", std::to_string(groups)},
                                                  {"LANES", std::to_string(lanes)},
                                                  {"SEGMENTS", std::to_string(segments)},
                                                  {"TILES", std::to_string(tiles)},
                                                  {"ROUNDS", std::to_string(rounds)},
                                                  {"ITEMS", std::to_string(items)},
                                                  {"TOTALS", std::to_string(segments * tiles)}});
  k.tiles["lanes"] = lanes;
  k.tiles["items"] = items;
  k.flops = double(segments) * tiles;
  k.bytes = double(segments) * tiles * 8 + double(segments) * 4;
  return k;
}

EmittedKernel emit_sort_radix_scatter(const RadixPass& pass, const KernelContext& ctx, const std::string& what) {
  EmittedKernel k;
  k.kernel = "sort_radix_scatter";
  k.strategy = cat("radix scatter bits ", pass.shift, "..", pass.shift + 7);
  std::string buffers, store;
  std::set<DType> types;
  bind_input(pass, k, buffers, types);
  buffers += uint_buffer(1, "readonly ", "hist");
  k.bindings.push_back({pass.hist, false});
  int64_t row_slots = pass.rows * pass.n;
  if (pass.out_pairs.empty()) {
    buffers += uint_buffer(2, "writeonly ", "order");
    k.bindings.push_back({pass.order, true});
    store = cat("    if (slot < ", pass.out_len, "u) order.data[row * ", pass.out_len, "u + slot] = index;\n");
  } else {
    buffers += uint_buffer(2, "writeonly ", "out_pairs");
    k.bindings.push_back({pass.out_pairs, true});
    store = cat("    out_pairs.data[row * ", pass.n, "u + slot] = key;\n    out_pairs.data[", row_slots,
                "u + row * ", pass.n, "u + slot] = index;\n");
  }
  int64_t groups = tile_groups(pass, what);
  uint32_t wg = pass.tile.workgroup;
  uint32_t tile = pass.tile.keys();
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * wg, wg, ctx.target, what);
  // The shader's arrays: keys and indices padded by one word per 32, digit bases, scan pairs.
  k.workgroup_memory_bytes = 2 * (tile + tile / 32) * 4 + kDigits * 4 + wg * 8;
  k.glsl = instantiate_shader("sort_radix_scatter", {{"EXTENSIONS", glsl_extensions(types)},
                                                     {"WG_SIZE", std::to_string(wg)},
                                                     {"BUFFERS", buffers},
                                                     {"KEYS", shader_source("sort_keys.glsl")},
                                                     {"TILE", std::to_string(tile)},
                                                     {"TILES", std::to_string(pass.tiles())},
                                                     {"GROUPS", std::to_string(groups)},
                                                     {"N", std::to_string(pass.n)},
                                                     {"SHIFT", std::to_string(pass.shift)},
                                                     {"LOAD_PAIR", load_pair(pass)},
                                                     {"TOTALS", std::to_string(groups * kDigits)},
                                                     {"ITEMS", std::to_string(pass.tile.items)},
                                                     {"STORE", store}});
  k.tiles["tile"] = tile;
  k.tiles["items"] = pass.tile.items;
  k.flops = double(row_slots) * 8;
  k.bytes = double(row_slots) * (pass.keys != nullptr ? 4 : 8) +
            double(pass.out_pairs.empty() ? pass.rows * pass.out_len * 4 : row_slots * 8);
  return k;
}

}  // namespace vkc::codegen::kernels
