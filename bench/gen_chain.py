#!/usr/bin/env python3
"""Writes an elementwise chain of N ops as a .vkir graph (issue 24 item 11's compile-time cases).

Usage: bench/gen_chain.py N [--mode fused|random|unfused] [--shape 1x1024] > chain.vkir

  fused    every op consumes the previous result (binary ops also read the second input %y), so
           the chain fuses into elementwise kernels; the op cycle add, relu, mul, sigmoid, sub,
           tanh, max, abs repeats every 8 ops, so equal chunks of the chain compile to the same
           kernel (the SPIR-V cache compiles it once).
  random   as fused, but the ops are drawn from that list at random (fixed seed): no two chunks
           are alike, so every kernel is compiled (the worst case for the SPIR-V stage).
  unfused  v[i] = v[i-1] - v[i-2]: every intermediate has two users, so nothing fuses and the
           module has one dispatch per op (the case for storage, arena and barrier planning).
           The sequence repeats every 6 steps (x, y, y-x, -x, -y, x-y, ...), so values stay finite.
Values stay finite for any N in every mode (sigmoid, tanh and relu bound them). No numpy needed.
"""
import argparse
import random
import sys

OPS = [("add", True), ("relu", False), ("mul", True), ("sigmoid", False),
       ("sub", True), ("tanh", False), ("max", True), ("abs", False)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of ops in the chain (>= 1)")
    parser.add_argument("--mode", choices=["fused", "random", "unfused"], default="fused")
    parser.add_argument("--shape", default="1x1024", help="tensor shape, e.g. 1x1024")
    args = parser.parse_args()
    if args.n < 1:
        parser.error("n must be at least 1")
    ty = f"tensor<{args.shape}xf32>"
    rng = random.Random(24)
    lines = [f"// Elementwise chain of {args.n} ops (bench/gen_chain.py {args.n} --mode {args.mode} "
             f"--shape {args.shape}).",
             f"graph @chain{args.n}(%x: {ty}, %y: {ty}) {{"]
    prev, before = "%x", "%y"
    for i in range(args.n):
        if args.mode == "unfused":
            lines.append(f"  %v{i} = sub ({prev}, {before}) : {ty}")
        else:
            op, binary = OPS[i % len(OPS)] if args.mode == "fused" else rng.choice(OPS)
            operands = f"{prev}, %y" if binary else prev
            lines.append(f"  %v{i} = {op} ({operands}) : {ty}")
        prev, before = f"%v{i}", prev
    lines.append(f"  return {prev} as \"out\"")
    lines.append("}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
