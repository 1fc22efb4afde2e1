#include "codegen/kernels/kernels.h"
#include "codegen/op_codegen.h"
#include "support/error.h"

namespace vkc::codegen {

KernelEmitter find_kernel_emitter(const DispatchGroup& group) {
  if (group.anchor == nullptr) return kernels::emit_elementwise;  // copy group
  KernelEmitter emitter = op_codegen(group.anchor->kind).emitter;
  // Host-only ops (constants, views) never anchor a group; reaching one here is a planner bug.
  if (emitter == nullptr) throw Error(cat(group.anchor->describe(), ": not supported on the GPU yet"));
  return emitter;
}

}  // namespace vkc::codegen
