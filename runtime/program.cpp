// rt::Program: a module loaded on a device, executed with one pre-recorded command buffer.
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "runtime/barrier_plan.h"
#include "runtime/command.h"
#include "runtime/device_tensor.h"
#include "runtime/memory.h"
#include "runtime/pipeline.h"
#include "runtime/pipeline_cache.h"
#include "runtime/segmented_buffer.h"
#include "runtime/storage_range.h"
#include "module/device_fit.h"
#include "module/memory_footprint.h"
#include "module/storage_segments.h"
#include "support/error.h"
#include "support/parallel_for.h"

namespace vkc::rt {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

std::string type_str(const TensorDesc& t) { return cat(dtype_name(t.dtype), " ", shape_str(t.shape)); }

// Buffer sizes and descriptor ranges are whole 32-bit words (module/memory_footprint.h). The
// compiler places every tensor at a 256-byte-aligned offset, so the padding never reaches another
// tensor.
uint64_t whole_words(uint64_t n) { return storage_buffer_bytes(n); }

}  // namespace

using DeviceTensors = std::map<std::string, std::shared_ptr<DeviceTensor>>;

struct Program::Impl {
  Impl(Context& context, const ModuleImage& module, const ProgramOptions& options);
  ~Impl();

  void create_buffers();
  void create_descriptor_sets();
  // `device_fed`: inputs that a device-side copy fills, so their host upload is not recorded.
  // device_fed: inputs copied in from DeviceTensors (no host upload); device_kept: outputs copied
  // out to DeviceTensors (no download to the host, which on a discrete GPU crosses PCIe).
  void record(VkCommandBuffer cmd, bool profile, bool poison, const std::set<std::string>& device_fed,
              const std::set<std::string>& device_kept);
  // The command buffer for one variant (profile, poison, which inputs come from the device),
  // recorded on first use and replayed after.
  VkCommandBuffer command_buffer(bool profile, bool poison, const std::set<std::string>& device_fed = {},
                                 const std::set<std::string>& device_kept = {});
  void check_inputs(const std::map<std::string, HostTensorView>& inputs, const DeviceTensors& device_inputs) const;
  SegmentedBuffer& buffer_of(const StorageRange& r);
  // Device-side copies between device tensors and this program's input/output buffers.
  void record_copy_in(const DeviceTensors& inputs);
  void record_copy_out(const DeviceTensors& outputs);
  void read_profile();

  Context& context;
  Context::Impl& ctx;
  Manifest manifest;
  std::vector<std::unique_ptr<DispatchPipeline>> pipelines;
  std::vector<bool> barrier_before;
  std::vector<size_t> record_order;  // plan_record_order: dispatch indices in recording order

  // Each in one allocation, or in segments where larger than one may be (module/storage_segments.h).
  std::map<std::string, std::unique_ptr<SegmentedBuffer>> input_buffers, output_buffers;  // by storage tensor
  std::unique_ptr<SegmentedBuffer> constants, arena;
  std::unique_ptr<Buffer> dummy;
  // Host-visible copies for devices whose storage memory is not mapped.
  std::map<std::string, std::unique_ptr<SegmentedBuffer>> upload_staging;    // by input name
  std::map<std::string, std::unique_ptr<SegmentedBuffer>> download_staging;  // by output name

  Unique<VkDescriptorPool> descriptor_pool;
  std::vector<VkDescriptorSet> descriptor_sets;
  std::unique_ptr<CommandPool> commands;
  std::unique_ptr<Fence> fence;
  std::map<std::string, VkCommandBuffer> recorded;  // by variant key (see command_buffer)
  Unique<VkQueryPool> timestamps;  // two per dispatch; null when the queue has no timestamps
  std::vector<DispatchProfile> profile;
  bool cache_loaded = false;
  size_t submission_count = 0;

  // Per-execution copies for device tensors: their own pool, reset before each use.
  Unique<VkCommandPool> transfer_pool;
  VkCommandBuffer copy_in = VK_NULL_HANDLE, copy_out = VK_NULL_HANDLE;
  Unique<VkFence> execution_fence;

  // The execution in flight (submit() .. wait()).
  bool pending = false;
  bool pending_profile = false;
  DeviceTensors pending_device_inputs;   // kept alive until the copies ran
  DeviceTensors pending_device_outputs;
  std::map<std::string, HostTensorSpan> pending_host_targets;  // the caller's memory for host outputs

  // The device outputs last handed to the caller, by name. An execution reuses one the caller has
  // let go of instead of allocating another: on the H200 a fresh 64 MiB buffer per execution cost
  // milliseconds of host time, during which the GPU idled and dropped its clocks.
  DeviceTensors returned_outputs;
  size_t output_allocations = 0;
};

Program::Impl::Impl(Context& context, const ModuleImage& module, const ProgramOptions& options)
    : context(context), ctx(context.impl()), manifest(module.manifest) {
  // Judged by what the dispatches use, not by the profile the module was compiled for, and before
  // any GPU work. One line: the first use that does not fit (vkc::Module::unmet_limits lists all).
  std::vector<std::string> unmet = unmet_usage(module, ctx.limits);
  check(unmet.empty(), "module compiled for target '", manifest.target.name, "' does not fit device '",
        ctx.info.name, "': ", unmet.empty() ? "" : unmet.front(),
        "; recompile it for this device (vk-run --recompile)");
  check(module.constants.size() == manifest.constants_bytes, "module constants are ",
        module.constants.size(), " bytes, the manifest says ", manifest.constants_bytes);
  // Memory preflight, before any allocation: a driver may accept an allocation larger than the
  // memory it can back (lavapipe) and leave the process to the system's out-of-memory killer.
  // Storage above one allocation is planned in segments; a binding that cannot lie in one is the
  // misfit then.
  std::string misfit;
  try {
    misfit = device_memory_misfit(module_allocations(manifest, ctx.max_allocation_bytes,
                                                     ctx.limits.min_storage_buffer_offset_alignment),
                                  ctx.storage_bytes_in_use,
                                  ctx.device_heap_bytes, ctx.max_allocation_bytes);
  } catch (const Error& e) {
    misfit = e.what();
  }
  check(misfit.empty(), "module does not fit the memory of device '", ctx.info.name, "': ", misfit);

  // Pipelines go through a cache persisted per device and module, so later processes skip the
  // driver's compilation; it is dropped once the pipelines exist.
  std::unique_ptr<PipelineCache> cache;
  if (!options.pipeline_cache_dir.empty()) {
    cache = std::make_unique<PipelineCache>(ctx, options.pipeline_cache_dir, module_pipeline_key(module));
    cache_loaded = cache->loaded_from_disk();
  }
  // The driver compiles each pipeline on its own: on several threads (a pipeline cache is
  // internally synchronized), up to VKC_COMPILE_THREADS (support/parallel_for.h).
  pipelines.resize(manifest.dispatches.size());
  const VkPipelineCache cache_handle = cache ? cache->handle() : VK_NULL_HANDLE;
  parallel_for(manifest.dispatches.size(), compile_threads(), [&](size_t i) {
    const DispatchDesc& d = manifest.dispatches[i];
    auto spv = module.spirv.find(d.spv);
    check(spv != module.spirv.end(), "dispatch '", d.name, "': SPIR-V '", d.spv, "' is missing from the module");
    pipelines[i] = std::make_unique<DispatchPipeline>(ctx, d, spv->second, cache_handle);
  });
  if (cache) cache->save();
  cache.reset();
  barrier_before = plan_barriers(manifest);
  record_order = plan_record_order(manifest, barrier_before);

  create_buffers();
  create_descriptor_sets();
  commands = std::make_unique<CommandPool>(ctx);
  fence = std::make_unique<Fence>(ctx);

  // Constants are uploaded once, here.
  if (!module.constants.empty()) {
    if (constants->mapped()) {
      constants->write(0, module.constants.data(), module.constants.size());
    } else {
      SegmentedBuffer staging(ctx, module.constants.size(), even_segments(module.constants.size(), ctx.max_allocation_bytes),
                              BufferUse::Upload, "constants upload");
      staging.write(0, module.constants.data(), module.constants.size());
      VkCommandBuffer upload = commands->allocate();
      VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      vk_check(ctx.vk.vkBeginCommandBuffer(upload, &begin), "vkBeginCommandBuffer");
      record_copy(ctx.vk, upload, staging, 0, *constants, 0, module.constants.size());
      vk_check(ctx.vk.vkEndCommandBuffer(upload), "vkEndCommandBuffer");
      fence->submit_and_wait(upload);
    }
  }

  {
    VkCommandPoolCreateInfo info = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    info.queueFamilyIndex = ctx.queue_family;
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(ctx.vk.vkCreateCommandPool(ctx.device, &info, nullptr, &pool), "vkCreateCommandPool");
    Context::Impl* c = &ctx;
    transfer_pool = Unique<VkCommandPool>(pool, [c](VkCommandPool p) { c->vk.vkDestroyCommandPool(c->device, p, nullptr); });
    VkCommandBufferAllocateInfo alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 2;
    VkCommandBuffer two[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    vk_check(ctx.vk.vkAllocateCommandBuffers(ctx.device, &alloc, two), "vkAllocateCommandBuffers");
    copy_in = two[0];
    copy_out = two[1];
    VkFenceCreateInfo fence_info = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkFence f = VK_NULL_HANDLE;
    vk_check(ctx.vk.vkCreateFence(ctx.device, &fence_info, nullptr, &f), "vkCreateFence");
    execution_fence = Unique<VkFence>(f, [c](VkFence h) { c->vk.vkDestroyFence(c->device, h, nullptr); });
  }

  // A pipeline that failed validation must not be recorded: the layer itself can crash recording
  // commands against an invalid pipeline (tests/hostile: binding missing from the layout).
  if (std::vector<std::string> messages = ctx.log.messages(); !messages.empty())
    throw Error(cat("module rejected at load: ", messages.front()));
  command_buffer(false, false);  // the plain variant is recorded up front
  if (ctx.timestamp_valid_bits != 0 && !manifest.dispatches.empty()) {
    VkQueryPoolCreateInfo info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = uint32_t(2 * manifest.dispatches.size());
    VkQueryPool pool = VK_NULL_HANDLE;
    vk_check(ctx.vk.vkCreateQueryPool(ctx.device, &info, nullptr, &pool), "vkCreateQueryPool");
    Context::Impl* c = &ctx;
    timestamps = Unique<VkQueryPool>(pool, [c](VkQueryPool p) { c->vk.vkDestroyQueryPool(c->device, p, nullptr); });
    command_buffer(true, false);
  }
}

VkCommandBuffer Program::Impl::command_buffer(bool profile, bool poison, const std::set<std::string>& device_fed,
                                              const std::set<std::string>& device_kept) {
  std::string key{profile ? 'p' : '-', poison ? 'n' : '-'};
  for (const std::string& name : manifest.inputs) key += device_fed.count(name) ? 'd' : 'h';
  key += '/';
  for (const std::string& name : manifest.outputs) key += device_kept.count(name) ? 'd' : 'h';
  auto it = recorded.find(key);
  if (it != recorded.end()) return it->second;
  VkCommandBuffer c = commands->allocate();
  record(c, profile, poison, device_fed, device_kept);
  recorded[key] = c;
  return c;
}

Program::Impl::~Impl() {
  // A timed-out or failed submission may still reference the buffers.
  if (ctx.queue) ctx.vk.vkQueueWaitIdle(ctx.queue);
}

void Program::Impl::create_buffers() {
  // Storage above maxMemoryAllocationSize is cut between the ranges dispatches bind.
  std::map<std::string, std::vector<ByteRange>> used;
  auto storage = [&](uint64_t bytes, const std::string& what) {
    const uint64_t size = whole_words(bytes);
    std::vector<uint64_t> starts{0};
    if (ctx.max_allocation_bytes != 0 && size > ctx.max_allocation_bytes) {
      if (used.empty()) used = bound_ranges(manifest);
      starts = plan_segments(size, used[what], ctx.max_allocation_bytes, what, ctx.limits.min_storage_buffer_offset_alignment);
    }
    return std::make_unique<SegmentedBuffer>(ctx, size, starts, BufferUse::Storage, what);
  };
  auto staging = [&](uint64_t size, BufferUse use, const std::string& what) {
    return std::make_unique<SegmentedBuffer>(ctx, size, even_segments(size, ctx.max_allocation_bytes), use, what);
  };
  for (const TensorDesc& t : manifest.tensors) {
    if (!t.view_of.empty()) continue;
    if (t.role == TensorRole::Input) input_buffers[t.name] = storage(t.size_bytes(), storage_name(t.role, t.name));
    if (t.role == TensorRole::Output) output_buffers[t.name] = storage(t.size_bytes(), storage_name(t.role, t.name));
  }
  constants = storage(manifest.constants_bytes, storage_name(TensorRole::Constant, ""));
  arena = storage(manifest.arena_bytes, storage_name(TensorRole::Intermediate, ""));
  dummy = std::make_unique<Buffer>(ctx, 4, BufferUse::Storage, "zero-size tensor placeholder");
  for (const std::string& name : manifest.inputs) {
    SegmentedBuffer& b = buffer_of(resolve_storage(manifest, name));
    if (!b.mapped()) upload_staging[name] = staging(b.size(), BufferUse::Upload, cat("input '", name, "' upload"));
  }
  for (const std::string& name : manifest.outputs) {
    SegmentedBuffer& b = buffer_of(resolve_storage(manifest, name));
    if (!b.mapped())
      download_staging[name] = staging(whole_words(manifest.tensor(name).size_bytes()), BufferUse::Download,
                                       cat("output '", name, "' download"));
  }
}

SegmentedBuffer& Program::Impl::buffer_of(const StorageRange& r) {
  switch (r.kind) {
    case StorageKind::Input: return *input_buffers.at(r.owner);
    case StorageKind::Output: return *output_buffers.at(r.owner);
    case StorageKind::Constants: return *constants;
    case StorageKind::Arena: return *arena;
  }
  throw Error("internal error: unknown storage kind");
}

void Program::Impl::create_descriptor_sets() {
  uint32_t total = 0;
  for (const DispatchDesc& d : manifest.dispatches) total += uint32_t(d.bindings.size());
  const uint32_t sets = uint32_t(manifest.dispatches.size());
  if (sets == 0) return;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, total ? total : 1};
  VkDescriptorPoolCreateInfo pool_info = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  pool_info.maxSets = sets;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  vk_check(ctx.vk.vkCreateDescriptorPool(ctx.device, &pool_info, nullptr, &pool), "vkCreateDescriptorPool");
  Context::Impl* c = &ctx;
  descriptor_pool = Unique<VkDescriptorPool>(pool, [c](VkDescriptorPool p) { c->vk.vkDestroyDescriptorPool(c->device, p, nullptr); });

  std::vector<VkDescriptorSetLayout> layouts;
  for (const auto& p : pipelines) layouts.push_back(p->set_layout());
  VkDescriptorSetAllocateInfo alloc = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  alloc.descriptorPool = pool;
  alloc.descriptorSetCount = sets;
  alloc.pSetLayouts = layouts.data();
  descriptor_sets.resize(sets);
  vk_check(ctx.vk.vkAllocateDescriptorSets(ctx.device, &alloc, descriptor_sets.data()), "vkAllocateDescriptorSets");

  const uint64_t align = ctx.limits.min_storage_buffer_offset_alignment;
  const TensorLookup tensors(manifest);  // every binding resolves a name: index them once
  for (size_t i = 0; i < manifest.dispatches.size(); ++i) {
    const DispatchDesc& d = manifest.dispatches[i];
    std::vector<VkDescriptorBufferInfo> infos(d.bindings.size());
    std::vector<VkWriteDescriptorSet> writes(d.bindings.size());
    for (size_t b = 0; b < d.bindings.size(); ++b) {
      const BindingDesc& bd = d.bindings[b];
      StorageRange r = resolve_storage(tensors, bd.tensor);
      if (r.size == 0) {
        infos[b] = {dummy->handle(), 0, 4};
      } else {
        check(r.size <= ctx.limits.max_storage_buffer_range, "dispatch '", d.name, "' binding ", bd.binding,
              " (tensor '", bd.tensor, "'): ", r.size, " bytes exceed maxStorageBufferRange ",
              ctx.limits.max_storage_buffer_range);
        SegmentedBuffer& buf = buffer_of(r);
        check(r.offset + r.size <= buf.size(), "dispatch '", d.name, "' binding ", bd.binding, " (tensor '",
              bd.tensor, "'): bytes [", r.offset, ", ", r.offset + r.size, ") lie outside its buffer of ",
              buf.size(), " bytes");
        // The segment that holds the binding (the only one unless the storage is segmented).
        SegmentedBuffer::Slot slot = buf.locate(r.offset, whole_words(r.size));
        check(align == 0 || slot.offset % align == 0, "dispatch '", d.name, "' binding ", bd.binding,
              " (tensor '", bd.tensor, "'): offset ", slot.offset,
              " is not a multiple of minStorageBufferOffsetAlignment ", align);
        infos[b] = {slot.buffer->handle(), slot.offset, whole_words(r.size)};
      }
      writes[b] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[b].dstSet = descriptor_sets[i];
      writes[b].dstBinding = bd.binding;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    ctx.vk.vkUpdateDescriptorSets(ctx.device, uint32_t(writes.size()), writes.data(), 0, nullptr);
  }
}

void Program::Impl::record(VkCommandBuffer c, bool with_timestamps, bool poison,
                           const std::set<std::string>& device_fed, const std::set<std::string>& device_kept) {
  const VolkDeviceTable& vk = ctx.vk;
  constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  constexpr VkAccessFlags kShaderRW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  constexpr VkAccessFlags kTransferRW = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

  VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  vk_check(vk.vkBeginCommandBuffer(c, &begin), "vkBeginCommandBuffer");
  if (with_timestamps)
    vk.vkCmdResetQueryPool(c, timestamps.get(), 0, uint32_t(2 * manifest.dispatches.size()));
  // Orders this execution after the previous one (and the constants upload) on the queue: the
  // fence wait covers the host, not the device-side hazards between submissions.
  memory_barrier(ctx, c, kCompute | kTransfer, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 kCompute | kTransfer, kShaderRW | kTransferRW);

  bool transfers = false;
  if (poison) {
    // 0x7FC07FC0 is a quiet NaN read as one f32 or as two f16, so unwritten elements stand out.
    constexpr uint32_t kPoison = 0x7FC07FC0u;
    auto fill = [&](const SegmentedBuffer& b) {
      for (size_t i = 0; i < b.segment_count(); ++i) vk.vkCmdFillBuffer(c, b.segment(i).handle(), 0, VK_WHOLE_SIZE, kPoison);
    };
    for (const auto& [name, buffer] : output_buffers) fill(*buffer);
    fill(*arena);
    transfers = true;
  }
  for (const auto& [name, staging] : upload_staging) {
    if (device_fed.count(name)) continue;
    StorageRange r = resolve_storage(manifest, name);
    if (r.size == 0) continue;
    record_copy(vk, c, *staging, 0, buffer_of(r), r.offset, r.size);
    transfers = true;
  }
  if (transfers) memory_barrier(ctx, c, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, kCompute, kShaderRW);

  for (size_t n = 0; n < record_order.size(); ++n) {
    // Reordering stays between barriers, so the barrier before position n still starts its interval.
    if (barrier_before[n]) memory_barrier(ctx, c, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute, kShaderRW);
    const size_t i = record_order[n];
    const DispatchDesc& d = manifest.dispatches[i];
    if (with_timestamps)
      vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps.get(), uint32_t(2 * i));
    vk.vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[i]->pipeline());
    vk.vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines[i]->layout(), 0, 1,
                               &descriptor_sets[i], 0, nullptr);
    if (!d.push_constants.empty())
      vk.vkCmdPushConstants(c, pipelines[i]->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                            uint32_t(d.push_constants.size() * 4), d.push_constants.data());
    vk.vkCmdDispatch(c, d.workgroup_count[0], d.workgroup_count[1], d.workgroup_count[2]);
    if (with_timestamps)
      vk.vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps.get(), uint32_t(2 * i + 1));
  }

  // Results go to the host directly (mapped memory) or through download staging buffers.
  memory_barrier(ctx, c, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kTransfer | VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT);
  bool downloads = false;
  for (const auto& [name, staging] : download_staging) {
    if (device_kept.count(name)) continue;
    StorageRange r = resolve_storage(manifest, name);
    if (r.size == 0) continue;
    record_copy(vk, c, buffer_of(r), r.offset, *staging, 0, r.size);
    downloads = true;
  }
  if (downloads)
    memory_barrier(ctx, c, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  vk_check(vk.vkEndCommandBuffer(c), "vkEndCommandBuffer");
}

void Program::Impl::check_inputs(const std::map<std::string, HostTensorView>& inputs,
                                 const DeviceTensors& device_inputs) const {
  auto known = [&](const std::string& name) {
    for (const std::string& n : manifest.inputs)
      if (n == name) return true;
    return false;
  };
  for (const auto& [name, tensor] : inputs)
    check_input(known(name), "unknown input '", name, "' (the module's inputs are: ", join(manifest.inputs), ")");
  for (const auto& [name, tensor] : device_inputs) {
    check_input(known(name), "unknown input '", name, "' (the module's inputs are: ", join(manifest.inputs), ")");
    check_input(!inputs.count(name), "input '", name, "' is given both as a host and as a device tensor");
    check_input(tensor != nullptr, "input '", name, "': empty device tensor");
  }
  for (const std::string& name : manifest.inputs) {
    const TensorDesc& t = manifest.tensor(name);
    auto dev = device_inputs.find(name);
    auto it = inputs.find(name);
    check_input(it != inputs.end() || dev != device_inputs.end(), "missing input '", name, "' (", type_str(t), ")");
    DType dtype = dev != device_inputs.end() ? dev->second->dtype() : it->second.dtype;
    const Shape& shape = dev != device_inputs.end() ? dev->second->shape() : it->second.shape;
    check_input(dtype == t.dtype, "input '", name, "': expected dtype ", dtype_name(t.dtype), ", found ", dtype_name(dtype));
    check_input(shape == t.shape, "input '", name, "': expected shape ", shape_str(t.shape), ", found ", shape_str(shape));
    if (dev != device_inputs.end())
      check(&dev->second->impl().ctx == &ctx, "input '", name, "': the device tensor belongs to another device context");
  }
}

void Program::Impl::record_copy_in(const DeviceTensors& inputs) {
  const VolkDeviceTable& vk = ctx.vk;
  VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vk.vkBeginCommandBuffer(copy_in, &begin), "vkBeginCommandBuffer");
  // After whatever wrote the device tensors (an earlier execution's copy-out or dispatches) and
  // whatever still reads this program's input buffers.
  constexpr VkPipelineStageFlags kStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  memory_barrier(ctx, copy_in, kStages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  for (const auto& [name, tensor] : inputs) {
    StorageRange r = resolve_storage(manifest, name);
    if (r.size == 0) continue;
    record_copy(vk, copy_in, *tensor->impl().buffer, 0, buffer_of(r), r.offset, r.size);
  }
  // The dispatch command buffer starts with a barrier covering transfer writes.
  vk_check(vk.vkEndCommandBuffer(copy_in), "vkEndCommandBuffer");
}

void Program::Impl::record_copy_out(const DeviceTensors& outputs) {
  const VolkDeviceTable& vk = ctx.vk;
  VkCommandBufferBeginInfo begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vk.vkBeginCommandBuffer(copy_out, &begin), "vkBeginCommandBuffer");
  constexpr VkPipelineStageFlags kStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  memory_barrier(ctx, copy_out, kStages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  for (const auto& [name, tensor] : outputs) {
    StorageRange r = resolve_storage(manifest, name);
    if (r.size == 0) continue;
    record_copy(vk, copy_out, buffer_of(r), r.offset, *tensor->impl().buffer, 0, r.size);
  }
  // Visible to later device work and to DeviceTensor::download() on mapped memory.
  memory_barrier(ctx, copy_out, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 kStages | VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT);
  vk_check(vk.vkEndCommandBuffer(copy_out), "vkEndCommandBuffer");
}

Program::Program(Context& context, const ModuleImage& module, const ProgramOptions& options)
    : impl_(std::make_unique<Impl>(context, module, options)) {}

Program::~Program() = default;

const Manifest& Program::manifest() const { return impl_->manifest; }

const std::vector<DispatchProfile>& Program::last_profile() const { return impl_->profile; }

std::vector<std::string> Program::pipeline_statistics(size_t dispatch) const {
  check(dispatch < impl_->pipelines.size(), "pipeline_statistics: dispatch ", dispatch, " of ",
        impl_->pipelines.size());
  return impl_->pipelines[dispatch]->statistics();
}

bool Program::pipeline_cache_loaded() const { return impl_->cache_loaded; }
size_t Program::recorded_command_buffers() const { return impl_->recorded.size(); }
size_t Program::submissions() const { return impl_->submission_count; }
size_t Program::device_output_allocations() const { return impl_->output_allocations; }

std::map<std::string, HostTensor> Program::execute(const std::map<std::string, HostTensor>& inputs,
                                                   const ExecuteOptions& options) {
  submit(views_of(inputs), {}, {}, options);
  return wait().host;
}

void Program::submit(const std::map<std::string, HostTensorView>& inputs, const DeviceTensors& device_inputs,
                     const std::set<std::string>& device_outputs, const ExecuteOptions& options,
                     const DeviceTensors& output_targets, const std::map<std::string, HostTensorSpan>& host_targets) {
  Impl& p = *impl_;
  check(!p.pending, "an execution of this module is still in flight; wait() for it before submitting another");
  p.check_inputs(inputs, device_inputs);
  for (const std::string& name : device_outputs) {
    bool known = false;
    for (const std::string& n : p.manifest.outputs) known |= n == name;
    check(known, "unknown output '", name, "' (the module's outputs are: ", join(p.manifest.outputs), ")");
  }
  for (const auto& [name, target] : output_targets) {
    check(device_outputs.count(name), "output target '", name, "' is not among the device outputs");
    check(target != nullptr, "output target '", name, "': no tensor");
    check(&target->impl().ctx == &p.ctx, "output target '", name, "': the device tensor belongs to another device context");
    const TensorDesc& t = p.manifest.tensor(name);
    check(target->dtype() == t.dtype && target->shape() == t.shape, "output target '", name, "': the tensor is ",
          dtype_name(target->dtype()), " ", shape_str(target->shape()), " but the output is ", type_str(t));
  }
  // The caller's memory is written by wait() with no further check: every way it could not fit is
  // refused here, before any GPU work.
  for (const auto& [name, span] : host_targets) {
    bool known = false;
    for (const std::string& n : p.manifest.outputs) known |= n == name;
    check_input(known, "output to host '", name, "': no such output (the module's outputs are: ",
                join(p.manifest.outputs), ")");
    check_input(!device_outputs.count(name), "output '", name,
                "' is both kept on the device and written to host memory");
    const TensorDesc& t = p.manifest.tensor(name);
    check_input(span.dtype == t.dtype && span.shape == t.shape, "output to host '", name, "': expected ", type_str(t),
                ", found ", dtype_name(span.dtype), " ", shape_str(span.shape));
    check_input(span.data != nullptr || t.size_bytes() == 0, "output to host '", name, "': a span of ",
                t.size_bytes(), " bytes with no data");
  }
  check(!options.profile || p.timestamps, "profiling needs GPU timestamps, which device '", p.ctx.info.name,
        "' does not support on its compute queue");

  for (const auto& [name, h] : inputs) {
    StorageRange r = resolve_storage(p.manifest, name);
    auto staging = p.upload_staging.find(name);
    const size_t bytes = h.size_bytes();
    if (bytes == 0) continue;
    check_input(h.data != nullptr, "input '", name, "': a view of ", bytes, " bytes with no data");
    if (staging != p.upload_staging.end()) staging->second->write(0, h.data, bytes);
    else p.buffer_of(r).write(r.offset, h.data, bytes);
  }
  std::set<std::string> device_fed;
  for (const auto& [name, t] : device_inputs) device_fed.insert(name);
  DeviceTensors outputs;
  // Only this program holds a returned output: nobody can see it change, so it is reused.
  auto reusable = [&](const std::string& name) {
    auto kept = p.returned_outputs.find(name);
    return kept != p.returned_outputs.end() && kept->second.use_count() == 1;
  };
  // The outputs this execution allocates, checked together against the device's memory first.
  std::vector<DeviceAllocation> fresh;
  for (const std::string& name : device_outputs)
    if (!output_targets.count(name) && !reusable(name)) {  // a device tensor above one allocation is held in segments
      const uint64_t bytes = storage_buffer_bytes(p.manifest.tensor(name).size_bytes());
      std::vector<uint64_t> starts = even_segments(bytes, p.ctx.max_allocation_bytes);
      for (size_t i = 0; i < starts.size(); ++i)
        fresh.push_back({cat("device output '", name, "'"), (i + 1 < starts.size() ? starts[i + 1] : bytes) - starts[i]});
    }
  std::string misfit = device_memory_misfit(fresh, p.ctx.storage_bytes_in_use, p.ctx.device_heap_bytes,
                                            p.ctx.max_allocation_bytes);
  check(misfit.empty(), "execution does not fit the memory of device '", p.ctx.info.name, "': ", misfit,
        " (release device outputs of earlier executions that are no longer needed)");
  for (const std::string& name : device_outputs) {
    if (auto target = output_targets.find(name); target != output_targets.end()) {
      outputs[name] = target->second;
      continue;
    }
    if (reusable(name)) {
      outputs[name] = p.returned_outputs.at(name);
      continue;
    }
    const TensorDesc& t = p.manifest.tensor(name);
    outputs[name] = std::make_shared<DeviceTensor>(p.context, t.dtype, t.shape);
    ++p.output_allocations;
  }

  // One submission: [device inputs in] + the replayed dispatches + [device outputs out].
  std::vector<VkCommandBuffer> cmds;
  if (!device_inputs.empty() || !outputs.empty())
    vk_check(p.ctx.vk.vkResetCommandPool(p.ctx.device, p.transfer_pool.get(), 0), "vkResetCommandPool");
  if (!device_inputs.empty()) {
    p.record_copy_in(device_inputs);
    cmds.push_back(p.copy_in);
  }
  std::set<std::string> device_kept;
  for (const auto& [name, t] : outputs) device_kept.insert(name);
  cmds.push_back(p.command_buffer(options.profile, options.poison_outputs, device_fed, device_kept));
  if (!outputs.empty()) {
    p.record_copy_out(outputs);
    cmds.push_back(p.copy_out);
  }
  VkFence fence = p.execution_fence.get();
  vk_check(p.ctx.vk.vkResetFences(p.ctx.device, 1, &fence), "vkResetFences");
  VkSubmitInfo submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = uint32_t(cmds.size());
  submit.pCommandBuffers = cmds.data();
  vk_check(p.ctx.vk.vkQueueSubmit(p.ctx.queue, 1, &submit, fence), "vkQueueSubmit");
  ++p.submission_count;
  p.pending = true;
  p.pending_profile = options.profile;
  p.pending_device_inputs = device_inputs;
  p.pending_device_outputs = std::move(outputs);
  p.pending_host_targets = host_targets;
}

bool Program::ready() const {
  const Impl& p = *impl_;
  if (!p.pending) return true;
  VkResult r = p.ctx.vk.vkGetFenceStatus(p.ctx.device, p.execution_fence.get());
  if (r == VK_NOT_READY) return false;
  vk_check(r, "vkGetFenceStatus");
  return true;
}

void Program::Impl::read_profile() {
  const size_t n = manifest.dispatches.size();
  std::vector<uint64_t> ticks(2 * n);
  vk_check(ctx.vk.vkGetQueryPoolResults(ctx.device, timestamps.get(), 0, uint32_t(2 * n), ticks.size() * 8,
                                        ticks.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
           "vkGetQueryPoolResults");
  const uint64_t mask = ctx.timestamp_valid_bits >= 64 ? ~0ull : (1ull << ctx.timestamp_valid_bits) - 1;
  const double period_ns = ctx.caps.properties.limits.timestampPeriod;
  profile.clear();
  for (size_t i = 0; i < n; ++i) {
    const DispatchDesc& d = manifest.dispatches[i];
    uint64_t delta = ((ticks[2 * i + 1] & mask) - (ticks[2 * i] & mask)) & mask;
    DispatchProfile dp;
    dp.name = d.name;
    dp.ms = double(delta) * period_ns / 1e6;
    dp.gflops = dp.ms > 0 ? d.flops / dp.ms / 1e6 : 0;
    dp.gbps = dp.ms > 0 ? d.bytes / dp.ms / 1e6 : 0;
    profile.push_back(dp);
  }
}

ExecutionResults Program::wait() {
  Impl& p = *impl_;
  check(p.pending, "no execution in flight: submit() one first");
  ExecutionResults results;
  results.device = std::move(p.pending_device_outputs);
  p.pending_device_outputs.clear();
  for (const auto& [name, tensor] : results.device) p.returned_outputs[name] = tensor;
  p.pending_device_inputs.clear();  // the queue is idle or done with them once the fence signals
  const std::map<std::string, HostTensorSpan> host_targets = std::move(p.pending_host_targets);
  p.pending_host_targets.clear();
  p.pending = false;
  VkFence fence = p.execution_fence.get();
  VkResult r = p.ctx.vk.vkWaitForFences(p.ctx.device, 1, &fence, VK_TRUE, kSubmitTimeoutNs);
  if (r == VK_TIMEOUT) {
    // Wait for the work anyway so that the buffers it uses are not freed under it.
    p.ctx.vk.vkQueueWaitIdle(p.ctx.queue);
    throw Error(cat("GPU execution timed out after ", kSubmitTimeoutNs / 1000000000ull, " s"));
  }
  vk_check(r, "vkWaitForFences");
  if (p.pending_profile) p.read_profile();

  std::vector<std::string> messages = p.ctx.log.messages();
  check(messages.empty(), messages.empty() ? "" : messages.front());

  // Each host output is read once, from its staging or storage buffer, into the caller's memory
  // or a new tensor.
  auto read = [&](const std::string& name, void* dst, size_t bytes) {
    if (bytes == 0) return;
    auto staging = p.download_staging.find(name);
    if (staging != p.download_staging.end()) {
      staging->second->read(0, dst, bytes);
    } else {
      StorageRange r = resolve_storage(p.manifest, name);
      p.buffer_of(r).read(r.offset, dst, bytes);
    }
  };
  for (const std::string& name : p.manifest.outputs) {
    if (results.device.count(name)) continue;
    const TensorDesc& t = p.manifest.tensor(name);
    if (auto target = host_targets.find(name); target != host_targets.end()) {
      read(name, target->second.data, t.size_bytes());
      continue;
    }
    HostTensor out(t.dtype, t.shape);
    read(name, out.data(), out.size_bytes());
    results.host.emplace(name, std::move(out));
  }
  return results;
}

}  // namespace vkc::rt
