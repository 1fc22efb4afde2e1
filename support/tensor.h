// A dense host tensor: element type, static shape and C-order bytes.
//
// The same type carries constant data inside the IR, reference-interpreter values, .npy contents and
// the host side of runtime inputs/outputs, so data never needs converting between layers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/dtype.h"

namespace vkc {

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for rank 0). Throws vkc::Error on a negative dim or overflow.
int64_t shape_numel(const Shape& shape);
// "1x3x224x224" (rank 0: "scalar").
std::string shape_str(const Shape& shape);
// C-order strides in elements.
std::vector<int64_t> shape_strides(const Shape& shape);

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-initialized storage.
  HostTensor(DType dtype, Shape shape);
  // Copies count in host_tensor_copies(); moves do not.
  HostTensor(const HostTensor& other);
  HostTensor& operator=(const HostTensor& other);
  HostTensor(HostTensor&&) noexcept = default;
  HostTensor& operator=(HostTensor&&) noexcept = default;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return int64_t(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t size_bytes() const { return bytes_.size(); }
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  template <typename T>
  T* as() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(bytes_.data()); }

  // Element i (flat C order) as double. f16 is widened exactly; i64 beyond 2^53 loses precision
  // (use get_i64 for exact integers).
  double get_f64(int64_t i) const;
  // Stores v converted to the element type: floats round to nearest, integers truncate toward
  // zero after saturating to the type's range (NaN -> 0), bool is v != 0.
  void set_f64(int64_t i, double v);
  int64_t get_i64(int64_t i) const;
  void set_i64(int64_t i, int64_t v);

  // Reinterprets the same bytes with another shape of equal element count.
  HostTensor reshaped(Shape shape) const;
  // Fills float tensors with quiet NaN and integer tensors with a recognizable poison pattern
  // (0xA5 bytes), so unwritten outputs are caught by comparisons.
  void poison();

  bool operator==(const HostTensor& other) const {
    return dtype_ == other.dtype_ && shape_ == other.shape_ && bytes_ == other.bytes_;
  }

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 1;
  std::vector<uint8_t> bytes_ = std::vector<uint8_t>(4);
};

// How many times a HostTensor was copied (constructed or assigned from another) in this process:
// tests check with it that a path hands data on without a host-side copy.
uint64_t host_tensor_copies();

// A non-owning view of C-order host data with a dtype and shape: what an execution uploads from,
// so that a caller's buffer (a numpy array, a mapped file) reaches device memory with the upload
// as its only copy. The data must stay valid and unchanged until the call given the view returns.
struct HostTensorView {
  DType dtype = DType::f32;
  Shape shape;
  const void* data = nullptr;

  HostTensorView() = default;
  HostTensorView(DType d, Shape s, const void* p) : dtype(d), shape(std::move(s)), data(p) {}
  // A view of a tensor (which must outlive it).
  HostTensorView(const HostTensor& t) : dtype(t.dtype()), shape(t.shape()), data(t.data()) {}  // NOLINT: implicit
  // Element count times element size (throws like shape_numel on a bad shape).
  size_t size_bytes() const;
  // An owning copy.
  HostTensor copy() const;
};

// Views of each tensor of a map, by the same names.
std::map<std::string, HostTensorView> views_of(const std::map<std::string, HostTensor>& tensors);

// Builds an f32 tensor from values (shape's element count must match), handy in tests and samples.
HostTensor make_f32(Shape shape, const std::vector<float>& values);
HostTensor make_i64(Shape shape, const std::vector<int64_t>& values);

}  // namespace vkc
