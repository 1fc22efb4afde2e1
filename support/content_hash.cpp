#include "support/content_hash.h"

#include <cstdio>
#include <cstring>

namespace vkc {

uint64_t content_hash(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

constexpr uint64_t kLaneMul = 0x9fb21c651e98df25ull, kLaneAdd = 0xd6e8feb86659fd93ull;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Every input bit reaches every output bit (multiply, fold the high half down, twice).
uint64_t avalanche(uint64_t x) {
  x ^= x >> 32;
  x *= kLaneMul;
  x ^= x >> 29;
  x *= kLaneAdd;
  x ^= x >> 32;
  return x;
}

uint64_t load64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

}  // namespace

ContentDigest content_digest(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  // Four lanes, each a chain of (lane + word * odd constant), rotated, times another: a word
  // changes its lane's state bijectively, so two inputs that differ in one word always differ there.
  uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int l = 0; l < 4; ++l) lane[l] = rotl(lane[l] + load64(p + i + 8 * l) * kLaneMul, 31) * kLaneAdd;
  uint8_t tail[32] = {};
  // An empty input may come as a null pointer, which memcpy must not see even for zero bytes.
  if (size > i) std::memcpy(tail, p + i, size - i);
  for (int l = 0; l < 4; ++l) lane[l] = rotl(lane[l] + load64(tail + 8 * l) * kLaneMul, 31) * kLaneAdd;
  const uint64_t n = uint64_t(size);
  const uint64_t a = avalanche(lane[0] ^ rotl(lane[1], 17) ^ rotl(lane[2], 34) ^ rotl(lane[3], 51) ^ n);
  const uint64_t b = avalanche(lane[3] ^ rotl(lane[2], 13) ^ rotl(lane[1], 29) ^ rotl(lane[0], 43) ^ (n * kLaneMul));
  return {a, b};
}

std::string content_digest_hex(const void* data, size_t size) {
  const ContentDigest d = content_digest(data, size);
  return hash_hex(d.lo) + hash_hex(d.hi);
}

std::string hash_hex(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace vkc
