// Sort keys: every sortable element becomes an order-preserving uint key, so all sort kernels
// compare plain (key, index) pairs. The index breaks ties, which makes every pair distinct: an
// unstable network (bitonic) then yields the stable order the reference defines.

// f32 (given as its bits, so callers holding raw words never round-trip through a float):
// numbers by value with -0.0 == +0.0; every NaN (any sign or payload) becomes one key above +inf.
// Done on the bits, so no float comparison can be relaxed by the driver.
uint vkc_sort_key_float_bits(uint u) {
  uint magnitude = u & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return 0xFFFFFFFFu;  // NaN: after +inf (0xFF800000)
  if (magnitude == 0u) return 0x80000000u;          // -0.0 and +0.0
  return (u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u);
}
uint vkc_sort_key_float(float x) { return vkc_sort_key_float_bits(floatBitsToUint(x)); }

// The f32 bits a key came from, where that is one value: every key but the two the transform
// shares among several inputs (zeros, NaNs), whose bits only the source element knows.
bool vkc_sort_key_float_invertible(uint key) { return key != 0x80000000u && key != 0xFFFFFFFFu; }
uint vkc_sort_key_float_inverse(uint key) { return (key & 0x80000000u) != 0u ? key & 0x7FFFFFFFu : ~key; }

// Signed integers: flipping the sign bit makes unsigned order match signed order (its own inverse).
uint vkc_sort_key_int(int x) { return uint(x) ^ 0x80000000u; }

// Strict "pair a sorts after pair b" for ascending (key, index) order.
bool vkc_sort_after(uint key_a, uint index_a, uint key_b, uint index_b) {
  return key_a > key_b || (key_a == key_b && index_a > index_b);
}
