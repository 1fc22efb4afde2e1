// .npy reading and writing: round trips for every dtype and the exact errors for malformed files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include "common/test_util.h"
#include "support/error.h"
#include "support/npy.h"

namespace vkc {
namespace {

using test::error_of;

// A .npy file with the given version, header text (padded as NumPy does) and `data_bytes` bytes.
std::vector<uint8_t> npy_bytes(const std::string& dict, size_t data_bytes, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(uint8_t(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) out.push_back(uint8_t(i * 7));
  return out;
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  return error_of([&] { parse_npy(bytes, "x.npy"); });
}

TEST(Npy, RoundTripEveryDtype) {
  std::mt19937 rng(7);
  const std::vector<Shape> shapes = {{}, {0}, {3}, {2, 3}, {2, 1, 4}, {1, 2, 3, 4, 5}};
  for (DType dt : kAllDTypes) {
    for (const Shape& shape : shapes) {
      HostTensor t = test::random_tensor(dt, shape, rng, -100, 100);
      std::vector<uint8_t> bytes = serialize_npy(t);
      EXPECT_EQ((bytes.size() - t.size_bytes()) % 64, 0u) << "data must start 64-byte aligned";
      EXPECT_EQ(bytes[6], 1);  // written as version 1.0
      HostTensor back = parse_npy(bytes, "mem");
      EXPECT_TRUE(back == t) << dtype_name(dt) << " " << shape_str(shape);
    }
  }
}

TEST(Npy, FileRoundTrip) {
  std::string path = ::testing::TempDir() + "/vkc_npy_round_trip.npy";
  HostTensor t = make_f32({2, 2}, {1.5f, -2.0f, 0.0f, 3.25f});
  write_npy(path, t);
  EXPECT_TRUE(read_npy(path) == t);
  std::remove(path.c_str());
  EXPECT_EQ(error_of([&] { read_npy(path); }).rfind(path + ": cannot open", 0), 0u);
}

TEST(Npy, WritesTheHeaderNumPyWrites) {
  std::vector<uint8_t> bytes = serialize_npy(HostTensor(DType::i64, {3}));
  ASSERT_EQ(bytes.size(), 128u + 24u);  // 10-byte prefix + 57-byte dict, padded to 128
  std::string header(bytes.begin() + 10, bytes.begin() + 128);
  EXPECT_EQ(header.substr(0, 57), "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(header.find_first_not_of(" ", 57), header.size() - 1);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes[8] | bytes[9] << 8, 118);
  std::vector<uint8_t> scalar = serialize_npy(HostTensor(DType::boolean, {}));
  EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, ReadsVersions2And3AndKeyOrders) {
  for (int major : {1, 2, 3}) {
    HostTensor t = parse_npy(npy_bytes("{'shape': (2, 2), 'fortran_order': False, 'descr': '<i4'}", 16, major), "m");
    EXPECT_EQ(t.dtype(), DType::i32);
    EXPECT_EQ(t.shape(), (Shape{2, 2}));
    EXPECT_EQ(t.data()[1], 7);
  }
  HostTensor s = parse_npy(npy_bytes("{\"descr\":\"<f2\",\"fortran_order\":False,\"shape\":()}", 2), "m");
  EXPECT_EQ(s.dtype(), DType::f16);
  EXPECT_EQ(s.rank(), 0);
}

TEST(Npy, AcceptsEquivalentByteOrderMarks) {
  EXPECT_EQ(parse_npy(npy_bytes("{'descr': '<u1', 'fortran_order': False, 'shape': (4,), }", 4), "m").dtype(), DType::u8);
  EXPECT_EQ(parse_npy(npy_bytes("{'descr': '<b1', 'fortran_order': False, 'shape': (4,), }", 4), "m").dtype(), DType::boolean);
  EXPECT_EQ(parse_npy(npy_bytes("{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }", 4), "m").dtype(), DType::f32);
}

TEST(Npy, RejectsUnsupportedDtypes) {
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", 12)),
            "x.npy: unsupported dtype '>f4' (big-endian)");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24)),
            "x.npy: unsupported dtype '<f8' (supported: <f4, <f2, <i8, <i4, |i1, |u1, |b1)");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", 24)),
            "x.npy: unsupported dtype '|O'");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", 12)),
            "x.npy: structured dtypes are not supported");
}

// A .npy file holding `values` (as type T) under `dict`, for the conversions below.
template <typename T>
std::vector<uint8_t> npy_of(const std::string& dict, const std::vector<T>& values) {
  std::vector<uint8_t> out = npy_bytes(dict, 0);
  const auto* p = reinterpret_cast<const uint8_t*>(values.data());
  out.insert(out.end(), p, p + values.size() * sizeof(T));
  return out;
}

// Issue #24 item 9: `a.T` of a C-order array is saved Fortran-order; it used to be refused. It is
// read into C order (lossless) and, when asked for, noted.
TEST(Npy, ReadsFortranOrderIntoCOrder) {
  // [[0, 1, 2], [3, 4, 5]] stored column by column.
  std::vector<uint8_t> bytes = npy_of<float>("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                             {0, 3, 1, 4, 2, 5});
  HostTensor t = parse_npy(bytes, "x.npy");
  ASSERT_EQ(t.shape(), (Shape{2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(t.get_f64(i), double(i)) << i;
  std::vector<std::string> notes;
  HostTensor u = parse_npy_for(bytes, "x.npy", DType::f32, notes);
  EXPECT_EQ(std::memcmp(u.data(), t.data(), 24), 0);
  EXPECT_EQ(notes, std::vector<std::string>{"x.npy: Fortran-order array reordered to C order"});
  // Rank 3, int32: the first index varies fastest in the file.
  std::vector<int32_t> f(24);
  for (int64_t i = 0, c = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k, ++c) f[size_t(i + 2 * j + 6 * k)] = int32_t(c);
  t = parse_npy(npy_of("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", f), "x.npy");
  for (int64_t c = 0; c < 24; ++c) EXPECT_EQ(t.get_f64(c), double(c)) << c;
}

// np.random.rand gives float64: narrowed to the input's float type, with a note.
TEST(Npy, NarrowsFloat64ToAFloatInput) {
  std::vector<uint8_t> bytes = npy_of<double>("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                              {0.1, -2.5, 1e-3});
  std::vector<std::string> notes;
  HostTensor t = parse_npy_for(bytes, "x.npy", DType::f32, notes);
  ASSERT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.get_f64(0), double(0.1f));
  EXPECT_EQ(t.get_f64(1), -2.5);
  EXPECT_EQ(notes, std::vector<std::string>{"x.npy: float64 converted to f32"});
  notes.clear();
  t = parse_npy_for(bytes, "x.npy", DType::f16, notes);
  EXPECT_EQ(t.dtype(), DType::f16);
  EXPECT_EQ(t.get_f64(1), -2.5);
  // Without a dtype to convert to (read_npy), float64 stays refused.
  EXPECT_EQ(parse_error(bytes), "x.npy: unsupported dtype '<f8' (supported: <f4, <f2, <i8, <i4, |i1, |u1, |b1)");
}

// Where narrowing would lose what a user must know about, the exact astype is named instead.
TEST(Npy, RefusesFloat64ConversionsThatLoseInformation) {
  std::vector<std::string> notes;
  auto error_for = [&](const std::vector<double>& values, DType want) {
    std::vector<uint8_t> bytes = npy_of<double>(
        cat("{'descr': '<f8', 'fortran_order': False, 'shape': (", values.size(), ",), }"), values);
    return error_of([&] { parse_npy_for(bytes, "x.npy", want, notes); });
  };
  EXPECT_EQ(error_for({1, 2}, DType::i32),
            "x.npy: float64 data for a i32 input: the conversion would silently drop fractions; save "
            "a.astype(np.int32) if that is what you mean");
  EXPECT_EQ(error_for({1, 70000}, DType::f16),
            "x.npy: float64 value 70000 (element 1) does not fit f16 (largest 65504); scale it, or save "
            "a.astype(np.float16) if inf is what you mean");
  EXPECT_NE(error_for({1e300}, DType::f32).find("does not fit f32"), std::string::npos);
  // inf and nan are carried over as they are: nothing is lost.
  std::vector<uint8_t> bytes = npy_of<double>("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                                              {-INFINITY});
  EXPECT_EQ(parse_npy_for(bytes, "x.npy", DType::f16, notes).get_f64(0), -INFINITY);
}

TEST(Npy, RejectsWrongDataSizes) {
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 12)),
            "x.npy: truncated: header says 24 bytes of data, found 12");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28)),
            "x.npy: header says 24 bytes of data, found 28 (trailing bytes)");
}

TEST(Npy, RejectsBadMagicVersionsAndHeaderSizes) {
  std::vector<uint8_t> good = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
  std::vector<uint8_t> bad = good;
  bad[1] = 'X';
  EXPECT_EQ(parse_error(bad), "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(parse_error({}), "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(parse_error(std::vector<uint8_t>(good.begin(), good.begin() + 8)), "x.npy: truncated .npy header");
  bad = good;
  bad[6] = 4;
  EXPECT_EQ(parse_error(bad), "x.npy: unsupported .npy format version 4.0");
  bad = good;
  bad[8] = 0xff;
  bad[9] = 0xff;
  EXPECT_EQ(parse_error(bad), "x.npy: truncated .npy header (65535 bytes declared, 122 present)");
  std::vector<uint8_t> v2 = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4, 2);
  v2[11] = 0x40;  // 1 GiB header
  EXPECT_EQ(parse_error(v2), "x.npy: .npy header length 1073741940 is implausible (limit 1048576)");
}

TEST(Npy, RejectsMalformedHeaders) {
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'shape': (1,), }", 4)), "x.npy: .npy header lacks 'fortran_order'");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False}", 4)), "x.npy: .npy header lacks 'shape'");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", 4)),
            "x.npy: malformed .npy header: expected True or False at byte 34");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4)),
            "x.npy: malformed .npy header: negative dimension in shape");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4)),
            "x.npy: malformed .npy header: unexpected key 'x'");
  EXPECT_EQ(parse_error(npy_bytes("['descr']", 4)), "x.npy: malformed .npy header: expected '{' at byte 0");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", 4)),
            "x.npy: malformed .npy header: expected ',' or ')' in shape at byte 53");
}

TEST(Npy, RejectsOverflowingShapes) {
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0)),
            "x.npy: shape (4294967296, 4294967296) overflows");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904,), }", 0)),
            "x.npy: shape (4611686018427387904,) overflows");
  EXPECT_EQ(parse_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0)),
            "x.npy: shape dimension overflows 64 bits");
}

}  // namespace
}  // namespace vkc
