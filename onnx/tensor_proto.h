// ONNX TensorProto -> HostTensor: element types, typed and raw storage, external data files.
#pragma once

#include <optional>
#include <string>

#include "onnx/onnx_proto.h"
#include "support/tensor.h"

namespace vkc::onnx {

// Constants (inline or external) above this size are refused rather than allocated: it bounds
// what a hostile model can make the importer allocate.
inline constexpr int64_t kMaxTensorBytes = int64_t(4) << 30;

// The vkc element type of an ONNX TensorProto.DataType, or nullopt (double, strings, ...).
std::optional<DType> dtype_from_onnx(int32_t data_type);
// "float", "double", "int64", ... for messages.
std::string onnx_dtype_name(int32_t data_type);
// ONNX data type number of a vkc dtype.
int32_t onnx_dtype_of(DType dtype);

// Converts a tensor. External data is resolved relative to `model_dir`; locations that are
// absolute or leave that directory are refused. `what` names the tensor in messages
// ("model.onnx: initializer 'w'"). Throws vkc::Error.
HostTensor tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& model_dir,
                             const std::string& what);

}  // namespace vkc::onnx
