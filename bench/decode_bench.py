#!/usr/bin/env python3
"""Issue 23's decode target: tokens/s of a GPT-2-small-sized decoder with a KV cache, vkc against
PyTorch eager with its own KV cache, in the same run on the same GPU.

The model is samples/charlm's architecture at GPT-2 small's size (12 layers, d 768, 12 heads of
64, MLP 3072, vocab 50257, GELU tanh, tied output projection) with seeded random weights
(export_onnx.gpt2_sized_params): the ONNX decode-step graph comes from samples/charlm/export_onnx.py
(fixed context T; vkc runs it with vkc-sample-charlm --benchmark, the caches on the device), and
PyTorch runs the same weights token by token with a growing torch.cat cache and
scaled_dot_product_attention, fp32 with TF32 off. Both do the same per token: one decode step,
TopK(logits, 40) on the GPU, the 40 values and indices to the host, a seeded host-side draw.
Both are first checked against the float64 numpy decode of the same weights (model.decode_step):
vkc through vkc-sample-charlm --check on 8 teacher-forced steps (the run fails on a mismatch),
PyTorch on its first 3 steps (the worst error is printed).

Usage (GPU machine, from the repository root; carry build/gpu-carry with vkc-sample-charlm):
    python3 bench/decode_bench.py --bin build/gpu-carry [--ctx 256] [--steps 255] [--work /tmp/decode]
Prints a table row: both tokens/s and the ratio vkc / PyTorch tokens/s (>= 1 meets the target).
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "samples", "charlm"))
import export_onnx  # noqa: E402
import model  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")


def attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0 (the GPU machine)
        return F.scaled_dot_product_attention(q, k, v)
    return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1) @ v  # older torch (a CPU smoke test)


class TorchDecoder:
    """The charlm model in PyTorch eager, one token per call, KV cache grown with torch.cat."""

    def __init__(self, params, heads, device):
        self.p = {k: torch.from_numpy(np.ascontiguousarray(v)).to(device) for k, v in params.items()}
        self.heads = heads
        self.d = params["wte"].shape[1]
        self.layers = model.layer_count(params)
        self.cache = [None] * self.layers

    @torch.no_grad()
    def step(self, token, pos, top_k):
        p, d, H = self.p, self.d, self.heads
        x = (p["wte"][token] + p["wpe"][pos]).view(1, 1, d)
        for l in range(self.layers):
            n = f"h{l}."
            a = F.layer_norm(x, (d,), p[n + "ln1_g"], p[n + "ln1_b"], model.EPS)
            q, k, v = torch.addmm(p[n + "bqkv"], a.view(1, d), p[n + "wqkv"]).split(d, dim=1)
            q, k, v = (t.view(1, 1, H, d // H).transpose(1, 2) for t in (q, k, v))  # [1, H, 1, dh]
            if self.cache[l] is not None:
                k = torch.cat([self.cache[l][0], k], dim=2)
                v = torch.cat([self.cache[l][1], v], dim=2)
            self.cache[l] = (k, v)
            o = attention(q, k, v).transpose(1, 2).reshape(1, d)  # one query: no mask
            x = x + torch.addmm(p[n + "bo"], o, p[n + "wo"]).view(1, 1, d)
            m = F.layer_norm(x, (d,), p[n + "ln2_g"], p[n + "ln2_b"], model.EPS)
            h = F.gelu(torch.addmm(p[n + "b1"], m.view(1, d), p[n + "w1"]), approximate="tanh")
            x = x + torch.addmm(p[n + "b2"], h, p[n + "w2"]).view(1, 1, d)
        xf = F.layer_norm(x.view(1, d), (d,), p["lnf_g"], p["lnf_b"], model.EPS)
        values, indices = torch.topk(xf @ p["wte"].T, top_k, dim=-1)
        return values.cpu().numpy()[0], indices.cpu().numpy()[0]  # the host sync, as vkc's download


def sample(values, indices, rng, temperature=0.8):
    w = np.exp((values - values[0]) / temperature)
    return int(indices[min(np.searchsorted(np.cumsum(w), rng.random() * w.sum()), len(w) - 1)])


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def torch_tokens_per_second(params, heads, steps, top_k, device, check_steps=3):
    dec = TorchDecoder(params, heads, device)
    # Correctness first: the first steps against the float64 numpy decode of the same weights.
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    L, dh = model.layer_count(params), params["wte"].shape[1] // heads
    pk = np.zeros((L, heads, check_steps, dh))
    pv = np.zeros_like(pk)
    worst = 0.0
    for pos in range(check_steps):
        logits, pk, pv = model.decode_step(p64, heads, pos + 1, pos, pk, pv)
        values, _ = dec.step(pos + 1, pos, top_k)
        want = np.sort(logits)[::-1][:top_k]
        worst = max(worst, float(np.max(np.abs(values - want) / np.maximum(1, np.abs(want)))))
    print(f"PyTorch vs float64 numpy, first {check_steps} steps: top-{top_k} worst relative error {worst:.2e}")
    rng = np.random.default_rng(1)
    for run in range(2):  # the first run warms up (cuBLAS handles, kernels)
        dec.cache = [None] * dec.layers
        synchronize(device)
        values, indices = dec.step(0, 0, top_k)
        t0 = time.perf_counter()
        for pos in range(1, steps + 1):
            values, indices = dec.step(sample(values, indices, rng), pos, top_k)
        seconds = time.perf_counter() - t0
    return steps / seconds


def vkc_tokens_per_second(bin_dir, onnx_path, reference_dir, steps):
    # --check first: vkc's top 40 of the reference's teacher-forced steps against the float64 numpy
    # decode (exit 1 on a mismatch), then the timed steps, in one process with one compiled module.
    exe = os.path.join(bin_dir, "vkc-sample-charlm")
    out = subprocess.run([exe, "--model", onnx_path, "--check", reference_dir, "--benchmark", str(steps)],
                         capture_output=True, text=True)
    print(out.stdout + out.stderr, end="")
    if out.returncode != 0:
        raise SystemExit(f"{exe} failed ({out.returncode})")
    return float(re.search(r"([0-9.]+) tokens/s", out.stdout).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/gpu-carry", help="directory holding vkc-sample-charlm")
    ap.add_argument("--ctx", type=int, default=256, help="context T (vkc's fixed cache size)")
    ap.add_argument("--steps", type=int, default=None, help="tokens timed after the first (default T - 1)")
    ap.add_argument("--work", default="/tmp/decode_bench")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--device", default="cuda", help="PyTorch's device (cpu: a smoke test of the script)")
    args = ap.parse_args()
    device = torch.device(args.device)
    steps = args.steps or args.ctx - 1
    top_k, heads = 40, args.d_model // 64
    params = export_onnx.gpt2_sized_params(args.vocab, args.d_model, args.layers, args.ctx)
    os.makedirs(args.work, exist_ok=True)
    onnx_path = os.path.join(args.work, f"gpt2_sized_decode_{args.ctx}.onnx")
    reference_dir = os.path.join(args.work, f"reference_{args.ctx}")
    if not os.path.exists(onnx_path):
        import onnx
        onnx.save(export_onnx.build_graph(params, heads, args.ctx, top_k, "gpt2_sized_decode"), onnx_path)
        tokens = np.random.default_rng(2).integers(0, args.vocab, 8)
        export_onnx.write_reference(params, heads, args.ctx, top_k, tokens, reference_dir)
    print(f"model: {args.layers} layers, d {args.d_model}, {heads} heads, vocab {args.vocab}, context {args.ctx}, "
          f"top-{top_k}; {steps} tokens timed; PyTorch {torch.__version__} on "
          f"{torch.cuda.get_device_name() if device.type == 'cuda' else args.device}")
    vkc = vkc_tokens_per_second(args.bin, onnx_path, reference_dir, steps)
    pt = torch_tokens_per_second(params, heads, steps, top_k, device)
    print("| decoder | context | tokens | vkc tokens/s | PyTorch eager tokens/s | vkc / PyTorch |")
    print("|---|---|---|---|---|---|")
    size = "GPT-2-small-sized" if (args.layers, args.d_model, args.vocab) == (12, 768, 50257) else \
        f"{args.layers} layers, d {args.d_model}, vocab {args.vocab}"
    print(f"| {size}, fp32 | {args.ctx} | {steps} | {vkc:.1f} | {pt:.1f} | {vkc / pt:.2f} |")


if __name__ == "__main__":
    main()
