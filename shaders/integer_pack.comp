#version 450
// Packs an 8-bit conv operand into the signed int8 layout the int8 tensor-core GEMM reads 16 bytes
// at a time (codegen/kernels/integer_coopmat.cpp): a [ROWS][COLS] matrix whose rows are contiguous
// runs of COLS bytes, COLS a multiple of 16; each invocation writes one uvec4 (16 bytes of a row).
// pack_byte(row, col) reads the source in any layout and returns the byte to store (the input's
// u8 -> s8 flip and zero-point XOR included).
// ROW_FAST walks rows fastest (neighbouring invocations read neighbouring positions of one channel:
// coalesced reads from a channels-outer source), else the 16-byte runs of a row.
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${FUNCTIONS}
const uint ROWS = ${ROWS}u, RUNS = ${COLS}u / 16u;

void main() {
${INDEX}
  if (gid >= ROWS * RUNS) return;
  uint row = ${ROW_FAST} == 1 ? gid % ROWS : gid / RUNS;
  uint run = ${ROW_FAST} == 1 ? gid / ROWS : gid % RUNS;
  uint col = run * 16u;
  uvec4 v;
  [[unroll]] for (uint i = 0u; i < 4u; ++i)
    v[i] = pack_byte(row, col + 4u * i) | pack_byte(row, col + 4u * i + 1u) << 8u |
           pack_byte(row, col + 4u * i + 2u) << 16u | pack_byte(row, col + 4u * i + 3u) << 24u;
  packed.data[row * RUNS + run] = v;
}
