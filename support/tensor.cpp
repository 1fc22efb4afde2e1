#include "support/tensor.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/error.h"
#include "support/half.h"

namespace vkc {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    check(d >= 0, "negative dimension ", d, " in shape ", shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error(cat("element count of shape ", shape_str(shape), " overflows 64 bits"));
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

HostTensor::HostTensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(shape_numel(shape_)) {
  bytes_.assign(size_t(numel_) * dtype_size(dtype_), 0);
}

namespace {
template <typename T>
T saturate(double v) {
  if (std::isnan(v)) return T(0);
  constexpr double lo = double(std::numeric_limits<T>::lowest());
  constexpr double hi = double(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return T(v);
}
}  // namespace

double HostTensor::get_f64(int64_t i) const {
  switch (dtype_) {
    case DType::f32: return as<float>()[i];
    case DType::f16: return half_to_float(as<uint16_t>()[i]);
    case DType::i64: return double(as<int64_t>()[i]);
    case DType::i32: return as<int32_t>()[i];
    case DType::i8: return as<int8_t>()[i];
    case DType::u8: return as<uint8_t>()[i];
    case DType::boolean: return as<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0;
}

void HostTensor::set_f64(int64_t i, double v) {
  switch (dtype_) {
    case DType::f32: as<float>()[i] = float(v); break;
    case DType::f16: as<uint16_t>()[i] = float_to_half(float(v)); break;
    case DType::i64: as<int64_t>()[i] = saturate<int64_t>(v); break;
    case DType::i32: as<int32_t>()[i] = saturate<int32_t>(v); break;
    case DType::i8: as<int8_t>()[i] = saturate<int8_t>(v); break;
    case DType::u8: as<uint8_t>()[i] = saturate<uint8_t>(v); break;
    case DType::boolean: as<uint8_t>()[i] = (v != 0.0 && !std::isnan(v)) ? 1 : 0; break;
  }
}

int64_t HostTensor::get_i64(int64_t i) const {
  switch (dtype_) {
    case DType::i64: return as<int64_t>()[i];
    case DType::i32: return as<int32_t>()[i];
    case DType::i8: return as<int8_t>()[i];
    case DType::u8: return as<uint8_t>()[i];
    case DType::boolean: return as<uint8_t>()[i] ? 1 : 0;
    default: return saturate<int64_t>(get_f64(i));
  }
}

void HostTensor::set_i64(int64_t i, int64_t v) {
  switch (dtype_) {
    case DType::i64: as<int64_t>()[i] = v; break;
    case DType::i32: as<int32_t>()[i] = int32_t(v); break;
    case DType::i8: as<int8_t>()[i] = int8_t(v); break;
    case DType::u8: as<uint8_t>()[i] = uint8_t(v); break;
    case DType::boolean: as<uint8_t>()[i] = v != 0; break;
    default: set_f64(i, double(v)); break;
  }
}

namespace {
std::atomic<uint64_t> copies{0};
}

HostTensor::HostTensor(const HostTensor& other)
    : dtype_(other.dtype_), shape_(other.shape_), numel_(other.numel_), bytes_(other.bytes_) {
  copies.fetch_add(1, std::memory_order_relaxed);
}

HostTensor& HostTensor::operator=(const HostTensor& other) {
  if (this == &other) return *this;
  dtype_ = other.dtype_;
  shape_ = other.shape_;
  numel_ = other.numel_;
  bytes_ = other.bytes_;
  copies.fetch_add(1, std::memory_order_relaxed);
  return *this;
}

uint64_t host_tensor_copies() { return copies.load(std::memory_order_relaxed); }

size_t HostTensorView::size_bytes() const { return size_t(shape_numel(shape)) * dtype_size(dtype); }

HostTensor HostTensorView::copy() const {
  HostTensor t(dtype, shape);
  if (t.size_bytes() > 0) std::memcpy(t.data(), data, t.size_bytes());
  return t;
}

std::map<std::string, HostTensorView> views_of(const std::map<std::string, HostTensor>& tensors) {
  std::map<std::string, HostTensorView> views;
  for (const auto& [name, t] : tensors) views.emplace(name, HostTensorView(t));
  return views;
}

HostTensor HostTensor::reshaped(Shape shape) const {
  check(shape_numel(shape) == numel_, "cannot reshape ", shape_str(shape_), " to ", shape_str(shape));
  HostTensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

void HostTensor::poison() {
  if (dtype_ == DType::f32) {
    for (int64_t i = 0; i < numel_; ++i) as<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  } else if (dtype_ == DType::f16) {
    for (int64_t i = 0; i < numel_; ++i) as<uint16_t>()[i] = 0x7e00;
  } else {
    std::memset(bytes_.data(), 0xA5, bytes_.size());
  }
}

HostTensor make_f32(Shape shape, const std::vector<float>& values) {
  HostTensor t(DType::f32, std::move(shape));
  check(int64_t(values.size()) == t.numel(), "make_f32: ", values.size(), " values for shape ",
        shape_str(t.shape()));
  std::memcpy(t.data(), values.data(), values.size() * 4);
  return t;
}

HostTensor make_i64(Shape shape, const std::vector<int64_t>& values) {
  HostTensor t(DType::i64, std::move(shape));
  check(int64_t(values.size()) == t.numel(), "make_i64: ", values.size(), " values for shape ",
        shape_str(t.shape()));
  std::memcpy(t.data(), values.data(), values.size() * 8);
  return t;
}

}  // namespace vkc
