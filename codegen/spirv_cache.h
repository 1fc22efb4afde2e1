// An in-process cache of compiled SPIR-V: identical kernels (same GLSL, same target, same
// optimization setting) are compiled once per process. Models repeat kernels (every block of a
// ResNet emits the same conv and elementwise GLSL), and glslang + spirv-opt dominate compile time,
// so a second compile of the same model, or of a model sharing kernels, starts fast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "module/target_limits.h"

namespace vkc::codegen {

class SpirvCache {
 public:
  // The cache every compile in this process shares. Thread-safe.
  static SpirvCache& process();

  // Everything the words depend on, spelled out (not hashed) so that a hit is always exact.
  static std::string key(const std::string& glsl, const TargetLimits& target, bool optimize);

  std::optional<std::vector<uint32_t>> find(const std::string& key);
  void insert(const std::string& key, std::vector<uint32_t> words);
  void clear();

  size_t hits() const;
  size_t misses() const;
  size_t size() const;

 private:
  // Bounds memory in long-running processes that compile many different models.
  static constexpr size_t kMaxEntries = 4096;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<uint32_t>> entries_;
  size_t hits_ = 0, misses_ = 0;
};

}  // namespace vkc::codegen
