#!/usr/bin/env python3
"""Before/after of whole models: the same exported ONNX files timed by two vkc variants in one call.

A variant is a directory of binaries (`vk-run` inside; an older build carried beside the new one)
and optionally environment settings for it. Each model is exported once (as bench/model_zoo.py
does: same seeds, same exporter), then per model and batch: each variant runs once to compile
into its own module cache (untimed: a first run in a process that has just compiled measured up
to 3x slow on the H200, session 40), then the variants alternate for --rounds rounds of
`vk-run --benchmark N --device-io` (resident median, host clock). The table gives each round's
median, new / base of the medians over rounds, and the largest difference between the two
variants' outputs relative to the largest base output (a variant that computes something else
shows there). Every vk-run has a timeout, and --max-seconds stops the call early with the table
of what finished, so one slow case cannot eat a device call.

usage (GPU machine, repository root):
    python3 bench/model_ab.py BASE_BIN NEW_BIN OUT --models a,b [--batches 1,32] [--rounds 2]
                              [--runs 20] [--base-env K=V,...] [--new-env K=V,...] [--max-seconds S]
                              [--onnx-dir DIR]
  BASE_BIN and NEW_BIN may be the same directory with different --base-env / --new-env.
  --onnx-dir: use DIR/NAME_bB_fp32.onnx and DIR/NAME_bB_fp32_input.npy (a model_zoo.py work
  directory) instead of exporting; no PyTorch needed then.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (cli.model_ab runs this from it)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo as mz  # noqa: E402  (imports torch only where it exports)


def parse_env(text):
    env = {}
    for item in filter(None, (text or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            sys.exit(f"bad environment setting '{item}' (want KEY=VALUE)")
        env[key] = value
    return env


def export(models, batches, work):
    """NAME_bB_fp32.onnx and its seeded input, as model_zoo.py writes them."""
    import torch
    unknown = [m for m in models if m not in mz.MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {unknown}; known: {', '.join(mz.MODELS)}")
    for name in models:
        torch.manual_seed(0)
        model = mz.build(name).eval().cuda()
        for batch in batches:
            if batch not in mz.MODELS[name][1]:
                continue
            stem = os.path.join(work, f"{name}_b{batch}_fp32")
            x = mz.model_input(name, batch, mz.MODELS[name][0])
            mz.export_onnx(model, x, stem + ".onnx")
            np.save(stem + "_input.npy", x.cpu().numpy())
        del model
        torch.cuda.empty_cache()


def run(variant, stem, out_dir, runs, timeout):
    """Resident median (ms) of one vk-run, or None; its outputs go to out_dir."""
    bin_dir, env, cache = variant
    try:
        text, _ = mz.run_vkc(bin_dir, stem + ".onnx", stem + "_input.npy", out_dir, runs,
                             env={**env, "VKC_CACHE_DIR": cache}, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {os.path.basename(stem)}: vk-run timed out after {timeout} s", flush=True)
        return None
    except RuntimeError as e:
        print(f"  {os.path.basename(stem)}: vk-run failed: {e}", flush=True)
        return None
    t = mz.median_of(text, "benchmark (device-resident inputs and outputs)")
    if t is None:
        print(f"  {os.path.basename(stem)}: vk-run printed no resident median", flush=True)
    return t


def output_difference(base_dir, new_dir):
    """max |new - base| / max |base| over the output .npy files both wrote (None if none)."""
    worst = None
    for f in sorted(os.listdir(base_dir)):
        if not f.endswith(".npy") or not os.path.exists(os.path.join(new_dir, f)):
            continue
        a = np.load(os.path.join(base_dir, f)).astype(np.float64)
        b = np.load(os.path.join(new_dir, f)).astype(np.float64)
        if a.shape != b.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(a))) if a.size else 0.0, 1e-30)
        d = float(np.max(np.abs(a - b))) / scale if a.size else 0.0
        worst = d if worst is None else max(worst, d)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base_bin")
    ap.add_argument("new_bin")
    ap.add_argument("out")
    ap.add_argument("--models", required=True)
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--base-env", default="")
    ap.add_argument("--new-env", default="")
    ap.add_argument("--max-seconds", type=float, default=500)
    ap.add_argument("--timeout", type=float, default=120, help="seconds one vk-run may take")
    ap.add_argument("--onnx-dir")
    args = ap.parse_args()
    start = time.monotonic()
    models = args.models.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    work = args.onnx_dir or os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    if not args.onnx_dir:
        export(models, batches, work)
    variants = {"base": (args.base_bin, parse_env(args.base_env), os.path.join(args.out, "cache-base")),
                "new": (args.new_bin, parse_env(args.new_env), os.path.join(args.out, "cache-new"))}
    rows = []
    cases = [(name, batch) for name in models for batch in batches]
    for name, batch in cases:
        stem = os.path.join(work, f"{name}_b{batch}_fp32")
        if not os.path.exists(stem + ".onnx"):
            continue
        if time.monotonic() - start > args.max_seconds:
            print(f"stopping before {name} b{batch}: --max-seconds {args.max_seconds:g} reached", flush=True)
            break
        outs = {side: os.path.join(args.out, "outputs", f"{name}_b{batch}", side) for side in variants}
        for side, v in variants.items():  # compile and warm; untimed
            os.makedirs(outs[side], exist_ok=True)
            run(v, stem, outs[side], 3, args.timeout)
        times = {side: [] for side in variants}
        for _ in range(args.rounds):
            for side, v in variants.items():
                t = run(v, stem, outs[side], args.runs, args.timeout)
                if t is not None:
                    times[side].append(t)
        rows.append((name, batch, times, output_difference(outs["base"], outs["new"])))
        print(f"{name} b{batch}: base {times['base']} new {times['new']}", flush=True)
    print("\n| model | batch | base ms | new ms | new / base | output difference |")
    print("| --- | ---: | --- | --- | ---: | ---: |")
    for name, batch, times, diff in rows:
        ratio = (f"{statistics.median(times['new']) / statistics.median(times['base']):.3f}"
                 if times["base"] and times["new"] else "-")
        fmt = lambda ts: " ".join(f"{t:.3f}" for t in ts) or "-"
        print(f"| {name} | {batch} | {fmt(times['base'])} | {fmt(times['new'])} | {ratio} | "
              f"{'-' if diff is None else f'{diff:.1e}'} |")


if __name__ == "__main__":
    main()
