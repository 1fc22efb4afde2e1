#version 450
// Test-only template (tests/codegen/backend_test.cpp reads it from the source tree; it is not
// embedded in the library): a kernel whose shared array's element type and length are template
// keys, so instantiation and shared-memory measurement can be checked.
layout(local_size_x = ${WG}) in;
layout(set = 0, binding = 0) buffer Data { ${TYPE} data[]; };
shared ${TYPE} tile[${COUNT}];

void main() {
  uint i = gl_LocalInvocationID.x;
  tile[i % ${COUNT}] = data[gl_GlobalInvocationID.x];
  barrier();
  data[gl_GlobalInvocationID.x] = tile[(i + 1) % ${COUNT}];
}
