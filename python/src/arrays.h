// Python arrays <-> vkc host tensors. Inputs become views of the caller's memory (numpy buffers
// and DLPack tensors on the CPU), so the upload is their only copy; outputs become numpy arrays
// that own the HostTensor an execution returned (no copy either), or are written straight into
// arrays the caller gives (output_span).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "vkc/tensor.h"

namespace vkc::python {

namespace py = pybind11;

// ONNX Runtime's type string: "tensor(float)", "tensor(int64)", ...
std::string onnx_type_string(DType dtype);

// The host inputs of one call, as views, with what keeps their memory alive until the call ends
// (arrays made contiguous, consumed DLPack tensors, released in the destructor, under the GIL).
class HostInputs {
 public:
  HostInputs() = default;
  ~HostInputs();
  HostInputs(const HostInputs&) = delete;
  HostInputs& operator=(const HostInputs&) = delete;

  // A numpy array (C-contiguous ones are viewed as they are; others are made contiguous first, the
  // one case with a host copy), a DLPack capsule or an object with __dlpack__ (CPU memory only),
  // or anything numpy.asarray takes. `expected` names the model's type in errors ("" if unknown).
  HostTensorView add(const std::string& name, py::handle value, const std::string& expected);

 private:
  std::vector<py::object> keep_;
  std::vector<void*> dlpack_;  // DLManagedTensor*, deleted when done
};

// A numpy array the caller gives an output to be written into (InferenceSession.run's
// output_buffers): a writable, C-contiguous ndarray of a vkc dtype, viewed where it lies (no copy,
// no conversion; anything else raises ValueError naming the output). Its dtype and shape are checked
// against the output's by the session. The array must stay alive until the run returns.
HostTensorSpan output_span(const std::string& name, py::handle value);

// An output as a numpy array that owns the tensor's storage.
py::array to_numpy(HostTensor tensor);

}  // namespace vkc::python
