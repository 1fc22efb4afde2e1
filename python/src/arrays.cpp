// numpy / DLPack arrays as vkc::HostTensorView, and HostTensor as numpy arrays.
#include "python/src/arrays.h"

#include <dlpack/dlpack.h>

namespace vkc::python {

namespace {

struct Kind {
  DType dtype;
  const char* numpy;  // numpy's name
  const char* onnx;   // ONNX Runtime's type string
  char numpy_kind;    // numpy's dtype.kind, with dtype_size(dtype) as its itemsize
};

constexpr Kind kKinds[] = {
    {DType::f32, "float32", "tensor(float)", 'f'}, {DType::f16, "float16", "tensor(float16)", 'f'},
    {DType::i64, "int64", "tensor(int64)", 'i'},   {DType::i32, "int32", "tensor(int32)", 'i'},
    {DType::i8, "int8", "tensor(int8)", 'i'},      {DType::u8, "uint8", "tensor(uint8)", 'u'},
    {DType::boolean, "bool", "tensor(bool)", 'b'},
};

const Kind& kind_of(DType dtype) {
  for (const Kind& k : kKinds)
    if (k.dtype == dtype) return k;
  throw Error(cat("no numpy type for vkc dtype ", dtype_name(dtype)));
}

std::string numpy_names() {
  std::string s;
  for (const Kind& k : kKinds) s += cat(s.empty() ? "" : ", ", k.numpy);
  return s;
}

// `what`: "input 'x'" or "output buffer 'y'", for the error.
DType dtype_of_numpy(const std::string& what, const py::dtype& dt, const std::string& expected) {
  // By kind and size (cheap: no dtype objects made per call), in the machine's byte order.
  const char order = dt.byteorder();
  if (order == '=' || order == '|' || order == '<')
    for (const Kind& k : kKinds)
      if (dt.kind() == k.numpy_kind && size_t(dt.itemsize()) == dtype_size(k.dtype)) return k.dtype;
  throw InputError(cat(what, " has numpy dtype ", dt.attr("name").cast<std::string>(),
                       expected.empty() ? std::string() : ", the model expects " + expected, " (vkc takes ",
                       numpy_names(), ")"));
}

DType dtype_of_dlpack(const std::string& name, DLDataType t, const std::string& expected) {
  check_input(t.lanes == 1, "input '", name, "': DLPack tensors with ", t.lanes, " lanes are not supported");
  if (t.code == kDLFloat && t.bits == 32) return DType::f32;
  if (t.code == kDLFloat && t.bits == 16) return DType::f16;
  if (t.code == kDLInt && t.bits == 64) return DType::i64;
  if (t.code == kDLInt && t.bits == 32) return DType::i32;
  if (t.code == kDLInt && t.bits == 8) return DType::i8;
  if (t.code == kDLUInt && t.bits == 8) return DType::u8;
  if (t.code == 6 /* kDLBool, DLPack >= 0.8 */ && t.bits == 8) return DType::boolean;
  throw InputError(cat("input '", name, "' is a DLPack tensor of type code ", int(t.code), " with ", int(t.bits),
                       " bits", expected.empty() ? std::string() : ", the model expects " + expected));
}

}  // namespace

std::string onnx_type_string(DType dtype) { return kind_of(dtype).onnx; }

HostInputs::~HostInputs() {
  for (void* p : dlpack_) {
    auto* t = static_cast<DLManagedTensor*>(p);
    if (t->deleter) t->deleter(t);
  }
}

HostTensorView HostInputs::add(const std::string& name, py::handle value, const std::string& expected) {
  py::object capsule;
  if (PyCapsule_CheckExact(value.ptr())) {
    capsule = py::reinterpret_borrow<py::object>(value);
  } else if (!py::isinstance<py::array>(value) && py::hasattr(value, "__dlpack__")) {
    if (py::hasattr(value, "__dlpack_device__")) {
      py::tuple dev = value.attr("__dlpack_device__")();
      int type = dev[0].cast<int>();
      check_input(type == kDLCPU, "input '", name, "' is a DLPack tensor on device type ", type,
                  "; vkc takes host (CPU) memory only: copy it to the CPU first");
    }
    capsule = value.attr("__dlpack__")();
  }
  if (capsule) {
    check_input(PyCapsule_IsValid(capsule.ptr(), "dltensor"), "input '", name,
                "': the DLPack capsule was already consumed (or is not a DLPack capsule)");
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // consumed: ours to delete
    dlpack_.push_back(managed);
    const DLTensor& t = managed->dl_tensor;
    check_input(t.device.device_type == kDLCPU, "input '", name, "' is a DLPack tensor on device type ",
                int(t.device.device_type), "; vkc takes host (CPU) memory only: copy it to the CPU first");
    DType dtype = dtype_of_dlpack(name, t.dtype, expected);
    Shape shape(t.shape, t.shape + t.ndim);
    if (t.strides) {  // compact C order only
      int64_t step = 1;
      for (int d = t.ndim - 1; d >= 0; --d) {
        check_input(shape[d] == 1 || t.strides[d] == step, "input '", name,
                    "': the DLPack tensor is not C-contiguous (dim ", d, " has stride ", t.strides[d], ", expected ",
                    step, ")");
        step *= shape[d];
      }
    }
    return HostTensorView(dtype, std::move(shape), static_cast<const char*>(t.data) + t.byte_offset);
  }
  py::array a = py::isinstance<py::array>(value) ? py::reinterpret_borrow<py::array>(value)
                                                 : py::array(py::module_::import("numpy").attr("asarray")(value));
  DType dtype = dtype_of_numpy(cat("input '", name, "'"), a.dtype(), expected);
  if (!(a.flags() & py::array::c_style)) a = py::array(py::module_::import("numpy").attr("ascontiguousarray")(a));
  keep_.push_back(a);
  return HostTensorView(dtype, Shape(a.shape(), a.shape() + a.ndim()), a.data());
}

HostTensorSpan output_span(const std::string& name, py::handle value) {
  // No conversion and no copy: vkc writes into this very memory, so the caller sees the result.
  check_input(py::isinstance<py::array>(value), "output buffer '", name, "' must be a numpy array, not ",
              std::string(py::str(value.get_type().attr("__name__"))));
  auto a = py::reinterpret_borrow<py::array>(value);
  check_input(a.writeable(), "output buffer '", name, "' is a read-only array");
  check_input((a.flags() & py::array::c_style) != 0, "output buffer '", name,
              "' is not C-contiguous (numpy.ascontiguousarray makes a new array: bind that one)");
  DType dtype = dtype_of_numpy(cat("output buffer '", name, "'"), a.dtype(), "");
  return HostTensorSpan(dtype, Shape(a.shape(), a.shape() + a.ndim()), a.mutable_data());
}

py::array to_numpy(HostTensor tensor) {
  auto* owned = new HostTensor(std::move(tensor));
  py::capsule base(owned, [](void* p) { delete static_cast<HostTensor*>(p); });
  return py::array(py::dtype(kind_of(owned->dtype()).numpy), owned->shape(), owned->data(), base);
}

}  // namespace vkc::python
