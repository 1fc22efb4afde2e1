// Host tensors, element types, .npy files and the error type of the public vkc API.
//
// vkc::HostTensor (dtype, shape, C-order bytes) is what executions take and return on the host;
// vkc::HostTensorView and vkc::HostTensorSpan view memory the caller owns (read from, written to);
// every failure anywhere in vkc is a vkc::Error with a one-line message.
#pragma once

#include "support/dtype.h"   // vkc::DType, dtype_name, dtype_size, parse_dtype
#include "support/error.h"   // vkc::Error
#include "support/host_tensor_span.h"  // vkc::HostTensorSpan (outputs into the caller's memory)
#include "support/npy.h"     // vkc::read_npy, vkc::write_npy
#include "support/tensor.h"  // vkc::HostTensor, vkc::Shape
