// Broken .npy files: truncated, absurd shapes, wrong magic, unsupported layouts. Each is refused by
// parse_npy with one line naming the input, before any allocation the file's size cannot back.
#include <gtest/gtest.h>

#include <cstring>

#include "hostile/hostile_util.h"
#include "support/npy.h"

namespace vkc::hostile {
namespace {

// A version 1.0 .npy file with the given header dict and payload (header padded to 64 bytes).
std::vector<uint8_t> npy(const std::string& dict, const std::vector<uint8_t>& payload = {}) {
  std::string header = dict;
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  // Sized up front and filled with memcpy: GCC 12 -O3 warns (-Warray-bounds, a false positive)
  // on vector::insert from string iterators here.
  const uint8_t prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(header.size() & 0xff),
                              uint8_t(header.size() >> 8)};
  std::vector<uint8_t> out(sizeof(prefix) + header.size() + payload.size());
  std::memcpy(out.data(), prefix, sizeof(prefix));
  std::memcpy(out.data() + sizeof(prefix), header.data(), header.size());
  if (!payload.empty()) std::memcpy(out.data() + sizeof(prefix) + header.size(), payload.data(), payload.size());
  return out;
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  std::string message = error_of([&] { parse_npy(bytes, "hostile.npy"); });
  EXPECT_EQ(message.rfind("hostile.npy: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(HostileNpy, NotANumpyFile) {
  EXPECT_NE(parse_error({'n', 'o', 't', ' ', 'n', 'p', 'y'}).find("hostile.npy"), std::string::npos);
  EXPECT_NE(parse_error({}), "(no error)");
}

TEST(HostileNpy, EveryPrefixOfAValidFileIsRefused) {
  HostTensor t(DType::f32, {3, 5});
  std::vector<uint8_t> bytes = serialize_npy(t);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + long(n));
    EXPECT_NE(parse_error(prefix), "(no error)") << n << " bytes";
  }
}

TEST(HostileNpy, AbsurdShapeIsRefusedWithoutAllocating) {
  // 2^60 f32 elements promised by a 128-byte file: must fail on the size check, not in new[].
  std::string m = parse_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1152921504606846976,), }"));
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
  m = parse_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"));
  EXPECT_NE(m.find("overflows"), std::string::npos) << m;
  m = parse_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"));
  EXPECT_NE(m.find("overflows"), std::string::npos) << m;
}

TEST(HostileNpy, ZeroDimWithHugeOtherDimIsEmpty) {
  // numel is 0 whatever the other dims are; no overflow may be reported from a product with 0.
  HostTensor t = parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904), }"),
                           "hostile.npy");
  EXPECT_EQ(t.numel(), 0);
}

TEST(HostileNpy, HeaderLengthBeyondTheFile) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0x7f, '{'};
  EXPECT_NE(parse_error(bytes), "(no error)");
}

TEST(HostileNpy, UnsupportedLayoutsAndTypes) {
  // Fortran order is read into C order (tests/support/npy_test.cpp), but not past its data.
  EXPECT_NE(parse_error(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", {0, 0, 0, 0})).find("truncated"),
            std::string::npos);
  EXPECT_NE(parse_error(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0})), "(no error)");
  EXPECT_NE(parse_error(npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0, 0, 0, 0, 0})),
            "(no error)");
  EXPECT_NE(parse_error(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0})),
            "(no error)");
  EXPECT_NE(parse_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }")), "(no error)");
  EXPECT_NE(parse_error(npy("{'descr': '<f4', 'shape': (1,), }", {0, 0, 0, 0})).find("fortran_order"),
            std::string::npos);
}

TEST(HostileNpy, TrailingBytesAreRefused) {
  std::vector<uint8_t> bytes = serialize_npy(HostTensor(DType::i32, {2}));
  bytes.push_back(0);
  EXPECT_NE(parse_error(bytes), "(no error)");
}

// Found by fuzz_npy: a header key holding newlines was quoted verbatim, giving a multi-line error.
TEST(HostileNpy, ControlCharactersInTheHeaderAreEscaped) {
  std::string m = parse_error(read_bytes(data_path("npy_newline_in_key.npy")));
  EXPECT_NE(m.find("\\x0a"), std::string::npos) << m;
  m = parse_error(npy("{'descr': '<f\x01\n', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}));
  EXPECT_NE(m.find("unsupported dtype '<f\\x01\\x0a'"), std::string::npos) << m;
}

TEST(HostileNpy, FilesFromDisk) {
  for (const char* f : {"truncated_data.npy", "bad_magic.npy", "npy_newline_in_key.npy"}) {
    std::string m = error_of([&] { read_npy(data_path(f)); });
    EXPECT_NE(m.find(f), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace vkc::hostile
