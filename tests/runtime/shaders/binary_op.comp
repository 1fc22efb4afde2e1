// c[i] = a[i] OP b[i] for i < n: the runtime tests' kernel.
// Spec constant 0: workgroup size; spec constant 1: OP (0 add, 1 multiply).
// Regenerate tests/runtime/binary_op_spv.h with the command in that file's first lines.
#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(push_constant) uniform Push { uint n; } push;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= push.n) return;
  c[i] = OP == 0u ? a[i] + b[i] : a[i] * b[i];
}
