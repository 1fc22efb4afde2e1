#version 450
// Packs a conv operand into the float16 layout the tensor-core implicit GEMM reads 16 bytes at a
// time (codegen/kernels/conv_pack.cpp): a [ROWS][COLS] matrix whose rows are contiguous runs of
// COLS values, COLS a multiple of 8; each invocation writes one uvec4 (8 values of a row).
// The input becomes [batch x input positions][channels] (channels innermost), the filter
// [groups x output channels][taps][input channels of the group]; pack_value(row, col) reads the
// source through its fused prologue and layout.
// ROW_FAST walks rows fastest (neighbouring invocations read neighbouring positions of one channel:
// coalesced reads from a channels-outer source), else the 8-value runs of a row.
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
const uint ROWS = ${ROWS}u, RUNS = ${COLS}u / 8u;

void main() {
${INDEX}
  if (gid >= ROWS * RUNS) return;
  uint row = ${ROW_FAST} == 1 ? gid % ROWS : gid / RUNS;
  uint run = ${ROW_FAST} == 1 ? gid / ROWS : gid % RUNS;
  uint col = run * 8u;
  uvec4 v;
  [[unroll]] for (uint i = 0u; i < 4u; ++i)
    v[i] = packHalf2x16(vec2(pack_value(row, col + 2u * i), pack_value(row, col + 2u * i + 1u)));
  packed.data[row * RUNS + run] = v;
}
