// NumPy .npy reader/writer. The header is a Python dict literal; only the subset NumPy writes
// ({'descr': str, 'fortran_order': bool, 'shape': tuple of ints}) is parsed.
#include "support/npy.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "support/error.h"
#include "support/file_io.h"

namespace vkc {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// NumPy itself refuses headers above 10000 bytes by default; anything near a megabyte is garbage.
constexpr size_t kMaxHeaderBytes = 1 << 20;

struct Descr {
  const char* text;  // as written
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", DType::f32}, {"<f2", DType::f16}, {"<i8", DType::i64},
                             {"<i4", DType::i32}, {"|i1", DType::i8},  {"|u1", DType::u8},
                             {"|b1", DType::boolean}};

// Header text quoted in messages: file bytes may hold newlines or control characters, and an
// error message is one printable line, so anything outside printable ASCII is shown as \xNN.
std::string printable(const std::string& text) {
  const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::optional<DType> parse_descr(const std::string& descr, const std::string& what) {
  check(descr.size() >= 3, what, ": unsupported dtype '", printable(descr), "'");
  const char order = descr[0];
  const std::string kind = descr.substr(1);
  for (const Descr& d : kDescrs) {
    if (kind != d.text + 1) continue;
    // One-byte types have no byte order: NumPy writes '|', but '<', '>' and '=' mean the same.
    if (dtype_size(d.dtype) == 1) return d.dtype;
    check(order != '>', what, ": unsupported dtype '", printable(descr), "' (big-endian)");
    if (order == '<' || order == '=') return d.dtype;  // '=' is native: this code is little-endian only
  }
  throw Error(cat(what, ": unsupported dtype '", printable(descr), "' (supported: <f4, <f2, <i8, <i4, |i1, |u1, |b1)"));
}

// A cursor over the header dict literal.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw Error(cat(what_, ": malformed .npy header: ", why));
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool peek(char c) {
    skip_space();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(cat("expected '", c, "' at byte ", i_));
    ++i_;
  }
  bool at_end() {
    skip_space();
    return i_ == s_.size();
  }
  std::string string_literal() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail(cat("expected a string at byte ", i_));
    char quote = s_[i_++];
    size_t end = s_.find(quote, i_);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail(cat("expected True or False at byte ", i_));
  }
  Shape shape_tuple() {
    expect('(');
    Shape shape;
    while (!peek(')')) {
      skip_space();
      if (i_ < s_.size() && s_[i_] == '-') fail("negative dimension in shape");
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
        fail(cat("expected a dimension at byte ", i_));
      int64_t dim = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        int digit = s_[i_++] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10) throw Error(cat(what_, ": shape dimension overflows 64 bits"));
        dim = dim * 10 + digit;
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      shape.push_back(dim);
      if (peek(',')) ++i_;
      else if (!peek(')')) fail(cat("expected ',' or ')' in shape at byte ", i_));
    }
    ++i_;
    return shape;
  }

 private:
  const std::string& s_;
  const std::string& what_;
  size_t i_ = 0;
};

std::string shape_tuple_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// The numpy name of a dtype, for the `astype` a user should run.
const char* numpy_type(DType t) {
  switch (t) {
    case DType::f32: return "np.float32";
    case DType::f16: return "np.float16";
    case DType::i64: return "np.int64";
    case DType::i32: return "np.int32";
    case DType::i8: return "np.int8";
    case DType::u8: return "np.uint8";
    case DType::boolean: return "np.bool_";
  }
  return "?";
}

// Fortran-order (column-major) element bytes -> C order, element by element; lossless.
std::vector<uint8_t> fortran_to_c_order(const uint8_t* data, const Shape& shape, size_t elem) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  std::vector<uint8_t> out(size_t(numel) * elem);
  std::vector<int64_t> index(shape.size(), 0);  // C-order multi-index of element c
  for (int64_t c = 0; c < numel; ++c) {
    int64_t f = 0, stride = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      f += index[k] * stride;
      stride *= shape[k];
    }
    std::memcpy(out.data() + size_t(c) * elem, data + size_t(f) * elem, elem);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

// float64 -> `want` (f32 or f16). Rounding to the nearer float is what a user expects of a float
// input; a finite value the target cannot hold would turn into inf, which they must decide on.
void narrow_float64(const uint8_t* data, HostTensor& t, const std::string& what) {
  const double largest = t.dtype() == DType::f16 ? 65504.0 : double(std::numeric_limits<float>::max());
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = 0;
    std::memcpy(&v, data + size_t(i) * 8, 8);
    check(!std::isfinite(v) || std::fabs(v) <= largest, what, ": float64 value ", v, " (element ", i,
          ") does not fit ", dtype_name(t.dtype()), " (largest ", largest, "); scale it, or save a.astype(",
          numpy_type(t.dtype()), ") if inf is what you mean");
    t.set_f64(i, v);
  }
}

// `want`: the dtype the caller needs, which lets float64 data be narrowed to it; nullopt refuses
// float64. `notes` (may be null) receives one line per conversion made.
HostTensor parse_npy_impl(const std::vector<uint8_t>& bytes, const std::string& what, std::optional<DType> want,
                          std::vector<std::string>* notes) {
  check(bytes.size() >= kMagicSize && std::memcmp(bytes.data(), kMagic, kMagicSize) == 0, what,
        ": not a .npy file (bad magic)");
  check(bytes.size() >= 10, what, ": truncated .npy header");
  const uint8_t major = bytes[6], minor = bytes[7];
  check((major == 1 || major == 2 || major == 3) && minor == 0, what, ": unsupported .npy format version ",
        int(major), ".", int(minor));
  size_t header_len = 0, prefix = 0;
  if (major == 1) {
    header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8;
    prefix = 10;
  } else {
    check(bytes.size() >= 12, what, ": truncated .npy header");
    header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
    prefix = 12;
  }
  check(header_len <= kMaxHeaderBytes, what, ": .npy header length ", header_len, " is implausible (limit ",
        kMaxHeaderBytes, ")");
  check(bytes.size() - prefix >= header_len, what, ": truncated .npy header (", header_len, " bytes declared, ",
        bytes.size() - prefix, " present)");
  // Version 3.0 headers are UTF-8; every key and value we accept is ASCII, so bytes suffice.
  const std::string header(bytes.begin() + long(prefix), bytes.begin() + long(prefix + header_len));

  HeaderParser p(header, what);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  p.expect('{');
  while (!p.peek('}')) {
    std::string key = p.string_literal();
    p.expect(':');
    if (key == "descr") {
      if (p.peek('[')) throw Error(cat(what, ": structured dtypes are not supported"));
      descr = p.string_literal();
    } else if (key == "fortran_order") {
      fortran = p.boolean();
    } else if (key == "shape") {
      shape = p.shape_tuple();
    } else {
      p.fail(cat("unexpected key '", printable(key), "'"));
    }
    if (p.peek(',')) p.expect(',');
    else if (!p.peek('}')) p.fail("expected ',' or '}'");
  }
  p.expect('}');
  if (!p.at_end()) p.fail("text after the dict");
  check(descr.has_value(), what, ": .npy header lacks 'descr'");
  check(fortran.has_value(), what, ": .npy header lacks 'fortran_order'");
  check(shape.has_value(), what, ": .npy header lacks 'shape'");
  // NumPy's default float type (np.random.rand, np.array of Python floats) has no DType of ours.
  const bool float64 = want && (*descr == "<f8" || *descr == "=f8");
  if (float64)
    check(is_float(*want), what, ": float64 data for a ", dtype_name(*want),
          " input: the conversion would silently drop fractions; save a.astype(", numpy_type(*want),
          ") if that is what you mean");
  const DType dtype = float64 ? *want : *parse_descr(*descr, what);

  int64_t numel = 0;
  try {
    numel = shape_numel(*shape);
  } catch (const Error&) {
    throw Error(cat(what, ": shape ", shape_tuple_str(*shape), " overflows"));
  }
  const uint64_t elem = float64 ? 8 : dtype_size(dtype);
  check(uint64_t(numel) <= std::numeric_limits<uint64_t>::max() / elem, what, ": shape ",
        shape_tuple_str(*shape), " overflows");
  const uint64_t data_bytes = uint64_t(numel) * elem;
  const uint64_t found = bytes.size() - prefix - header_len;
  check(found >= data_bytes, what, ": truncated: header says ", data_bytes, " bytes of data, found ", found);
  check(found == data_bytes, what, ": header says ", data_bytes, " bytes of data, found ", found,
        " (trailing bytes)");

  const uint8_t* data = bytes.data() + prefix + header_len;
  std::vector<uint8_t> c_order;
  if (*fortran && shape->size() > 1) {
    c_order = fortran_to_c_order(data, *shape, size_t(elem));
    data = c_order.data();
  }
  if (*fortran && notes) notes->push_back(cat(what, ": Fortran-order array reordered to C order"));
  HostTensor t(dtype, *shape);
  if (float64) {
    narrow_float64(data, t, what);
    if (notes) notes->push_back(cat(what, ": float64 converted to ", dtype_name(dtype)));
  } else if (data_bytes) {
    std::memcpy(t.data(), data, data_bytes);
  }
  return t;
}

}  // namespace

HostTensor parse_npy(const std::vector<uint8_t>& bytes, const std::string& what) {
  return parse_npy_impl(bytes, what, std::nullopt, nullptr);
}

HostTensor parse_npy_for(const std::vector<uint8_t>& bytes, const std::string& what, DType want,
                         std::vector<std::string>& notes) {
  return parse_npy_impl(bytes, what, want, &notes);
}

HostTensor read_npy_for(const std::string& path, DType want, std::vector<std::string>& notes) {
  return parse_npy_for(read_file(path), path, want, notes);
}

HostTensor read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

std::vector<uint8_t> serialize_npy(const HostTensor& tensor) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.dtype == tensor.dtype()) descr = d.text;
  check(descr != nullptr, "write_npy: no .npy dtype for ", dtype_name(tensor.dtype()));
  std::string header = cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ",
                           shape_tuple_str(tensor.shape()), ", }");
  // Pad with spaces and end with '\n' so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  check(header.size() <= 0xffff, "write_npy: header too long for .npy version 1.0");
  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(uint8_t(header.size() & 0xff));
  out.push_back(uint8_t(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), tensor.bytes().begin(), tensor.bytes().begin() + long(tensor.size_bytes()));
  return out;
}

void write_npy(const std::string& path, const HostTensor& tensor) {
  std::vector<uint8_t> bytes = serialize_npy(tensor);
  write_file(path, bytes.data(), bytes.size());
}

}  // namespace vkc
