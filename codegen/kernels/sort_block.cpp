// The workgroup-memory bitonic pass of the sort family: sorts whole short rows, chunks of long
// rows (topk candidates, presorted runs of a global sort), or finishes a global merge stage.
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

constexpr uint32_t kPairBytes = 8;           // uint key + uint index in workgroup memory
constexpr uint32_t kMaxChunk = 4096;         // more buys few passes and costs occupancy
constexpr uint32_t kPreferredWorkgroup = 256;

std::string uint_buffer(uint32_t binding, const char* access, const std::string& instance) {
  return cat("layout(std430, set = 0, binding = ", binding, ") restrict ", access, "buffer Buffer",
             binding, " { uint data[]; } ", instance, ";\n");
}

// GLSL that sets `key` and `index` for element i of virtual row `row` read from the key tensor.
std::string load_from_tensor(const KeySource& src) {
  const SortRows& r = src.rows;
  std::string addr = r.inner == 1 ? cat("row * ", r.n, "u + i")
                                  : cat("(row / ", r.inner, "u) * ", r.n * r.inner, "u + i * ",
                                        r.inner, "u + row % ", r.inner, "u");
  DType t = src.value->type.dtype;
  std::string convert = is_float(t) ? "vkc_sort_key_float(float(" : "vkc_sort_key_int(int(";
  return cat("      key = ", convert, "source.data[", addr, "]));\n",
             src.descending ? "      key = ~key;  // descending: reversed order, NaN first\n" : "",
             "      index = i;\n");
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
    store = "      pair_keys.data[o] = s_key[t];\n      pair_indices.data[o] = s_index[t];\n";
  } else {
    if (!pass.out_keys.empty()) {
      buffers += uint_buffer(binding++, "writeonly ", "out_keys");
      k.bindings.push_back({pass.out_keys, true});
      store += "      out_keys.data[o] = s_key[t];\n";
    }
    buffers += uint_buffer(binding++, "writeonly ", "out_indices");
    k.bindings.push_back({pass.out_indices, true});
    store += "      out_indices.data[o] = s_index[t];\n";
  }

  int64_t virtual_slots = pass.rows * pass.in_pad;
  int64_t groups = (virtual_slots + pass.chunk - 1) / pass.chunk;
  check(uint64_t(groups) * pass.chunk <= UINT32_MAX, what, ": ", virtual_slots,
        " sort slots exceed 32-bit indexing");
  int64_t out_rows = virtual_slots / pass.out_period;  // out_period divides in_pad
  uint32_t wg = fit_workgroup_size_x(std::min(pass.chunk / 2, kPreferredWorkgroup), ctx.target);
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
                     {"STORE", store}});
  k.tiles["chunk"] = pass.chunk;
  k.tiles["row_slots"] = pass.in_pad;
  uint32_t stages = 0;
  for (uint64_t s = pass.k_lo; s <= pass.k_hi; s *= 2) stages += std::bit_width(std::min<uint64_t>(s, pass.chunk)) - 1;
  k.flops = double(groups) * pass.chunk / 2 * stages;
  k.bytes = double(pass.rows) * pass.in_len * 8 + double(out_rows) * pass.out_len * (pass.out_keys.empty() ? 4 : 8);
  return k;
}

}  // namespace vkc::codegen::kernels
