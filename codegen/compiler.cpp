#include "codegen/compiler.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "codegen/dispatch_group.h"
#include "codegen/dispatch_schedule.h"
#include "codegen/glsl_compiler.h"
#include "codegen/glsl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/conv_planner.h"
#include "codegen/kernels/attention_plan.h"
#include "codegen/range_split.h"
#include "codegen/spirv_build.h"
#include "codegen/spirv_tools.h"
#include "codegen/storage_plan.h"
#include "ir/conv_geometry.h"
#include "ir/passes.h"
#include "ir/verifier.h"
#include "module/tensor_lookup.h"
#include "support/error.h"
#include "support/int_math.h"

namespace vkc::codegen {

ir::PassManager default_pass_pipeline(const ir::PassManagerOptions& options, const TargetLimits* target,
                                      Precision precision) {
  // Constants first (dequantized or transposed weights become plain constants), then reshapes are
  // canonicalized so pads reach the convs they feed, then convs absorb pads and BatchNorm
  // constants; dce last removes what the rewrites left unused.
  ir::PassManager pm(options);
  // QDQ int8 convs and matmuls become integer products while their weights are still 8-bit.
  pm.add(ir::qdq_to_integer_pass());
  pm.add(ir::constant_folding_pass());
  pm.add(ir::reshape_propagation_pass());
  pm.add(ir::fold_pad_into_conv_pass());
  pm.add(ir::fold_batchnorm_into_conv_pass());
  // Rotary embeddings' rotate_half as index maps and a sign, which fuse into attention's loads;
  // RMSNorm as one normalization.
  pm.add(ir::rotate_half_pass());
  pm.add(ir::fuse_rms_norm_pass());
  // q, k and v projections of one activation become one product (before attention fusion, which
  // then reads them through slices).
  pm.add(ir::fuse_shared_input_matmuls_pass(target ? target->max_storage_buffer_range : UINT64_MAX));
  // Attention fuses where the kernel's planner finds tiles for the target (else it stays unfused).
  ir::AttentionFits fits;
  if (target)
    fits = [limits = *target](const ir::Op& op) { return kernels::plan_attention(op, limits).has_value(); };
  pm.add(ir::fuse_attention_pass(fits));
  // A transposed q/k/v projection split into q, k and v: each part transposed on its own, so that
  // attention reads it in place and the transposed copy is not stored.
  pm.add(ir::slice_before_transpose_pass());
  // A transpose of the output projection's rows moved onto its lhs, which attention then stores
  // transposed.
  pm.add(ir::transpose_rows_into_product_pass());
  if (precision == Precision::fp16) pm.add(ir::convert_to_fp16_pass());
  // After the fp16 conversion, whose weights are then float16 constants. The convs whose
  // tensor-core kernel stages 16 bytes at a time read their input and filter in place when these
  // are stored channels innermost (codegen/kernels/conv_pack.cpp): activations between them are,
  // then the constant filters.
  if (target) {
    auto packs = [limits = *target](const ir::Op& conv) {
      if (conv.operand(0)->type.dtype != DType::f16) return false;
      ConvPlan plan = plan_conv(ir::conv_geometry(conv), limits, 2, "", conv.describe());
      return plan.strategy == ConvStrategy::implicit_gemm_coopmat && plan.coop().vec == 8;
    };
    // float32 filters of the SIMT GEMM with one tap per K slice (more than one tap: a 1x1 filter
    // is already stored that way).
    auto packs_f32 = [limits = *target](const ir::Op& conv) {
      if (conv.operand(0)->type.dtype != DType::f32) return false;
      ir::ConvGeometry g = ir::conv_geometry(conv);
      return product(g.kernel) > 1 && conv_slices_hold_one_tap(g, plan_conv(g, limits, 4, "", conv.describe()));
    };
    // A conv joins the channels-last regions only where its kernel stays the one it had, or
    // becomes the channels-last depthwise kernel (coalesced over channels there, as the tiled
    // depthwise kernel is over W in NCHW); a depthwise conv changes both layouts or neither.
    auto channels_last_strategy = [limits = *target](const ir::Op& conv) {
      ir::ConvGeometry g = ir::conv_geometry(conv);
      const int rank = 2 + g.spatial_rank;
      g.input_pos = {0, rank - 1};
      for (int i = 1; i < rank - 1; ++i) g.input_pos.push_back(i);
      g.output_pos = g.input_pos;
      return plan_conv(g, limits, uint32_t(dtype_size(conv.operand(0)->type.dtype)), "", conv.describe()).strategy;
    };
    auto keeps_kernel = [limits = *target, channels_last_strategy](const ir::Op& conv) {
      const uint32_t bytes = uint32_t(dtype_size(conv.operand(0)->type.dtype));
      const ConvStrategy before = plan_conv(ir::conv_geometry(conv), limits, bytes, "", conv.describe()).strategy;
      const ConvStrategy after = channels_last_strategy(conv);
      return after == before || after == ConvStrategy::depthwise_channels_last;
    };
    auto depthwise = [channels_last_strategy](const ir::Op& conv) {
      return channels_last_strategy(conv) == ConvStrategy::depthwise_channels_last;
    };
    pm.add(ir::channels_last_pass({packs, keeps_kernel, depthwise}));
    pm.add(ir::pack_conv_filters_pass([packs, packs_f32](const ir::Op& conv) { return packs(conv) || packs_f32(conv); }));
  }
  pm.add(ir::dead_code_elimination_pass());
  return pm;
}

namespace {

// Offsets inside the constants and arena buffers are bound as descriptor offsets, so they must
// satisfy minStorageBufferOffsetAlignment on every device; 256 is the largest value Vulkan allows.
constexpr uint64_t kBufferAlignment = 256;

void check_against_limits(const DispatchDesc& d, const TargetLimits& t) {
  uint64_t invocations = uint64_t(d.workgroup_size[0]) * d.workgroup_size[1] * d.workgroup_size[2];
  check(invocations <= t.max_compute_work_group_invocations, "internal: dispatch '", d.name, "' uses ",
        invocations, " invocations per workgroup, target '", t.name, "' allows ",
        t.max_compute_work_group_invocations);
  for (int a = 0; a < 3; ++a) {
    check(d.workgroup_size[a] <= t.max_compute_work_group_size[a], "internal: dispatch '", d.name,
          "' workgroup size[", a, "] ", d.workgroup_size[a], " exceeds ", t.max_compute_work_group_size[a]);
    check(d.workgroup_count[a] >= 1 && d.workgroup_count[a] <= t.max_compute_work_group_count[a],
          "internal: dispatch '", d.name, "' workgroup count[", a, "] ", d.workgroup_count[a],
          " exceeds ", t.max_compute_work_group_count[a]);
  }
  check(d.workgroup_memory_bytes <= t.max_compute_shared_memory_size, "internal: dispatch '", d.name,
        "' needs ", d.workgroup_memory_bytes, " bytes of workgroup memory, target '", t.name,
        "' has ", t.max_compute_shared_memory_size);
  check(d.push_constants.size() * 4 <= t.max_push_constants_size, "internal: dispatch '", d.name,
        "' push constants exceed ", t.max_push_constants_size, " bytes");
  check(d.bindings.size() <= t.max_per_stage_descriptor_storage_buffers, "internal: dispatch '", d.name,
        "' binds ", d.bindings.size(), " storage buffers, target '", t.name, "' allows ",
        t.max_per_stage_descriptor_storage_buffers);
}

// "FILE: " to start a message about the whole graph, so that it names the file as the op errors
// do (their Location); "" for a graph built in C++.
std::string source_prefix(const ir::Graph& graph) { return graph.source.empty() ? "" : graph.source + ": "; }

// Values that fusion keeps inside one kernel as the graph stands: they bind no buffer, so their
// size is no reason to split (the f32 result of a conv whose quantize is fused).
std::set<const ir::Value*> kept_in_registers(const ir::Graph& graph, const TargetLimits& target,
                                             const StoragePlan& storage) {
  std::set<const ir::Value*> kept;
  for (const DispatchGroup& g : form_dispatch_groups(graph, target, storage.zero_copy)) {
    std::set<const ir::Value*> out(g.outputs.begin(), g.outputs.end());
    for (const ir::Op* op : g.ops)
      for (const ir::Value* r : op->results)
        if (!out.count(r)) kept.insert(r);
  }
  return kept;
}

// Every binding within maxStorageBufferRange: the range split (codegen/range_split.h) cuts ops
// whose tensors are larger; what it could not make a view (e.g. a concat that cannot be written in
// place) would bind a whole tensor, and is refused here.
void check_binding_ranges(const std::string& source_prefix, const Manifest& m, const TensorLookup& tensors,
                          const TargetLimits& target) {
  for (const DispatchDesc& d : m.dispatches)
    for (const BindingDesc& b : d.bindings) {
      const TensorDesc& t = tensors.tensor(b.tensor);
      check(t.size_bytes() <= target.max_storage_buffer_range, source_prefix, "tensor '", t.name, "' (",
            shape_str(t.shape), " ", dtype_name(t.dtype), ") is ", t.size_bytes(), " bytes, above target '",
            target.name, "' maxStorageBufferRange ", target.max_storage_buffer_range, ", and ",
            d.ops.empty() ? d.name : d.ops.front(), " binds it whole");
    }
}

}  // namespace

ModuleImage compile_graph(const ir::Graph& input, const CompileOptions& options) {
  ir::verify_graph(input);
  ir::Graph graph = input.clone();
  check(!graph.outputs().empty(), source_prefix(graph), "graph '", graph.name, "' has no outputs");
  for (const ir::Value* in : graph.inputs())
    check(!in->name.empty(), source_prefix(graph), "graph '", graph.name, "' has an input without a name");
  if (options.precision == Precision::fp16)
    check(gpu_storable(DType::f16, options.target), source_prefix(graph), "precision fp16 needs a target with "
          "storageBuffer16BitAccess and shaderFloat16; target '", options.target.name, "' has not both");
  default_pass_pipeline(options.passes, &options.target, options.precision).run(graph);
  // After the passes (which may fold ops) and before storage: pieces are ordinary ops.
  auto plan = [&] {
    try {
      return plan_storage(graph, view_alignment(options.target));
    } catch (const Error& e) {  // duplicate or clashing input/output names: name the file too
      throw Error(source_prefix(graph) + e.what());
    }
  };
  StoragePlan storage = plan();
  // Ops whose tensors exceed a binding become pieces (ordinary ops), and storage is planned anew.
  std::map<const ir::Op*, std::string> split_notes;
  if (exceeds_binding_limits(graph, options.target)) {
    split_notes = split_to_binding_limits(graph, options.target, kept_in_registers(graph, options.target, storage));
    storage = plan();
  }
  std::vector<DispatchGroup> groups = form_dispatch_groups(graph, options.target, storage.zero_copy);
  for (DispatchGroup& c : storage.copy_groups) groups.push_back(std::move(c));

  ModuleImage image;
  Manifest& m = image.manifest;
  m.target = options.target;
  m.source = graph.source;
  m.precision = options.precision;
  m.inputs = storage.inputs;
  m.outputs = storage.outputs;

  KernelContext ctx{options.target, graph, storage, options.forced_strategy,
                    options.precision == Precision::fp16x3};
  std::vector<ScratchTensor> scratch_all;
  std::map<std::string, std::pair<int, int>> scratch_range;
  std::vector<std::pair<size_t, EmittedKernel>> built;  // dispatch index, its kernel
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const DispatchGroup& group = groups[gi];
    // A group that writes only zero-element tensors has nothing to compute: no dispatch (and no
    // emitter has to plan for empty extents). A copy group names what it copies as its input.
    const std::vector<ir::Value*>& written = group.ops.empty() ? group.inputs : group.outputs;
    bool writes_elements = written.empty();
    for (const ir::Value* v : written) writes_elements = writes_elements || v->type.numel() > 0;
    if (!writes_elements) continue;
    std::vector<ScratchTensor> scratch;
    std::vector<EmittedKernel> kernels = find_kernel_emitter(group)(group, ctx, scratch);
    int first_dispatch = int(m.dispatches.size());
    for (size_t ki = 0; ki < kernels.size(); ++ki) {
      EmittedKernel& k = kernels[ki];
      DispatchDesc d;
      d.name = cat("d", m.dispatches.size(), "_", k.kernel);
      d.kernel = k.kernel;
      d.strategy = k.strategy;
      for (const ir::Op* op : group.ops) d.ops.push_back(op->describe());
      if (group.ops.empty()) d.ops.push_back(group.describe());
      d.spv = d.name + ".spv";
      for (size_t b = 0; b < k.bindings.size(); ++b)
        d.bindings.push_back({uint32_t(b), k.bindings[b].tensor, k.bindings[b].writes});
      d.push_constants = k.push_constants;
      d.spec_constants = k.spec_constants;
      d.workgroup_size = k.workgroup_size;
      d.workgroup_count = k.workgroup_count;
      d.workgroup_memory_bytes = k.workgroup_memory_bytes;
      d.tiles = k.tiles;
      d.flops = k.flops;
      d.bytes = k.bytes;
      d.notes = group.notes.empty() ? k.notes : (k.notes.empty() ? group.notes : group.notes + "; " + k.notes);
      for (const ir::Op* op : group.ops)
        if (auto it = split_notes.find(op); it != split_notes.end()) {
          d.notes = it->second + (d.notes.empty() ? "" : "; " + d.notes);
          break;
        }
      check_against_limits(d, options.target);
      d.subgroup_sizes = k.subgroup_sizes;
      // A kernel planned for one size of a target whose size varies pins it at pipeline creation.
      const auto [lo, hi] = k.subgroup_sizes;
      const TargetLimits& t = options.target;
      if (lo != 0 && lo == hi && t.min_subgroup_size != t.max_subgroup_size && t.subgroup_size_control &&
          t.min_subgroup_size <= lo && lo <= t.max_subgroup_size)
        d.required_subgroup_size = lo;
      built.push_back({m.dispatches.size(), std::move(k)});
      m.dispatches.push_back(std::move(d));
    }
    int last_dispatch = int(m.dispatches.size()) - 1;
    for (ScratchTensor& s : scratch) {
      scratch_range[s.name] = {first_dispatch, last_dispatch};
      scratch_all.push_back(std::move(s));
    }
  }
  // SPIR-V for every dispatch once all are emitted: distinct kernels compile on several threads.
  {
    std::vector<const EmittedKernel*> kernels;
    std::vector<std::string> names;
    for (const auto& [dispatch, k] : built) {
      kernels.push_back(&k);
      names.push_back(m.dispatches[dispatch].name);
    }
    std::vector<std::vector<uint32_t>> words = build_spirv_all(kernels, names, options);
    for (size_t i = 0; i < built.size(); ++i) {
      DispatchDesc& d = m.dispatches[built[i].first];
      d.spirv = read_spirv_usage(words[i]);  // what the device must offer, from the binary
      image.spirv[d.spv] = std::move(words[i]);
    }
  }

  // Tensors: the storage plan's plus scratch buffers, then place constants and the arena.
  m.tensors = storage.tensors;
  std::map<std::string, const HostTensor*> kernel_constants;
  for (const ScratchTensor& s : scratch_all) {
    const TensorRole role = s.constant ? TensorRole::Constant : TensorRole::Intermediate;
    m.tensors.push_back({s.name, s.dtype, s.shape, role, 0, ""});
    if (s.constant) kernel_constants[s.name] = &*s.constant;
  }
  // Only what dispatches bind must fit a binding: an intermediate that fusion keeps in registers is
  // never allocated, and a tensor split over buffer ranges is bound piece by piece.
  const TensorLookup tensors(m);  // m.tensors keeps its elements until the erase_if at the end
  check_binding_ranges(source_prefix(graph), m, tensors, options.target);
  // Recording order: by level, so that independent dispatches share the time between two barriers
  // (codegen/dispatch_schedule.h). Only where that saves at least one barrier in 20 (a chain like
  // DenseNet's saves none, yet would pay arena bytes), and not where the arena would grow by more
  // than a quarter (plus 1 MiB of slack for small models): memory is what a user sees first.
  const uint64_t page = options.target.max_memory_allocation_size;
  std::vector<int> graph_order(m.dispatches.size());
  std::iota(graph_order.begin(), graph_order.end(), 0);
  std::map<std::string, uint64_t> offsets, leveled_offsets;
  m.arena_bytes = assign_arena_offsets(arena_live_ranges(m, graph_order, graph_order), kBufferAlignment, offsets, page);
  const DispatchDependencies deps = dispatch_dependencies(m);
  const int level_barriers = deps.level.empty() ? 0 : *std::max_element(deps.level.begin(), deps.level.end());
  const int saved = deps.graph_order_barriers - level_barriers;
  if (saved > 0 && 20 * saved >= deps.graph_order_barriers) {
    const std::vector<int> by_level = order_by_level(deps.level);
    const uint64_t leveled_bytes = assign_arena_offsets(arena_live_ranges(m, by_level, deps.level), kBufferAlignment,
                                                        leveled_offsets, page);
    if (leveled_bytes <= m.arena_bytes + m.arena_bytes / 4 + (1u << 20)) {
      apply_dispatch_order(image, by_level);
      m.arena_bytes = leveled_bytes;
      offsets = std::move(leveled_offsets);
    }
  }
  for (TensorDesc& t : m.tensors)
    if (auto it = offsets.find(t.name); it != offsets.end()) t.offset = it->second;
  std::set<std::string> bound;  // storage tensors some dispatch binds
  for (const DispatchDesc& d : m.dispatches)
    for (const BindingDesc& b : d.bindings) bound.insert(tensors.storage_of(b.tensor).name);

  for (TensorDesc& t : m.tensors) {
    if (t.role != TensorRole::Constant || !t.view_of.empty() || !bound.count(t.name)) continue;
    auto own = kernel_constants.find(t.name);  // a kernel's table, else a graph constant
    const HostTensor& data = own != kernel_constants.end()
                                 ? *own->second
                                 : *storage.constant_source.at(t.name)->producer->attr_tensor("value");
    uint64_t offset = round_up(image.constants.size(), kBufferAlignment);
    image.constants.resize(offset + data.size_bytes());
    if (data.size_bytes()) std::memcpy(image.constants.data() + offset, data.data(), data.size_bytes());
    t.offset = offset;
  }
  m.constants_bytes = image.constants.size();
  // Drop tensors that nothing binds and that are neither inputs nor outputs (e.g. unused constants
  // or views), keeping the manifest to what the runtime needs.
  std::set<std::string> needed(m.inputs.begin(), m.inputs.end());
  needed.insert(m.outputs.begin(), m.outputs.end());
  for (const DispatchDesc& d : m.dispatches)
    for (const BindingDesc& b : d.bindings)
      for (const TensorDesc* t = &tensors.tensor(b.tensor);; t = &tensors.tensor(t->view_of)) {
        needed.insert(t->name);
        if (t->view_of.empty()) break;
      }
  std::erase_if(m.tensors, [&](const TensorDesc& t) { return !needed.count(t.name); });
  return image;
}

}  // namespace vkc::codegen
