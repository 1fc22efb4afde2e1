// The workgroup-memory bitonic pass of the sort family: sorts whole short rows, chunks of long
// rows (topk candidates, presorted runs of a global sort), or finishes a global merge stage.
// Every invocation holds several pairs in registers and runs the steps whose strides fall between
// them, changing the register layout through workgroup memory only every few steps
// (shaders/sort_block.comp explains the layouts).
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

constexpr uint32_t kPairBytes = 8;           // uint key + uint index in workgroup memory
constexpr uint32_t kMaxChunk = 4096;         // more buys few passes and costs occupancy
constexpr uint32_t kPreferredWorkgroup = 256;

std::string uint_buffer(uint32_t binding, const char* access, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", access, "buffer Buffer",
             binding, " { uint data[]; } ", instance, ";\n");
}

// Where element `i` of virtual row `row` lies in a tensor laid out like the keys with an axis of
// `len` (the key tensor itself, or a result).
std::string row_address(const SortRows& r, int64_t len, const std::string& i) {
  return r.inner == 1 ? cat("row * ", len, "u + ", i)
                      : cat("(row / ", r.inner, "u) * ", len * r.inner, "u + ", i, " * ", r.inner,
                            "u + row % ", r.inner, "u");
}

// GLSL that sets `key` and `index` for element i of virtual row `row` read from the key tensor.
std::string load_from_tensor(const KeySource& src) {
  DType t = src.value->type.dtype;
  std::string convert = is_float(t) ? "vkc_sort_key_float(float(" : "vkc_sort_key_int(int(";
  return cat("      key = ", convert, "source.data[", row_address(src.rows, src.rows.n, "i"), "]));\n",
             src.descending ? "      key = ~key;  // descending: reversed order, NaN first\n" : "",
             "      index = i;\n");
}

// GLSL writing the sorted value of output slot q of row `row` (`key` from position `index`) to `values`: 4-byte keys invert their image, except zeros and NaNs, whose bits only
// the source knows; other types read the source element back (the row was just read, so it is
// likely cached).
std::string store_value(const KeySource& src, int64_t out_len) {
  DType t = src.value->type.dtype;
  std::string at = row_address(src.rows, out_len, "q");
  std::string from_source = cat("source.data[", row_address(src.rows, src.rows.n, "index"), "]");
  std::string image = src.descending ? "~key" : "key";
  if (t == DType::i32) return cat("      values.data[", at, "] = int(", image, " ^ 0x80000000u);\n");
  if (t != DType::f32) return cat("      values.data[", at, "] = ", from_source, ";\n");
  return cat("      {\n        uint image = ", image, ";\n        values.data[", at,
             "] = vkc_sort_key_float_invertible(image) ? uintBitsToFloat(vkc_sort_key_float_inverse(image))\n",
             "                                                 : ", from_source, ";\n      }\n");
}

// GLSL for one in-register step of the network (shaders/sort_block.comp): for each stride m
// between registers (a power of two below `items`), the compare-exchanges of the register pairs
// (r, r + m), with constant register indices. A pair sorts descending when its position has the
// stage's `mask` bit set.
std::string register_steps(uint32_t items) {
  std::string out;
  for (uint32_t m = 1; m < items; m *= 2) {
    out += cat(m == 1 ? "      if" : " else if", " (m == ", m, "u) {\n");
    for (uint32_t r = 0; r < items; ++r) {
      if (r & m) continue;
      std::string position = r == 0 ? "high" : cat("(high | (", r, "u << lo))");
      out += cat("        cmpx(keys[", r, "], indices[", r, "], keys[", r | m, "], indices[", r | m, "], (",
                 position, " & mask) == 0u);\n");
    }
    out += "      }";
  }
  return out + "\n";
}

}  // namespace

uint32_t sort_chunk_capacity(const TargetLimits& target) {
  uint32_t chunk = 2;
  while (chunk * 2 <= kMaxChunk && chunk * 2 * kPairBytes <= target.max_compute_shared_memory_size)
    chunk *= 2;
  return chunk;
}

EmittedKernel emit_sort_block(const BlockPass& pass, const KernelContext& ctx, const std::string& what) {
  EmittedKernel k;
  k.kernel = "sort_block";
  k.strategy = pass.strategy;
  std::string buffers, load, store;
  std::set<DType> types;
  bool in_place = pass.keys == nullptr && pass.out_indices == pass.in_indices;
  uint32_t binding = 0;
  if (pass.keys != nullptr) {
    DType t = pass.keys->value->type.dtype;
    types.insert(t);
    buffers += glsl_buffer(binding++, t, false, "source");
    k.bindings.push_back({pass.keys->tensor, false});
    load = load_from_tensor(*pass.keys);
  } else if (in_place) {
    check(pass.out_keys == pass.in_keys, "internal: ", what, ": in-place sort pass must write keys");
    buffers += uint_buffer(binding++, "", "pair_keys");
    buffers += uint_buffer(binding++, "", "pair_indices");
    k.bindings.push_back({pass.in_keys, true});
    k.bindings.push_back({pass.in_indices, true});
  } else {
    buffers += uint_buffer(binding++, "readonly ", "in_keys");
    buffers += uint_buffer(binding++, "readonly ", "in_indices");
    k.bindings.push_back({pass.in_keys, false});
    k.bindings.push_back({pass.in_indices, false});
  }
  if (pass.keys == nullptr) {
    const char* kin = in_place ? "pair_keys" : "in_keys";
    const char* iin = in_place ? "pair_indices" : "in_indices";
    load = cat("      uint a = row * ", pass.in_len, "u + i;\n      key = ", kin,
               ".data[a];\n      index = ", iin, ".data[a];\n");
  }
  if (in_place) {
    store = "      pair_keys.data[o] = key;\n      pair_indices.data[o] = index;\n";
  } else {
    if (!pass.out_keys.empty()) {
      buffers += uint_buffer(binding++, "writeonly ", "out_keys");
      k.bindings.push_back({pass.out_keys, true});
      store += "      out_keys.data[o] = key;\n";
    }
    if (!pass.out_indices.empty()) {
      buffers += uint_buffer(binding++, "writeonly ", "out_indices");
      k.bindings.push_back({pass.out_indices, true});
      store += "      out_indices.data[o] = index;\n";
    }
  }
  // Results written here instead of by gathers from `order` (sort.cpp decides which).
  check((pass.values == nullptr && pass.payload == nullptr) ||
            (pass.keys != nullptr && pass.out_period == pass.in_pad),
        "internal: ", what, ": direct results need whole rows read from the key tensor");
  if (pass.values != nullptr) {
    DType t = pass.values->type.dtype;
    buffers += glsl_buffer(binding++, t, true, "values");
    k.bindings.push_back({ctx.tensor(pass.values), true});
    store += store_value(*pass.keys, pass.out_len);
  }
  if (pass.payload != nullptr) {
    DType t = pass.payload->type.dtype;
    types.insert(t);
    buffers += glsl_buffer(binding++, t, false, "payload");
    buffers += glsl_buffer(binding++, t, true, "payload_out");
    k.bindings.push_back({ctx.tensor(pass.payload_source), false});
    k.bindings.push_back({ctx.tensor(pass.payload), true});
    const SortRows& r = pass.keys->rows;
    store += cat("      payload_out.data[", row_address(r, pass.out_len, "q"), "] = payload.data[",
                 row_address(r, r.n, "index"), "];\n");
  }
  check(binding <= ctx.target.max_per_stage_descriptor_storage_buffers, "internal: ", what,
        ": sort block pass binds ", binding, " buffers");
  check(!store.empty(), "internal: ", what, ": sort block pass writes nothing");

  int64_t virtual_slots = pass.rows * pass.in_pad;
  int64_t groups = ceil_div(virtual_slots, pass.chunk);
  check(uint64_t(groups) * pass.chunk <= UINT32_MAX, what, ": ", virtual_slots,
        " sort slots exceed 32-bit indexing");
  int64_t out_rows = virtual_slots / pass.out_period;  // out_period divides in_pad
  uint32_t wg = fit_workgroup_size_x(std::min(pass.chunk / 2, kPreferredWorkgroup), ctx.target);
  uint32_t items = pass.chunk / wg;  // pairs per invocation, in registers
  k.workgroup_size = {wg, 1, 1};
  k.workgroup_count = linear_grid(uint64_t(groups) * wg, wg, ctx.target, what);
  k.workgroup_memory_bytes = pass.chunk * kPairBytes;
  k.glsl = instantiate_shader(
      "sort_block", {{"EXTENSIONS", glsl_extensions(types)},
                     {"WG_SIZE", std::to_string(wg)},
                     {"BUFFERS", buffers},
                     {"KEYS", shader_source("sort_keys.glsl")},
                     {"CHUNK", std::to_string(pass.chunk)},
                     {"GROUPS", std::to_string(groups)},
                     {"IN_PAD", std::to_string(pass.in_pad)},
                     {"ROWS", std::to_string(pass.rows)},
                     {"IN_LEN", std::to_string(pass.in_len)},
                     {"LOAD", load},
                     {"K_LO", std::to_string(pass.k_lo)},
                     {"K_HI", std::to_string(pass.k_hi)},
                     {"ROW_MASK", std::to_string(pass.row_mask)},
                     {"OUT_PERIOD", std::to_string(pass.out_period)},
                     {"OUT_ROWS", std::to_string(out_rows)},
                     {"OUT_LEN", std::to_string(pass.out_len)},
                     {"ITEMS", std::to_string(items)},
                     {"LOG_ITEMS", std::to_string(std::countr_zero(items))},
                     {"LOG_K_LO", std::to_string(std::countr_zero(pass.k_lo))},
                     {"LOG_K_HI", std::to_string(std::countr_zero(pass.k_hi))},
                     {"STEPS", register_steps(items)},
                     {"STORE", store}});
  k.tiles["chunk"] = pass.chunk;
  k.tiles["row_slots"] = pass.in_pad;
  k.tiles["items"] = items;
  uint32_t stages = 0;
  for (uint64_t s = pass.k_lo; s <= pass.k_hi; s *= 2) stages += std::bit_width(std::min<uint64_t>(s, pass.chunk)) - 1;
  k.flops = double(groups) * pass.chunk / 2 * stages;
  // Pairs (or keys) in; every written word out, a payload read back at the index.
  double out_words = double(!pass.out_keys.empty()) + double(!pass.out_indices.empty()) +
                     double(pass.values != nullptr) + 2 * double(pass.payload != nullptr);
  k.bytes = double(pass.rows) * pass.in_len * (pass.keys != nullptr ? 4 : 8) +
            double(out_rows) * pass.out_len * 4 * out_words;
  return k;
}

}  // namespace vkc::codegen::kernels
