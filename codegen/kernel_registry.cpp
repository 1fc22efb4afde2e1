#include "codegen/kernels/kernels.h"
#include "support/error.h"

namespace vkc::codegen {

KernelEmitter find_kernel_emitter(const DispatchGroup& group) {
  if (group.anchor == nullptr) return kernels::emit_elementwise;  // copy group
  using K = ir::OpKind;
  switch (group.anchor->kind) {
    case K::Conv:
    case K::ConvTranspose: return kernels::emit_conv;
    case K::Im2Col: return kernels::emit_im2col;
    case K::MatMul:
    case K::BatchMatMul:
    case K::Gemm: return kernels::emit_contraction;
    case K::MaxPool:
    case K::AvgPool: return kernels::emit_pool;
    case K::MaxPoolWithIndices: return kernels::emit_pool_indices;
    case K::Resize: return kernels::emit_resize;
    case K::ReduceSum:
    case K::ReduceMean:
    case K::ReduceMax:
    case K::ReduceMin:
    case K::ArgMax:
    case K::ArgMin:
    case K::Softmax:
    case K::LogSoftmax: return kernels::emit_reduction;
    case K::Transpose:
    case K::Pad:
    case K::Reverse:
    case K::Slice:
    case K::Concat:
    case K::Broadcast: return kernels::emit_data_movement;
    case K::Quantize:
    case K::Dequantize: return kernels::emit_quant;
    case K::Sort:
    case K::TopK: return kernels::emit_sort;
    default: break;
  }
  switch (ir::op_schema(group.anchor->kind).category) {
    case ir::OpCategory::Unary:
    case ir::OpCategory::Binary:
    case ir::OpCategory::Ternary: return kernels::emit_elementwise;
    default: break;
  }
  throw Error(cat(group.anchor->describe(), ": not supported on the GPU yet"));
}

}  // namespace vkc::codegen
