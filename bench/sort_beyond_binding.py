#!/usr/bin/env python3
"""A sort along one axis longer than one binding (issue 25), on the GPU machine.

Writes keys with many ties (normal floats rounded to 1e-3) and their positions as an i32 payload,
sorts them with vk-run (the range split cuts the axis into blocks: codegen/range_split_sort.cpp),
and checks the sorted keys and payload exactly against torch.sort(stable=True) on the GPU (the
payload checks that equal keys keep their input order). Then times vk-run's device-resident runs
against torch.sort of the same tensor in the same process.

usage: python3 bench/sort_beyond_binding.py VK_RUN WORK_DIR [--n N] [--runs R]
"""
import argparse
import os
import re
import subprocess
import time

import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vk_run")
    ap.add_argument("work")
    ap.add_argument("--n", type=int, default=1_200_000_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    n = a.n
    ir = os.path.join(a.work, "sort.vkir")
    with open(ir, "w") as f:
        f.write(f"graph @long_sort(%x: tensor<{n}xf32>, %p: tensor<{n}xi32>) {{\n"
                f"  %v, %q = sort \"long\" (%x, %p) {{axis = 0}} : tensor<{n}xf32>, tensor<{n}xi32>\n"
                f"  return %v as \"sorted\", %q as \"order\"\n}}\n")
    g = torch.Generator(device="cuda").manual_seed(25)
    x = torch.round(torch.randn(n, device="cuda", generator=g) * 1000) / 1000
    p = torch.arange(n, device="cuda", dtype=torch.int32)
    np.save(os.path.join(a.work, "x.npy"), x.cpu().numpy())
    np.save(os.path.join(a.work, "p.npy"), p.cpu().numpy())
    del p
    print(f"keys: {n} f32 ({n * 4 / 2**30:.2f} GiB each, keys and payload)", flush=True)
    out = os.path.join(a.work, "out")
    t0 = time.time()
    r = subprocess.run([a.vk_run, ir, "--input", f"x={a.work}/x.npy", "--input", f"p={a.work}/p.npy",
                        "--output-dir", out, "--no-cache"], capture_output=True, text=True)
    print(r.stdout[-2000:], r.stderr[-2000:], f"(vk-run {time.time() - t0:.1f} s wall)", flush=True)
    if r.returncode != 0:
        raise SystemExit("vk-run failed")
    v = torch.from_numpy(np.load(os.path.join(out, "sorted.npy"))).cuda()
    q = torch.from_numpy(np.load(os.path.join(out, "order.npy"))).cuda()
    ref_v, ref_i = torch.sort(x, stable=True)
    keys_ok = torch.equal(v, ref_v)
    order_ok = torch.equal(q.long(), ref_i)
    print(f"check against torch.sort(stable=True): keys {'exact' if keys_ok else 'DIFFER'}, "
          f"payload (input order of equal keys) {'exact' if order_ok else 'DIFFERS'}", flush=True)
    del v, q, ref_v, ref_i
    # Timing: vk-run's device-resident runs against torch.sort in this process.
    r = subprocess.run([a.vk_run, ir, "--input", f"x={a.work}/x.npy", "--input", f"p={a.work}/p.npy",
                        "--benchmark", str(a.runs), "--device-io", "--no-cache"], capture_output=True, text=True)
    m = re.search(r"benchmark \(device-resident inputs and outputs\): \d+ runs, median ([0-9.]+) ms", r.stdout)
    vk_ms = float(m.group(1)) if m else float("nan")
    times = []
    for _ in range(a.runs + 1):
        torch.cuda.synchronize()
        t = time.perf_counter()
        torch.sort(x, stable=True)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1000)
    torch_ms = sorted(times[1:])[len(times[1:]) // 2]
    print(f"RESULT n={n} vkc {vk_ms:.1f} ms, torch.sort(stable) {torch_ms:.1f} ms, ratio {vk_ms / torch_ms:.2f}, "
          f"keys {'exact' if keys_ok else 'DIFFER'}, payload {'exact' if order_ok else 'DIFFERS'}")
    if not (keys_ok and order_ok):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
