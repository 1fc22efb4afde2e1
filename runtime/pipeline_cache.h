// A VkPipelineCache persisted on disk, so that a second process loading the same module on the
// same device and driver skips the driver's shader compilation (the bulk of start-up time on GPU
// drivers).
//
// One file per (device, module): <dir>/<device key>-<module key>.vkpc, <dir> being
// <cache root>/pipelines by default (module/cache_dir.h). The device key hashes the vendor id,
// device id, driver version and pipelineCacheUUID; the module key hashes vkc's version and every
// dispatch's SPIR-V, entry point and specialization constants. The file is our header (magic,
// payload hash, payload size) followed by the driver's cache data. A file that is corrupted,
// truncated, or written by another device or driver is ignored, never handed to the driver.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "module/manifest.h"
#include "runtime/context_internal.h"
#include "runtime/vk_util.h"

namespace vkc::rt {

// The device and driver identity every driver-dependent cache entry is keyed by: vendor id,
// device id, driver version and pipelineCacheUUID (the module cache uses it too).
uint64_t device_cache_key(const Context::Impl& ctx);

// What the pipelines of `module` depend on besides the device.
uint64_t module_pipeline_key(const ModuleImage& module);

class PipelineCache {
 public:
  // Opens <dir>/<key>.vkpc when valid for this device, else starts empty. `dir` is created on
  // save(); an empty `dir` means an in-memory cache only.
  PipelineCache(Context::Impl& ctx, const std::string& dir, uint64_t module_key);

  VkPipelineCache handle() const { return cache_.get(); }
  const std::string& path() const { return path_; }
  // True when a valid file was found and handed to the driver.
  bool loaded_from_disk() const { return loaded_; }
  // Why a file that existed was not used ("" when none was rejected), for diagnostics.
  const std::string& rejected_reason() const { return rejected_; }

  // Writes the driver's data back when it differs from what was loaded. File-system errors are
  // ignored: the cache only saves time.
  void save();

 private:
  Context::Impl& ctx_;
  std::string dir_, path_, rejected_;
  bool loaded_ = false;
  std::vector<uint8_t> loaded_data_;
  Unique<VkPipelineCache> cache_;
};

}  // namespace vkc::rt
