// rt::DeviceTensor's state, shared with program.cpp (which copies between device tensors and a
// program's input/output buffers inside an execution's submission).
#pragma once

#include <memory>

#include "runtime/segmented_buffer.h"
#include "runtime/runtime.h"

namespace vkc::rt {

struct DeviceTensor::Impl {
  Context::Impl& ctx;
  DType dtype;
  Shape shape;
  uint64_t bytes = 0;              // the tensor's own size
  // Whole 32-bit words, at least one; in segments where larger than one allocation may be.
  std::unique_ptr<SegmentedBuffer> buffer;
};

}  // namespace vkc::rt
