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

// erf: x P(x^2) / Q(x^2), the coefficients fitted on [0, 4] by scripts/fit_erf.py: within 4e-7
// relative in float32 (the Taylor / Abramowitz & Stegun pair it replaced: 6.5e-7). From |x| = 3.92
// on, erf rounds to +-1 in float and is returned as that exactly (so GELU of -inf is NaN, as
// 0.5 x (1 + erf(x / sqrt 2)) is in the reference). No branch, so the 64 copies in a GEMM epilogue
// that ends in GELU stay straight-line code (ViT-B/16's first MLP product 2% faster on the H200,
// session 27).
float vkc_erf(float x) {
  float c = clamp(x, -4.0, 4.0), t = c * c;
  float p = (((((1.96724529e-08 * t - 1.94219830e-06) * t + 1.41261935e-04) * t + 3.69966093e-03) * t +
              5.05744965e-02) * t + 2.00039048e-01) * t + 1.12837912;
  float q = (((9.53882079e-04 * t + 1.43536915e-02) * t + 1.15032742e-01) * t + 5.10611788e-01) * t + 1.0;
  float r = abs(x) >= 3.92 ? sign(x) : c * p / q;
  return isnan(x) ? x : r;
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
// Float fmod, exact like C's: shift-and-subtract long division of the mantissas in integers (as
// in musl's fmodf), one step per binary order of magnitude of x / y. Float arithmetic cannot be
// trusted for this: a GPU may compute fma() as a rounded multiply and add, and a remainder off by
// one ulp near 0 turns into one off by a whole y in mod.
float vkc_fmod(float x, float y) {
  uint ux = floatBitsToUint(x), uy = floatBitsToUint(y);
  int ex = int((ux >> 23) & 0xffu), ey = int((uy >> 23) & 0xffu);
  uint sx = ux & 0x80000000u;
  if ((uy << 1) == 0u || isnan(y) || ex == 0xff) return uintBitsToFloat(0x7fc00000u);
  if ((ux << 1) <= (uy << 1)) return (ux << 1) == (uy << 1) ? uintBitsToFloat(sx) : x;
  uint mx, my;
  if (ex == 0) {  // subnormal: normalize
    for (uint i = ux << 9; (i >> 31) == 0u; i <<= 1) ex--;
    mx = ux << uint(1 - ex);
  } else {
    mx = (ux & 0x7fffffu) | 0x800000u;
  }
  if (ey == 0) {
    for (uint i = uy << 9; (i >> 31) == 0u; i <<= 1) ey--;
    my = uy << uint(1 - ey);
  } else {
    my = (uy & 0x7fffffu) | 0x800000u;
  }
  for (; ex > ey; ex--) {
    uint i = mx - my;
    if ((i >> 31) == 0u) {
      if (i == 0u) return uintBitsToFloat(sx);
      mx = i;
    }
    mx <<= 1;
  }
  uint i = mx - my;
  if ((i >> 31) == 0u) {
    if (i == 0u) return uintBitsToFloat(sx);
    mx = i;
  }
  for (; (mx >> 23) == 0u; mx <<= 1) ex--;
  if (ex > 0) mx = (mx - 0x800000u) | (uint(ex) << 23);
  else mx >>= uint(1 - ex);
  return uintBitsToFloat(mx | sx);
}
float vkc_mod(float a, float b) {
  float r = vkc_fmod(a, b);
  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}
// log(1 + y) for y >= 0 and exp(x) - 1 near 0 by series: GLSL promises exp and log only to an
// absolute error near 1, which would lose every digit of a small result.
float vkc_log1p(float y) {
  if (y >= 0.25) return log(1.0 + y);
  float s = y / (2.0 + y);  // log(1 + y) = 2 atanh(s), s <= 1/9
  float s2 = s * s;
  return 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 + s2 / 11.0)))));
}
float vkc_expm1(float x) {
  if (abs(x) >= 0.5) return exp(x) - 1.0;
  return x * (1.0 + x * (1.0 / 2.0 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 +
         x * (1.0 / 720.0 + x * (1.0 / 5040.0 + x * (1.0 / 40320.0 + x / 362880.0))))))));
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
