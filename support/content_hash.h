// A 64-bit content hash (FNV-1a) shared by the layers that key or check bytes: the .vkcm checksum,
// the module cache key (constants digested in the printed graph, ir/text_format.h),
// the pipeline-cache file names and the in-process SPIR-V cache. Not cryptographic: it detects
// corruption and tells apart different inputs, it does not resist deliberate collisions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace vkc {

inline constexpr uint64_t kContentHashSeed = 0xcbf29ce484222325ull;

// Continues a hash over `size` bytes; start with kContentHashSeed.
uint64_t content_hash(const void* data, size_t size, uint64_t seed = kContentHashSeed);
// 16 lowercase hex digits, for file names.
std::string hash_hex(uint64_t hash);

}  // namespace vkc
