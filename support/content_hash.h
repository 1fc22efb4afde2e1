// Content hashes shared by the layers that key or check bytes. content_hash (FNV-1a, 64-bit): the
// module cache key (constants digested in the printed graph, ir/text_format.h),
// the pipeline-cache file names, the in-process SPIR-V cache and version-1 .vkcm files.
// content_digest (four lanes, 128-bit): large tensors in the cache key and the .vkcm checksum
// since version 2. Not cryptographic: it detects
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

// A 128-bit digest of `size` bytes, for telling large tensors apart in the module cache key
// (ir::print_graph_digest) and checking .vkcm files. It reads 32 bytes per step in four
// independent lanes, where content_hash's byte-serial chain managed about 1 GB/s: two
// content_hash passes over ViT-B/16's 350 MB of weights were 0.7 s of every cache lookup.
struct ContentDigest {
  uint64_t lo = 0, hi = 0;
};
ContentDigest content_digest(const void* data, size_t size);
// The digest as 32 hex digits.
std::string content_digest_hex(const void* data, size_t size);

}  // namespace vkc
