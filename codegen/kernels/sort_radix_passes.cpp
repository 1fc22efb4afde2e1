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
#include "support/int_math.h"

namespace vkc::codegen::kernels {
namespace {

constexpr uint32_t kDigits = 256;
constexpr uint32_t kScanWorkgroup = 256;
constexpr uint32_t kScanItems = 16;  // counts one scan lane sums serially per round

std::string uint_buffer(uint32_t binding, const char* access, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", access, "buffer Buffer",
             binding, " { uint data[]; } ", instance, ";\n");
}

// Where element `i` of row `row` of the key tensor (or of a result laid out like it) lies (rows
// are lines along the sort axis).
std::string source_address(const SortRows& r, const std::string& i = "i") {
  return r.inner == 1 ? cat("row * ", r.n, "u + ", i)
                      : cat("(row / ", r.inner, "u) * ", r.n * r.inner, "u + ", i, " * ", r.inner,
                            "u + row % ", r.inner, "u");
}

// GLSL setting `word` (the pair's first half) for element i of row `row`: the key image
// (descending folded in by complementing it, which reverses the order of keys but not of equal
// keys), or with raw_words the key tensor's own bits.
std::string load_word(const RadixPass& pass) {
  if (pass.keys == nullptr) return cat("    word = in_pairs.data[row * ", pass.n, "u + i];\n");
  std::string element = cat("source.data[", source_address(pass.keys->rows), "]");
  if (pass.raw_words) return cat("    word = ", element, ";\n");
  std::string convert = is_float(pass.key_type) ? "vkc_sort_key_float(float(" : "vkc_sort_key_int(int(";
  return cat("    word = ", convert, element, "));\n", pass.descending ? "    word = ~word;\n" : "");
}

std::string load_pair(const RadixPass& pass) {
  if (pass.keys == nullptr)
    return cat(load_word(pass), "    index = in_pairs.data[", pass.rows * pass.n, "u + row * ", pass.n, "u + i];\n");
  if (!pass.payload.empty())
    return cat(load_word(pass), "    index = payload.data[", source_address(pass.keys->rows), "];\n");
  return load_word(pass) + "    index = i;\n";
}

// The shared key functions plus pair_key(), the key image of a pair's word.
std::string key_functions(const RadixPass& pass) {
  std::string image = "word";
  if (pass.raw_words)
    image = is_float(pass.key_type) ? "vkc_sort_key_float_bits(word)" : "(word ^ 0x80000000u)";
  if (pass.raw_words && pass.descending) image = "~" + image;
  return cat(shader_source("sort_keys.glsl"), "\nuint pair_key(uint word) { return ", image, "; }\n");
}

// The key source bindings of the count and scatter passes (from binding 0; returns the next).
uint32_t bind_input(const RadixPass& pass, bool with_payload, EmittedKernel& k, std::string& buffers,
                    std::set<DType>& types) {
  uint32_t binding = 0;
  if (pass.keys != nullptr) {
    if (pass.raw_words) {
      buffers += uint_buffer(binding++, "readonly ", "source");  // the bits, never a float
    } else {
      types.insert(pass.key_type);
      buffers += glsl_buffer(binding++, pass.key_type, false, "source");
    }
    k.bindings.push_back({pass.keys->tensor, false});
    if (with_payload && !pass.payload.empty()) {
      buffers += uint_buffer(binding++, "readonly ", "payload");
      k.bindings.push_back({pass.payload, false});
    }
  } else {
    buffers += uint_buffer(binding++, "readonly ", "in_pairs");
    k.bindings.push_back({pass.in_pairs, false});
  }
  return binding;
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
  uint32_t binding = bind_input(pass, false, k, buffers, types);
  buffers += uint_buffer(binding, "writeonly ", "hist");
  k.bindings.push_back({pass.hist, true});
  int64_t groups = tile_groups(pass, what);
  uint32_t wg = pass.tile.workgroup;
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * wg, wg, ctx.target, what);
  k.workgroup_memory_bytes = kDigits * 4;
  k.glsl = instantiate_shader("sort_radix_count", {{"EXTENSIONS", glsl_extensions(types)},
                                                   {"WG_SIZE", std::to_string(wg)},
                                                   {"BUFFERS", buffers},
                                                   {"KEYS", key_functions(pass)},
                                                   {"GROUPS", std::to_string(groups)},
                                                   {"TILES", std::to_string(pass.tiles())},
                                                   {"TILE", std::to_string(pass.tile.keys())},
                                                   {"N", std::to_string(pass.n)},
                                                   {"LOAD_WORD", load_word(pass)},
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
  int64_t lanes = std::min<int64_t>(wg, int64_t(std::bit_ceil(uint64_t(ceil_div(tiles, kScanItems)))));
  int64_t items = std::min<int64_t>(kScanItems, ceil_div(tiles, lanes));
  int64_t rounds = ceil_div(tiles, lanes * items);
  int64_t per_group = wg / lanes;
  int64_t groups = ceil_div(segments, per_group);
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
  bool subgroups = pass.tile.subgroup_ranking;
  k.strategy = cat(subgroups ? "radix ballot scatter " : "radix scatter bits ", pass.shift, "..", pass.shift + 7);
  std::string buffers, store;
  std::set<DType> types;
  uint32_t binding = bind_input(pass, true, k, buffers, types);
  buffers += uint_buffer(binding++, "readonly ", "hist");
  k.bindings.push_back({pass.hist, false});
  int64_t row_slots = pass.rows * pass.n;
  auto output = [&](const std::string& tensor, const char* instance) {
    buffers += uint_buffer(binding++, "writeonly ", instance);
    k.bindings.push_back({tensor, true});
  };
  if (pass.out_pairs.empty()) {
    // The results are laid out like the key tensor (out_len == n for a sort).
    std::string slot_address = source_address(pass.layout, "slot");
    std::string writes;
    if (!pass.order.empty()) {
      output(pass.order, "order");
      writes += cat("      order.data[row * ", pass.out_len, "u + slot] = index;\n");
    }
    if (!pass.values.empty()) {
      output(pass.values, "values");
      writes += cat("      values.data[", slot_address, "] = word;\n");
    }
    if (!pass.payload_out.empty()) {
      output(pass.payload_out, "payload_out");
      writes += cat("      payload_out.data[", slot_address, "] = index;\n");
    }
    store = cat("    if (slot < ", pass.out_len, "u) {\n", writes, "    }\n");
  } else {
    output(pass.out_pairs, "out_pairs");
    store = cat("    out_pairs.data[row * ", pass.n, "u + slot] = word;\n    out_pairs.data[", row_slots,
                "u + row * ", pass.n, "u + slot] = index;\n");
  }
  check(binding <= ctx.target.max_per_stage_descriptor_storage_buffers, "internal: ", what,
        ": radix scatter binds ", binding, " buffers");
  int64_t groups = tile_groups(pass, what);
  uint32_t wg = pass.tile.workgroup;
  uint32_t tile = pass.tile.keys();
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * wg, wg, ctx.target, what);
  std::vector<std::pair<std::string, std::string>> params = {{"EXTENSIONS", glsl_extensions(types)},
                                               {"WG_SIZE", std::to_string(wg)},
                                               {"BUFFERS", buffers},
                                               {"KEYS", key_functions(pass)},
                                               {"TILE", std::to_string(tile)},
                                               {"TILES", std::to_string(pass.tiles())},
                                               {"GROUPS", std::to_string(groups)},
                                               {"N", std::to_string(pass.n)},
                                               {"SHIFT", std::to_string(pass.shift)},
                                               {"LOAD_PAIR", load_pair(pass)},
                                               {"TOTALS", std::to_string(groups * kDigits)},
                                               {"ITEMS", std::to_string(pass.tile.items)},
                                               {"STORE", store}};
  uint32_t padded = tile + tile / 32;
  if (subgroups) {
    // The pair arrays, whose space the [subgroup][digit] counters use first; digit bases; one
    // scan value per subgroup.
    uint32_t words = std::max(2 * padded, kDigits * pass.tile.max_subgroups);
    params.push_back({"MAX_SUBGROUPS", std::to_string(pass.tile.max_subgroups)});
    params.push_back({"MEM_WORDS", std::to_string(words)});
    k.workgroup_memory_bytes = words * 4 + kDigits * 4 + pass.tile.max_subgroups * 8;
    // At most max_subgroups (workgroup / smallest size) full subgroups: the sizes it was planned for.
    k.subgroup_sizes = {ctx.target.min_subgroup_size, ctx.target.max_subgroup_size};
    k.glsl = instantiate_shader("sort_radix_scatter_subgroup", params);
  } else {
    // The shader's arrays: words and indices padded by one word per 32, digit bases, scan pairs.
    k.workgroup_memory_bytes = 2 * padded * 4 + kDigits * 4 + wg * 8;
    k.glsl = instantiate_shader("sort_radix_scatter", params);
  }
  k.tiles["tile"] = tile;
  k.tiles["items"] = pass.tile.items;
  k.flops = double(row_slots) * 8;
  double out_words = double(!pass.order.empty()) + double(!pass.values.empty()) + double(!pass.payload_out.empty());
  k.bytes = double(row_slots) * (pass.keys != nullptr ? 4 + 4 * double(!pass.payload.empty()) : 8) +
            (pass.out_pairs.empty() ? double(pass.rows) * pass.out_len * 4 * out_words : double(row_slots) * 8);
  return k;
}

}  // namespace vkc::codegen::kernels
