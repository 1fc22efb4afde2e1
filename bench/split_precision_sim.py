#!/usr/bin/env python3
"""Would fp32 models stay within issues 21/23's 1e-4 of float64 if their products ran on tensor
cores as sums of float16 or bfloat16 pieces? A simulation in PyTorch on the GPU machine, before any
kernel is written (bench/RESULTS.md, session 34, call 6).

Every Linear and Conv2d of the model zoo's models (random weights, calibrated batch norms) is
computed as the sum of products of pieces: x = x1 + x2 (+ x3), x1 = round(x), x2 = round(x - x1),
..., products of pieces i, j with i + j < n in float32 (TF32 off: a product of two 8- or 11-bit
pieces is exact in float32, as on tensor cores with float32 sums). Prints, per model, the max abs
error over the max abs output against the float64 model for each scheme.

usage (GPU machine, repository root): python3 bench/split_precision_sim.py
"""
import sys, torch
sys.path.insert(0, "bench")
import model_zoo as mz
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
F = torch.nn.functional
orig_linear, orig_conv = F.linear, F.conv2d

def split(t, dt, n):
    pieces, r = [], t
    for _ in range(n):
        p = r.to(dt).float(); pieces.append(p); r = r - p
    return pieces

def emulated(op, dt, n):
    def f(x, w, b=None, *a, **k):
        if x.dtype != torch.float32:
            return op(x, w, b, *a, **k)
        xs, ws = split(x, dt, n), split(w, dt, n)
        out = None
        for i in range(n):
            for j in range(n - i):
                y = op(xs[i], ws[j], None, *a, **k)
                out = y if out is None else out + y
        if b is not None:
            shape = [1] * out.dim(); shape[1 if op is orig_conv else -1] = -1
            out = out + b.view(shape)
        return out
    return f

def err(y, ref):
    return float((y.double().cpu() - torch.from_numpy(ref)).abs().max() / abs(ref).max())

for name, batch in [("vit_b_16", 8), ("resnet50", 8)]:
    model = mz.build(name).cuda()
    x = mz.model_input(name, batch, mz.MODELS[name][0])
    ref = mz.float64_output(model, x)
    row = []
    for label, dt, n in [("fp32", None, 0), ("bf16x1", torch.bfloat16, 1), ("bf16x3", torch.bfloat16, 2),
                         ("bf16x6", torch.bfloat16, 3), ("fp16x1", torch.float16, 1), ("fp16x3", torch.float16, 2)]:
        if dt is None:
            F.linear, F.conv2d = orig_linear, orig_conv
        else:
            F.linear, F.conv2d = emulated(orig_linear, dt, n), emulated(orig_conv, dt, n)
        with torch.enable_grad():  # keeps nn.MultiheadAttention off its fused fast path
            y = model(x).detach()
        row.append(f"{label} {err(y, ref):.1e}")
    F.linear, F.conv2d = orig_linear, orig_conv
    print(name, batch, " | ".join(row), flush=True)
    del model; torch.cuda.empty_cache()
