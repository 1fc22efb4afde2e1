#include "runtime/pipeline_cache.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "module/cache_dir.h"
#include "support/content_hash.h"
#include "support/error.h"
#include "support/version.h"

namespace vkc::rt {

namespace {

constexpr char kMagic[8] = {'V', 'K', 'C', 'P', 'C', 'A', 'C', '1'};
constexpr size_t kHeaderBytes = 24;  // magic, u64 payload hash, u64 payload size
// VkPipelineCacheHeaderVersionOne: headerSize, headerVersion, vendorID, deviceID, UUID.
constexpr size_t kVulkanHeaderBytes = 16 + VK_UUID_SIZE;

uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Why the payload would not suit this device ("" when it does). Drivers validate the header too,
// but some crash on garbage after it, hence our own payload hash as well.
std::string payload_problem(const std::vector<uint8_t>& file, const VkPhysicalDeviceProperties& p) {
  if (file.size() < kHeaderBytes || std::memcmp(file.data(), kMagic, 8) != 0) return "bad magic";
  const uint64_t size = read_u64(file.data() + 16);
  if (size != file.size() - kHeaderBytes) return "truncated";
  if (read_u64(file.data() + 8) != content_hash(file.data() + kHeaderBytes, size)) return "checksum mismatch";
  if (size < kVulkanHeaderBytes) return "no Vulkan cache header";
  const uint8_t* v = file.data() + kHeaderBytes;
  if (read_u32(v) < kVulkanHeaderBytes || read_u32(v + 4) != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
    return "unknown Vulkan cache header";
  if (read_u32(v + 8) != p.vendorID || read_u32(v + 12) != p.deviceID ||
      std::memcmp(v + 16, p.pipelineCacheUUID, VK_UUID_SIZE) != 0)
    return "written by another device or driver";
  return "";
}

}  // namespace

uint64_t device_cache_key(const Context::Impl& ctx) {
  const VkPhysicalDeviceProperties& p = ctx.caps.properties;
  uint64_t key = content_hash(&p.vendorID, 4);
  key = content_hash(&p.deviceID, 4, key);
  key = content_hash(&p.driverVersion, 4, key);
  return content_hash(p.pipelineCacheUUID, VK_UUID_SIZE, key);
}

uint64_t module_pipeline_key(const ModuleImage& module) {
  // The driver keys its own entries by SPIR-V; vkc's version is in the key as well so that an
  // upgrade starts from fresh files, as every vkc cache does (module/cache_dir.h).
  const std::string version = vkc_version();
  uint64_t h = content_hash(version.data(), version.size() + 1);
  for (const DispatchDesc& d : module.manifest.dispatches) {
    auto it = module.spirv.find(d.spv);
    if (it != module.spirv.end()) h = content_hash(it->second.data(), it->second.size() * 4, h);
    h = content_hash(d.entry_point.data(), d.entry_point.size() + 1, h);
    for (const SpecConstant& s : d.spec_constants) {
      h = content_hash(&s.id, 4, h);
      h = content_hash(&s.value, 4, h);
    }
  }
  return h;
}

PipelineCache::PipelineCache(Context::Impl& ctx, const std::string& dir, uint64_t module_key)
    : ctx_(ctx), dir_(dir) {
  const VkPhysicalDeviceProperties& p = ctx.caps.properties;
  const uint64_t device_key = device_cache_key(ctx);

  if (!dir_.empty()) {
    path_ = dir_ + "/" + hash_hex(device_key) + "-" + hash_hex(module_key) + ".vkpc";
    std::ifstream in(path_, std::ios::binary);
    if (in) {
      std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      rejected_ = payload_problem(file, p);
      if (rejected_.empty()) {
        loaded_data_.assign(file.begin() + kHeaderBytes, file.end());
        loaded_ = true;
      }
    }
  }
  VkPipelineCacheCreateInfo info = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  info.initialDataSize = loaded_data_.size();
  info.pInitialData = loaded_data_.empty() ? nullptr : loaded_data_.data();
  VkPipelineCache cache = VK_NULL_HANDLE;
  vk_check(ctx.vk.vkCreatePipelineCache(ctx.device, &info, nullptr, &cache), "vkCreatePipelineCache");
  Context::Impl* c = &ctx;
  cache_ = Unique<VkPipelineCache>(cache, [c](VkPipelineCache h) { c->vk.vkDestroyPipelineCache(c->device, h, nullptr); });
}

void PipelineCache::save() {
  if (path_.empty()) return;
  size_t size = 0;
  vk_check(ctx_.vk.vkGetPipelineCacheData(ctx_.device, cache_.get(), &size, nullptr), "vkGetPipelineCacheData");
  std::vector<uint8_t> data(size);
  // VK_INCOMPLETE (the cache grew in between) is not an error; vk_check lets it through.
  vk_check(ctx_.vk.vkGetPipelineCacheData(ctx_.device, cache_.get(), &size, data.data()), "vkGetPipelineCacheData");
  data.resize(size);
  if (data.empty() || data == loaded_data_) return;

  std::vector<uint8_t> file(kHeaderBytes);
  std::memcpy(file.data(), kMagic, 8);
  const uint64_t hash = content_hash(data.data(), data.size()), n = data.size();
  std::memcpy(file.data() + 8, &hash, 8);
  std::memcpy(file.data() + 16, &n, 8);
  file.insert(file.end(), data.begin(), data.end());

  // Write then rename, so that a concurrent reader sees the old file or the new one, never half.
  if (write_cache_file(path_, file.data(), file.size())) loaded_data_ = std::move(data);
}

}  // namespace vkc::rt
