#include "onnx/tensor_proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "support/error.h"

namespace vkc::onnx {

namespace fs = std::filesystem;
using TP = ::onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t t) {
  switch (t) {
    case TP::FLOAT: return DType::f32;
    case TP::FLOAT16: return DType::f16;
    case TP::INT64: return DType::i64;
    case TP::INT32: return DType::i32;
    case TP::INT8: return DType::i8;
    case TP::UINT8: return DType::u8;
    case TP::BOOL: return DType::boolean;
    default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int32_t t) {
  if (TP::DataType_IsValid(t)) {
    std::string n = TP::DataType_Name(TP::DataType(t));
    for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
    return n;
  }
  return cat("data type ", t);
}

int32_t onnx_dtype_of(DType d) {
  switch (d) {
    case DType::f32: return TP::FLOAT;
    case DType::f16: return TP::FLOAT16;
    case DType::i64: return TP::INT64;
    case DType::i32: return TP::INT32;
    case DType::i8: return TP::INT8;
    case DType::u8: return TP::UINT8;
    case DType::boolean: return TP::BOOL;
  }
  return TP::UNDEFINED;
}

namespace {

struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
};

int64_t parse_nonnegative(const std::string& text, const std::string& what) {
  int64_t v = 0;
  check(!text.empty() && text.size() <= 18, what, ": bad number '", text, "'");
  for (char c : text) {
    check(c >= '0' && c <= '9', what, ": bad number '", text, "'");
    v = v * 10 + (c - '0');
  }
  return v;
}

ExternalRef external_ref(const TP& p, const std::string& what) {
  ExternalRef r;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") r.location = kv.value();
    else if (kv.key() == "offset") r.offset = parse_nonnegative(kv.value(), what + " external offset");
    else if (kv.key() == "length") r.length = parse_nonnegative(kv.value(), what + " external length");
  }
  check(!r.location.empty(), what, ": external data has no location");
  return r;
}

// The external file, refusing locations that could read outside the model's directory: absolute
// paths, any ".." component, and symlinks that resolve elsewhere.
fs::path resolve_external_path(const std::string& model_dir, const std::string& location,
                               const std::string& what) {
  fs::path loc(location);
  check(!loc.is_absolute() && !loc.has_root_name() && !loc.has_root_directory(), what,
        ": external data location '", location, "' is absolute; it must be relative to the model");
  for (const fs::path& part : loc)
    check(part != "..", what, ": external data location '", location,
          "' leaves the model's directory");
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(model_dir.empty() ? fs::path(".") : fs::path(model_dir), ec);
  check(!ec, what, ": cannot resolve the model directory");
  fs::path full = fs::weakly_canonical(dir / loc, ec);
  check(!ec, what, ": cannot resolve external data location '", location, "'");
  auto [d, f] = std::mismatch(dir.begin(), dir.end(), full.begin(), full.end());
  check(d == dir.end(), what, ": external data location '", location,
        "' leaves the model's directory");
  return full;
}

// Where the `need` bytes of an external tensor are, checked (the file exists inside the model's
// directory and holds them) before the tensor is allocated.
struct ExternalSpan {
  ExternalRef ref;
  fs::path file;
};

ExternalSpan locate_external(const TP& p, const std::string& model_dir, const std::string& what, int64_t need) {
  ExternalRef r = external_ref(p, what);
  fs::path file = resolve_external_path(model_dir, r.location, what);
  std::error_code ec;
  check(fs::is_regular_file(file, ec), what, ": external data file '", r.location, "' not found");
  int64_t file_size = int64_t(fs::file_size(file, ec));
  check(!ec, what, ": cannot read the size of '", r.location, "'");
  int64_t length = r.length < 0 ? need : r.length;
  check(length == need, what, ": external data length ", length, " does not match ", need,
        " bytes for its shape");
  check(r.offset <= file_size && length <= file_size - r.offset, what, ": external data '",
        r.location, "' has ", file_size, " bytes, needs offset ", r.offset, " + length ", length);
  r.length = length;
  return {r, file};
}

void read_external(const ExternalSpan& s, const std::string& what, HostTensor& out) {
  std::ifstream in(s.file, std::ios::binary);
  check(bool(in), what, ": cannot open '", s.ref.location, "'");
  in.seekg(std::streamoff(s.ref.offset));
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(s.ref.length));
  check(in.gcount() == std::streamsize(s.ref.length), what, ": short read from '", s.ref.location, "'");
}

// How many values the typed repeated field holding the tensor's data (when it has no raw_data)
// has, and its name: ONNX stores small types widened (int8/uint8/bool/f16 in int32_data).
std::pair<int64_t, const char*> typed_values(const TP& p) {
  switch (p.data_type()) {
    case TP::FLOAT: return {p.float_data_size(), "float_data"};
    case TP::INT64: return {p.int64_data_size(), "int64_data"};
    default: return {p.int32_data_size(), "int32_data"};
  }
}

// Typed repeated fields: ONNX stores small types widened (int8/uint8/bool/f16 in int32_data).
template <typename Field>
void copy_typed(const Field& field, HostTensor& out) {  // its count checked by tensor_from_proto
  for (int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(field.Get(0))>>) {
      out.set_f64(i, double(field.Get(int(i))));
    } else {
      out.set_i64(i, int64_t(field.Get(int(i))));
    }
  }
}

}  // namespace

HostTensor tensor_from_proto(const TP& p, const std::string& model_dir, const std::string& what) {
  check(!p.has_segment(), what, ": segmented tensors are not supported");
  std::optional<DType> dtype = dtype_from_onnx(p.data_type());
  check(dtype.has_value(), what, ": element type ", onnx_dtype_name(p.data_type()),
        " is not supported (supported: float, float16, int64, int32, int8, uint8, bool)");
  Shape shape;
  int64_t numel = 1;
  for (int64_t d : p.dims()) {
    check(d >= 0, what, ": negative dim ", d);
    check(d == 0 || numel <= kMaxTensorBytes / d, what, ": shape is too large");
    numel *= d;
    shape.push_back(d);
  }
  check(numel <= kMaxTensorBytes / int64_t(dtype_size(*dtype)), what, ": ", numel,
        " elements exceed the ", kMaxTensorBytes, "-byte limit for constants");
  // The data behind the shape is checked before the tensor is allocated: a few bytes of model
  // may declare gigabytes (a fuzzed model did, 2.75 GB, for a tensor with no data).
  const int64_t need = numel * int64_t(dtype_size(*dtype));
  std::optional<ExternalSpan> external;
  if (p.data_location() == TP::EXTERNAL) {
    external = locate_external(p, model_dir, what, need);
  } else if (p.has_raw_data()) {
    check(int64_t(p.raw_data().size()) == need, what, ": raw_data has ", p.raw_data().size(),
          " bytes, the shape needs ", need);
  } else {
    auto [values, field] = typed_values(p);
    check(values == numel, what, ": ", field, " has ", values, " values, the shape needs ", numel);
  }
  HostTensor out(*dtype, shape);
  if (external) {
    read_external(*external, what, out);
    return out;
  }
  if (p.has_raw_data()) {
    if (out.size_bytes() > 0) std::memcpy(out.data(), p.raw_data().data(), out.size_bytes());
    return out;
  }
  switch (p.data_type()) {
    case TP::FLOAT: copy_typed(p.float_data(), out); break;
    case TP::INT64: copy_typed(p.int64_data(), out); break;
    case TP::FLOAT16: {
      // float16 bit patterns live in int32_data.
      auto* bits = out.as<uint16_t>();
      for (int64_t i = 0; i < out.numel(); ++i) bits[i] = uint16_t(p.int32_data(int(i)));
      break;
    }
    default: copy_typed(p.int32_data(), out); break;
  }
  return out;
}

}  // namespace vkc::onnx
