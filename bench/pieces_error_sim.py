#!/usr/bin/env python3
"""The representation error of fp16x3's float16 pieces (shaders/gemm_coopmat.glsl, SPLIT), in numpy.

Splits float32 operands as the shader does (hi: x rounded to a float16 value, subnormals included;
lo: float16(x - hi)), after scaling A by a_scale and B by b_scale, sums lo_a*hi_b + hi_a*lo_b +
hi_a*hi_b in float64 and prints the relative L2 error against the float64 product, per operand
scale (both operands uniform in [-scale, scale)). The tensor cores' float32 sums add about 1e-6 on
top (Fp16x3Gpu prints the measured figures); below that this is what the pieces themselves lose.
Columns: unscaled (session 36) and the shader's scales (A x 16, B x 256; session 37).

usage (here, Debian's numpy): /usr/bin/python3 bench/pieces_error_sim.py
"""
import numpy as np


def high_bits(v):
    h = ((v.view(np.uint32) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    sub = (np.round(v * np.float32(2.0**24)) * np.float32(2.0**-24)).astype(np.float32)
    return np.where(np.abs(h) < 2.0**-14, sub, h)


def pieces(x, scale):
    v = (x * np.float32(scale)).astype(np.float32)
    h = high_bits(v)
    lo = (v - h).astype(np.float16).astype(np.float64)
    return h.astype(np.float16).astype(np.float64) / scale, lo / scale


rng = np.random.default_rng(1)
print("scale     unscaled  A x16, B x256")
for scale in [1e2, 1.0, 1e-3, 1e-4, 1e-5]:
    a = (rng.uniform(-1, 1, (256, 192)) * scale).astype(np.float32)
    b = (rng.uniform(-1, 1, (192, 320)) * scale).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    row = []
    for sa, sb in [(1.0, 1.0), (16.0, 256.0)]:
        ah, al = pieces(a, sa)
        bh, bl = pieces(b, sb)
        y = ah @ bh + ah @ bl + al @ bh
        row.append(np.linalg.norm(y - ref) / np.linalg.norm(ref))
    print(f"{scale:<9g} {row[0]:.2e}  {row[1]:.2e}")
