#version 450
// Depthwise convolution (groups == input channels, any channel multiplier; forward conv) with
// channels the innermost physical dim of input and output (N, spatial.., C: the layout the
// channels-last pass stores fp16 activations in). Invocations take output channels fastest, so a
// subgroup's loads of one input position and its stores of one output position are each one
// contiguous run of channels. Each invocation computes RUN consecutive W outputs of its channel:
// per kernel row it reads the WINDOW input columns they cover once, and each value feeds every
// (output, tap) pair that sees it (decided at compile time after unrolling). The kernel row's taps
// sit in registers; the filter is small and read through the cache. No workgroup memory.
// Spatial dims are right-aligned into (D, H, W); sizes, strides and pads are baked in by
// codegen/kernels/conv_depthwise_channels_last.cpp.
${EXTENSIONS}
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = ${WG_SIZE}, local_size_y = 1, local_size_z = 1) in;

${BUFFERS}
${HELPERS}
const uint F = ${F}u, FG = ${FG}u;  // output channels; per group (the channel multiplier)
const uint OD = ${O0}u, OH = ${O1}u, OW = ${O2}u;
const uint ID = ${I0}u, IH = ${I1}u, IW = ${I2}u;
const uint K0 = ${K0}u, K1 = ${K1}u, K2 = ${K2}u;
const uint S0 = ${S0}u, S1 = ${S1}u, S2 = ${S2}u;  // strides
const uint D0 = ${D0}u, D1 = ${D1}u, D2 = ${D2}u;  // dilations
const int P0 = ${P0}, P1 = ${P1}, P2 = ${P2};      // leading pads
// Element strides of the input (image, channel, D, H, W), output and filter (output channel, taps).
const uint XN = ${XN}u, XC = ${XC}u, X0 = ${X0}u, X1 = ${X1}u, X2 = ${X2}u;
const uint YN = ${YN}u, YC = ${YC}u, Y0 = ${Y0}u, Y1 = ${Y1}u, Y2 = ${Y2}u;
const uint WF = ${WF}u, W0 = ${W0}u, W1 = ${W1}u, W2 = ${W2}u;
const uint RUN = ${RUN}u, RUNS = (OW + RUN - 1u) / RUN;  // W outputs per invocation; runs per row
const uint TOTAL = ${TOTAL}u;                             // invocations with work: N x OD x OH x RUNS x F
const uint WINDOW = (RUN - 1u) * S2 + (K2 - 1u) * D2 + 1u;  // input columns one run reads per row

// The input at column iw of the row starting at `row`, 0 in the padding.
float x_col(uint row, int iw) {
  if (iw < 0 || iw >= int(IW)) return 0.0;
  return float(x_at(row + uint(iw) * X2));
}

void main() {
  uint gid = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * ${WG_SIZE}u;
  if (gid >= TOTAL) return;
  uint f = gid % F;
  uint rest = gid / F;
  uint ow0 = rest % RUNS * RUN;
  rest /= RUNS;
  uint oh = rest % OH;
  rest /= OH;
  uint od = rest % OD;
  uint n = rest / OD;
  // Output channel f belongs to group f / FG, whose only input channel is that group.
  uint image = n * XN + f / FG * XC;
  int iw0 = int(ow0 * S2) - P2;
  float acc[RUN];
  [[unroll]] for (uint j = 0u; j < RUN; ++j) acc[j] = 0.0;
  for (uint k0 = 0u; k0 < K0; ++k0) {
    int id = int(od * S0 + k0 * D0) - P0;
    if (id < 0 || id >= int(ID)) continue;
    for (uint k1 = 0u; k1 < K1; ++k1) {
      int ih = int(oh * S1 + k1 * D1) - P1;
      if (ih < 0 || ih >= int(IH)) continue;
      uint row = image + uint(id) * X0 + uint(ih) * X1;
      float w[K2];
      [[unroll]] for (uint k2 = 0u; k2 < K2; ++k2) w[k2] = float(w_at(f * WF + k0 * W0 + k1 * W1 + k2 * W2));
      [[unroll]] for (uint i = 0u; i < WINDOW; ++i) {
        float xv = x_col(row, iw0 + int(i));
        [[unroll]] for (uint j = 0u; j < RUN; ++j)
          [[unroll]] for (uint k2 = 0u; k2 < K2; ++k2)
            if (j * S2 + k2 * D2 == i) acc[j] = fma(xv, w[k2], acc[j]);
      }
    }
  }
  float b = bias_of(f);
  uint y0 = n * YN + f * YC + od * Y0 + oh * Y1;
  [[unroll]] for (uint j = 0u; j < RUN; ++j)
    if (ow0 + j < OW) store_result(y0 + (ow0 + j) * Y2, acc[j] + b);
}
