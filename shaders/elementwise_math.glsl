// Scalar math shared by elementwise kernels. Semantics follow docs/ops.md (the reference
// interpreter): NaN propagates through max/min, pow of a negative base with an integral exponent
// keeps its sign, erf is accurate to a few ulp of float.

float vkc_max(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : max(a, b)); }
float vkc_min(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : min(a, b)); }
int vkc_max(int a, int b) { return max(a, b); }
int vkc_min(int a, int b) { return min(a, b); }

float vkc_pow(float a, float b) {
  if (b == 0.0) return 1.0;
  if (a >= 0.0 || isnan(a)) return pow(a, b);
  if (b != floor(b)) return uintBitsToFloat(0x7fc00000u);  // negative base, fractional exponent
  float r = pow(-a, b);
  return mod(b, 2.0) == 1.0 ? -r : r;
}
int vkc_pow(int a, int b) {
  if (b < 0) return (a == 1) ? 1 : (a == -1 ? ((b & 1) != 0 ? -1 : 1) : 0);
  int r = 1;
  for (int i = 0; i < b && i < 64; ++i) r *= a;
  return r;
}

int vkc_div(int a, int b) { return b == 0 ? 0 : a / b; }  // GLSL int division truncates

// erf: Taylor series near zero (no cancellation), Abramowitz & Stegun 7.1.26 elsewhere.
float vkc_erf(float x) {
  float ax = abs(x);
  if (ax < 0.5) {
    float x2 = x * x;
    return 1.1283791670955126 * x *
           (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 - x2 / 1320.0)))));
  }
  float t = 1.0 / (1.0 + 0.3275911 * ax);
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                   0.254829592) * t * exp(-ax * ax);
  return x < 0.0 ? -y : y;
}

float vkc_sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }
float vkc_tanh(float x) {
  // GLSL tanh may overflow to NaN for large |x| on some drivers; clamp where it is +-1 anyway.
  return abs(x) > 15.0 ? sign(x) : tanh(x);
}
float vkc_gelu(float x) { return 0.5 * x * (1.0 + vkc_erf(x * 0.7071067811865476)); }
float vkc_gelu_tanh(float x) {
  return 0.5 * x * (1.0 + vkc_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
float vkc_hardswish(float x) { return x * clamp(x + 3.0, 0.0, 6.0) / 6.0; }
