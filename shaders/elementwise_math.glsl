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

// Issue 23, elementwise and logic group.
// mod takes the divisor's sign (Python, numpy), fmod the dividend's (C); integer x mod 0 and
// INT_MIN mod -1 are 0. GLSL's % is undefined for negative operands, so both go through the
// truncating division.
int vkc_fmod(int a, int b) { return (b == 0 || b == -1) ? 0 : a - b * (a / b); }
int vkc_mod(int a, int b) {
  int r = vkc_fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
// Float fmod by repeated reduction with an exact fused multiply-add (each step removes up to 2^24
// multiples of b), then one step back where the quotient rounded to a neighbouring integer.
float vkc_fmod(float a, float b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0.0) return uintBitsToFloat(0x7fc00000u);
  if (isinf(b)) return a;
  float ab = abs(b);
  precise float r = a;
  for (int k = 0; k < 12 && abs(r) >= ab; ++k) r = fma(-b, trunc(r / b), r);
  if (a >= 0.0 && r < 0.0) r += ab;
  if (a < 0.0 && r > 0.0) r -= ab;
  return r;
}
float vkc_mod(float a, float b) {
  float r = vkc_fmod(a, b);
  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}
// log(1 + y) and exp(x) - 1 without cancellation (the rounding error of 1 + y cancels out).
float vkc_log1p(float y) {
  precise float u = 1.0 + y;
  precise float d = u - 1.0;
  return d == 0.0 ? y : log(u) * (y / d);
}
float vkc_expm1(float x) {
  precise float u = exp(x);
  if (u == 1.0) return x;
  precise float um1 = u - 1.0;
  if (um1 == -1.0) return -1.0;
  return um1 * x / log(u);
}
float vkc_elu(float x, float alpha) { return x < 0.0 ? alpha * vkc_expm1(x) : x; }
float vkc_selu(float x, float alpha, float gamma) {
  return x <= 0.0 ? gamma * alpha * vkc_expm1(x) : gamma * x;
}
float vkc_softplus(float x) {
  if (isnan(x)) return x;
  return max(x, 0.0) + vkc_log1p(exp(-abs(x)));
}
// x * tanh(softplus(x)) with tanh(log(1 + n)) = n (n + 2) / (n (n + 2) + 2), n = e^x: no
// cancellation for negative x; beyond 20 the factor is 1 in float.
float vkc_mish(float x) {
  if (x > 20.0) return x;
  float n = exp(x);
  float t = n * (n + 2.0);
  return x * t / (t + 2.0);
}
