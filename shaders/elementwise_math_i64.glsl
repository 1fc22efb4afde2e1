// int64 overloads of the elementwise helpers, included only in kernels that compute in int64
// (they need GL_EXT_shader_explicit_arithmetic_types_int64). Semantics as the int versions.
int64_t vkc_max(int64_t a, int64_t b) { return max(a, b); }
int64_t vkc_min(int64_t a, int64_t b) { return min(a, b); }
int64_t vkc_div(int64_t a, int64_t b) { return b == 0l ? 0l : a / b; }
int64_t vkc_pow(int64_t a, int64_t b) {
  if (b < 0l) return (a == 1l) ? 1l : (a == -1l ? ((b & 1l) != 0l ? -1l : 1l) : 0l);
  int64_t r = 1l;
  // Exponentiation by squaring: wraps like the reference's int64 arithmetic.
  while (b > 0l) {
    if ((b & 1l) != 0l) r *= a;
    a *= a;
    b >>= 1;
  }
  return r;
}
int64_t vkc_fmod(int64_t a, int64_t b) { return (b == 0l || b == -1l) ? 0l : a - b * (a / b); }
int64_t vkc_mod(int64_t a, int64_t b) {
  int64_t r = vkc_fmod(a, b);
  return (r != 0l && ((r < 0l) != (b < 0l))) ? r + b : r;
}
