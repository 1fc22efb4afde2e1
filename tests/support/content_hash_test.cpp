// content_digest_hex (support/content_hash.h), the module cache key's digest of large tensors:
// the same bytes give the same digest wherever they lie in memory, and any one changed byte, bit
// or length gives another.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "support/content_hash.h"

namespace vkc {
namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 131 + 7);
  return v;
}

TEST(ContentDigest, SameBytesSameDigestAtAnyAlignment) {
  const std::vector<uint8_t> v = pattern(1000);
  const std::string d = content_digest_hex(v.data(), v.size());
  EXPECT_EQ(d.size(), 32u);
  EXPECT_EQ(d.find_first_not_of("0123456789abcdef"), std::string::npos) << d;
  for (size_t offset = 1; offset < 8; ++offset) {
    std::vector<uint8_t> shifted(v.size() + offset);
    std::memcpy(shifted.data() + offset, v.data(), v.size());
    EXPECT_EQ(content_digest_hex(shifted.data() + offset, v.size()), d) << offset;
  }
}

TEST(ContentDigest, EveryChangedByteBitAndLengthDiffers) {
  // Sizes around the 32-byte step: an empty input, tails of every length, whole steps.
  for (size_t n : {size_t(0), size_t(1), size_t(31), size_t(32), size_t(33), size_t(64), size_t(100), size_t(257)}) {
    SCOPED_TRACE(n);
    std::vector<uint8_t> v = pattern(n);
    std::set<std::string> seen{content_digest_hex(v.data(), v.size())};
    for (size_t i = 0; i < n; ++i)
      for (int bit : {0, 3, 7}) {
        v[i] ^= uint8_t(1u << bit);
        EXPECT_TRUE(seen.insert(content_digest_hex(v.data(), v.size())).second) << "byte " << i << " bit " << bit;
        v[i] ^= uint8_t(1u << bit);
      }
  }
  // Zeros of different lengths (the tail is zero-padded: the length must tell them apart).
  std::vector<uint8_t> zeros(128, 0);
  std::set<std::string> lengths;
  for (size_t n = 0; n <= 128; ++n) EXPECT_TRUE(lengths.insert(content_digest_hex(zeros.data(), n)).second) << n;
  // Two words swapped between lanes, and two equal halves swapped.
  std::vector<uint8_t> a = pattern(64), b = a;
  std::memcpy(b.data(), a.data() + 8, 8);
  std::memcpy(b.data() + 8, a.data(), 8);
  EXPECT_NE(content_digest_hex(a.data(), 64), content_digest_hex(b.data(), 64));
  std::memcpy(b.data(), a.data() + 32, 32);
  std::memcpy(b.data() + 32, a.data(), 32);
  EXPECT_NE(content_digest_hex(a.data(), 64), content_digest_hex(b.data(), 64));
}

}  // namespace
}  // namespace vkc
