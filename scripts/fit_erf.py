#!/usr/bin/python3
"""Fits the GPU erf of shaders/elementwise_math.glsl: erf(x) ~ x P(x^2) / Q(x^2) on [0, 4], P of
degree 6 and Q of degree 4 with Q(0) = 1, for least relative error (Loeb's iteratively reweighted
linear least squares), then checks the fit evaluated in float32 as the shader evaluates it.

  /usr/bin/python3 scripts/fit_erf.py    (numpy; prints the coefficients and the float32 error)

Why this form: it is odd, exact at 0 (x P / Q -> 2x/sqrt(pi)), has no branch (so the 64 copies in
a GEMM epilogue that ends in GELU stay straight-line code) and one division. Beyond |x| = 4 erf
rounds to +-1 in float32 (from 3.9192), so the shader returns sign(x) from |x| = 3.92 on and
clamps the fit's argument to [-4, 4]."""
import math
import numpy as np

P_DEG, Q_DEG = 6, 4


def fit():
    x = np.linspace(1e-6, 4.0, 40000)
    y = np.array([math.erf(v) for v in x])
    t = x * x
    w = np.ones_like(x)
    for _ in range(30):
        # x P(t) - y (Q(t) - 1) = y, each row weighted by w / y (relative error).
        a = np.zeros((len(x), P_DEG + Q_DEG + 1))
        for i in range(P_DEG + 1):
            a[:, i] = x * t**i
        for j in range(1, Q_DEG + 1):
            a[:, P_DEG + j] = -y * t**j
        c, *_ = np.linalg.lstsq(a * (w / y)[:, None], w, rcond=None)
        p, q = c[:P_DEG + 1], np.concatenate([[1.0], c[P_DEG + 1:]])
        w = 1.0 / np.abs(sum(q[j] * t**j for j in range(Q_DEG + 1)))  # Loeb's reweighting
    return p, q


def erf32(x, p, q):
    """The shader's evaluation: clamp, Horner in float32, one division, +-1 from 3.92."""
    x0 = x
    x = np.float32(np.clip(x, -4, 4))
    t = x * x
    num, den = np.float32(p[-1]), np.float32(q[-1])
    for c in p[-2::-1]:
        num = np.float32(num * t + np.float32(c))
    for c in q[-2::-1]:
        den = np.float32(den * t + np.float32(c))
    return np.where(np.abs(x0) >= np.float32(3.92), np.sign(x0), np.float32(x * num / den)).astype(np.float32)


def main():
    p, q = fit()
    xs = np.concatenate([np.linspace(-6, 6, 400001), [1e-30, 1e-10, 1e-5, -1e-7]]).astype(np.float32)
    ref = np.array([math.erf(float(v)) for v in xs])
    got = erf32(xs, p, q).astype(np.float64)
    rel = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-38)
    print("P (t^0 ..):", ", ".join(f"{c:.8e}" for c in p))
    print("Q (t^0 ..):", ", ".join(f"{c:.8e}" for c in q))
    print(f"float32: max abs error {np.abs(got - ref).max():.2e}, max relative error {rel.max():.2e}")


if __name__ == "__main__":
    main()
