#include "codegen/spirv_cache.h"

#include <nlohmann/json.hpp>

namespace vkc::codegen {

SpirvCache& SpirvCache::process() {
  static SpirvCache cache;
  return cache;
}

std::string SpirvCache::key(const std::string& glsl, const TargetLimits& target, bool optimize) {
  // Every limit and feature may change what glslang and spirv-opt produce, so all of them are in.
  nlohmann::json t = target;
  return t.dump() + (optimize ? "\nO\n" : "\n-\n") + glsl;
}

std::optional<std::vector<uint32_t>> SpirvCache::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

void SpirvCache::insert(const std::string& key, std::vector<uint32_t> words) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_[key] = std::move(words);
}

void SpirvCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  hits_ = misses_ = 0;
}

size_t SpirvCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}
size_t SpirvCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}
size_t SpirvCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace vkc::codegen
