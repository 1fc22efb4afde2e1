#!/usr/bin/env python3
"""Whole-model latency on the GPU machine: ResNet-18 and MobileNetV2 (torchvision, random weights)
exported to ONNX, run by vkc's vk-run (compiled in-process, one command buffer and one submit per
inference) and by PyTorch eager fp32 with TF32 off, in the same process run.

usage (on the GPU machine, from the repository root; bench/run-gpu.sh models does this):
    python3 bench/models.py BIN_DIR OUT_DIR [--runs N]

Per model and batch size it prints, and writes to OUT_DIR/models.json:
  - torch: median wall time of one inference, input already on the GPU, synchronized each run;
  - vkc wall: vk-run's median host-clock time of one inference including the input upload and the
    output download (what an application sees);
  - vkc GPU: the sum of the dispatches' GPU timestamps of one warm inference (--profile);
  - the ratio vkc wall / torch (the issue's target: <= 0.6 at batch 1) and the largest error of
    vkc's logits against PyTorch's, relative to the largest |logit|.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

MODELS = [("resnet18", 1), ("resnet18", 8), ("mobilenet_v2", 1), ("mobilenet_v2", 8)]


def export(model, x, path):
    # The TorchScript exporter gives plain opset-17 graphs; newer torch may only have the dynamo one.
    try:
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"],
                          output_names=["logits"], dynamo=False)
    except TypeError:
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"],
                          output_names=["logits"])


def torch_latency(model, x, runs):
    with torch.no_grad():
        for _ in range(10):
            model(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    work = "/tmp/vkc-models"
    os.makedirs(work, exist_ok=True)
    rows = []
    for name, bs in MODELS:
        tag = f"{name}_bs{bs}"
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(bs, 3, 224, 224)
        onnx_path = f"{work}/{tag}.onnx"
        export(model, x, onnx_path)
        np.save(f"{work}/{tag}_input.npy", x.numpy())
        model = model.cuda()
        xg = x.cuda()
        with torch.no_grad():
            ref = model(xg).float().cpu().numpy()
        t_torch = torch_latency(model, xg, a.runs)

        out_dir = f"{work}/{tag}_out"
        cmd = [f"{a.bin}/vk-run", onnx_path, "--input", f"input={work}/{tag}_input.npy",
               "--benchmark", str(a.runs), "--profile", "--output-dir", out_dir]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        row = {"model": name, "batch": bs, "torch_ms": t_torch}
        if p.returncode != 0:
            row["error"] = (p.stderr or p.stdout).strip().splitlines()[-1:]
            print(f"{tag}: vk-run failed: {row['error']}", flush=True)
            rows.append(row)
            continue
        wall = re.search(r"median ([0-9.]+) ms", p.stdout)
        gpu = re.search(r"total GPU time ([0-9.]+) ms", p.stdout)
        disp = re.search(r"ran (\d+) dispatches", p.stdout)
        got = np.load(f"{out_dir}/logits.npy")
        err = float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))
        row.update({"vkc_wall_ms": float(wall.group(1)), "vkc_gpu_ms": float(gpu.group(1)),
                    "dispatches": int(disp.group(1)), "max_rel_err": err})
        rows.append(row)
        with open(f"{a.out}/{tag}_vkrun.txt", "w") as f:
            f.write(p.stdout)
        print(f"{tag}: torch {t_torch:.3f} ms, vkc wall {row['vkc_wall_ms']:.3f} ms, "
              f"GPU {row['vkc_gpu_ms']:.3f} ms, {row['dispatches']} dispatches, err {err:.1e}", flush=True)

    with open(f"{a.out}/models.json", "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    print("\n| model | batch | dispatches | PyTorch fp32 ms | vkc wall ms | vkc GPU ms | vkc/PyTorch | max rel err |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['batch']} | - | {r['torch_ms']:.3f} | failed | - | - | - |")
            continue
        print(f"| {r['model']} | {r['batch']} | {r['dispatches']} | {r['torch_ms']:.3f} | {r['vkc_wall_ms']:.3f} | "
              f"{r['vkc_gpu_ms']:.3f} | {r['vkc_wall_ms'] / r['torch_ms']:.2f}x | {r['max_rel_err']:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
