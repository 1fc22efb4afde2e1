// A writable, non-owning view of C-order host memory: where an execution writes an output into
// memory the caller owns (vkc::RunOptions::output_to_host), the mutable sibling of HostTensorView.
//
// Why: an output read into a fresh HostTensor costs an allocation per execution, and for blocks
// above glibc's mmap threshold (32 MB) the page faults of fresh pages plus HostTensor's zero fill
// cost 10-20 times the copy itself (issue 21: 40-60 ms against 1-4 ms for a 77 MB output on an
// H200 host). Memory the caller keeps across executions is faulted in once.
//
// Its own header, not support/tensor.h: only the public API and the runtime use it, so adding it
// rebuilds neither the IR nor the compiler.
#pragma once

#include <cstddef>
#include <utility>

#include "support/tensor.h"

namespace vkc {

struct HostTensorSpan {
  DType dtype = DType::f32;
  Shape shape;
  void* data = nullptr;

  HostTensorSpan() = default;
  HostTensorSpan(DType d, Shape s, void* p) : dtype(d), shape(std::move(s)), data(p) {}
  // A span over a tensor's storage (the tensor must outlive the span and keep its size).
  HostTensorSpan(HostTensor& t) : dtype(t.dtype()), shape(t.shape()), data(t.data()) {}  // NOLINT: implicit
  // Element count times element size (throws like shape_numel on a bad shape).
  size_t size_bytes() const { return size_t(shape_numel(shape)) * dtype_size(dtype); }
};

}  // namespace vkc
