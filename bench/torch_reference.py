#!/usr/bin/env python3
"""The PyTorch half of issue 9's benchmark (vkc_bench writes the other half).

Reads DIR/vkc.json and the .npy files next to it, runs every case through PyTorch on the same GPU
(fp32 with TF32 off, and fp16 where the case is arithmetic), checks vkc's outputs against
PyTorch's, and prints a table whose ratio column is PyTorch time / vkc time (> 1: vkc faster).

Timing mirrors what vkc_bench measures: the vkc runtime copies each input into the program's
buffer right before the dispatches, so here each timed run first copies its input set into the
op's input tensors, and only the op sits between the CUDA events. Two input sets alternate.

Usage: torch_reference.py DIR [--out OUTDIR] [--commit SHA] [--runs N]
Writes OUTDIR/bench.json (everything) and OUTDIR/table.md (the rows for bench/RESULTS.md).
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.set_float32_matmul_precision("highest")
dev = torch.device("cuda")

# Issue 9's targets: (kind, threshold). "ratio": PyTorch fp32 time / vkc time >= threshold;
# "copy": vkc's achieved bytes/s >= threshold * measured copy bandwidth.
TARGETS = {
    "conv_depthwise": [("ratio", 1.5), ("copy", 0.7)],
    "conv_grouped": [("ratio", 1.5)],
    "conv3d": [("ratio", 1.5)],
    "im2col": [("copy", 0.7)],
    "matmul": [("ratio", 0.8)],
    "global_avg_pool": [("copy", 0.7)],
    "topk": [("ratio", 1.5)],
    "sort_16777216": [("ratio", 0.7)],
    "attention_1x12x1024x64": [("ratio", 1.0)],
}


# float16 cases (names ending "_fp16"): tensor cores against vkc's own fp32 row of the same
# shape (>= 2x) and against ggml-vulkan's CONV_2D rate on its two shapes (TFLOP/s, issue 9).
FP16_OVER_OWN_FP32 = 2.0
GGML_CONV2D_TFLOPS = {"conv_ggml_16x256x19x19_f4096_k4_fp16": 139.0,
                      "conv_ggml_1x32x1536x1536_f64_k3_fp16": 50.0}


def targets_for(name):
    # float16 rows have their own targets (below); the fp32 ones do not apply to them.
    if name.endswith("_fp16"):
        return []
    return [t for prefix, ts in TARGETS.items() if name.startswith(prefix) for t in ts]


def op_function(spec):
    """The PyTorch computation of a case: takes a dict of input tensors, returns a dict of outputs
    named as vkc's outputs."""
    op = spec["op"]
    if op in ("conv", "conv_transpose"):
        dims = spec["dims"]
        fn = {("conv", 1): F.conv1d, ("conv", 2): F.conv2d, ("conv", 3): F.conv3d,
              ("conv_transpose", 1): F.conv_transpose1d, ("conv_transpose", 2): F.conv_transpose2d,
              ("conv_transpose", 3): F.conv_transpose3d}[(op, dims)]
        kw = dict(stride=tuple(spec["stride"]), padding=tuple(spec["padding"]), groups=spec["groups"])
        if spec.get("layout") == "channels_last":
            # vkc's x and y are NHWC and w FHWC: as NCHW / OIHW views these are channels_last
            # tensors (no copies), which cuDNN runs as such.
            def nhwc(v):
                return v.permute(0, 3, 1, 2)
            return lambda t: {"y": fn(nhwc(t["x"]), nhwc(t["w"]), t.get("b"), **kw).permute(0, 2, 3, 1)}
        return lambda t: {"y": fn(t["x"], t["w"], t.get("b"), **kw)}
    if op == "im2col":
        # F.unfold gives [N, K, P]; vkc's im2col is [N, P, K]. Timed as unfold alone (same bytes);
        # the transpose is a view for the comparison only.
        kernel, padding = tuple(spec["kernel"]), tuple(spec["padding"])
        return lambda t: {"y": F.unfold(t["x"], kernel, padding=padding)}
    if op == "matmul":  # vkc_bench --matmul MxNxK[+ln][+gelu]
        def matmul(t):
            a = t["a"]
            if spec.get("layer_norm"):
                a = F.layer_norm(a, (a.shape[-1],), t["ln_scale"], t["ln_bias"])
            y = a @ t["b"]
            return {"y": F.gelu(y + t["bias"]) if spec.get("gelu") else y}
        return matmul
    if op == "global_avg_pool":
        return lambda t: {"y": F.adaptive_avg_pool2d(t["x"], 1)}
    if op == "relu":
        return lambda t: {"y": F.relu(t["x"])}
    if op == "gelu_matmul":  # vkc's bench: a transposed lhs is stored [s, b, k]
        if spec.get("transposed"):
            return lambda t: {"y": F.gelu(t["a"].transpose(0, 1)) @ t["b"]}
        return lambda t: {"y": F.gelu(t["a"]) @ t["b"]}
    if op == "sdpa":
        # The backend PyTorch picks for fp32 (TF32 off) shows in the kernel list of the results.
        return lambda t: {"y": F.scaled_dot_product_attention(t["q"], t["k"], t["v"])}
    if op == "topk":
        k = spec["k"]

        def topk(t):
            v, i = torch.topk(t["x"], k, dim=-1)
            return {"values": v, "indices": i}
        return topk
    if op == "sort":
        def sort(t):
            v, i = torch.sort(t["x"], dim=-1)
            return {"sorted": v, "order": i}
        return sort
    if op in ("qdq_conv_int8", "qdq_matmul_int8"):  # vkc's int8 QDQ products: compared with vkc's fp16 rows
        raise ValueError("no PyTorch counterpart (compare with the _fp16 row of the same shape)")
    raise ValueError(f"unknown op {op}")


def time_op(fn, sets, runs, warmup=3):
    """Median ms between CUDA events around fn, inputs rotated between sets (copied in first)."""
    static = {k: v.clone() for k, v in sets[0].items()}
    for i in range(warmup):
        for k in static:
            static[k].copy_(sets[i % len(sets)][k])
        fn(static)
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        for k in static:
            static[k].copy_(sets[i % len(sets)][k])
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(static)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), times


def torch_kernels(fn, inputs):
    """PyTorch's own kernels for one run of fn, from the profiler's trace: name, launch shape,
    registers per thread, shared memory and estimated occupancy, longest first. For rows that miss
    a target: what the library does differently on the same GPU, measured in the same call."""
    import tempfile
    static = {k: v.clone() for k, v in inputs.items()}
    fn(static)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn(static)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        with open(f.name) as g:
            events = json.load(g).get("traceEvents", [])
    kernels = []
    for e in events:
        if e.get("cat") != "kernel":
            continue
        a = e.get("args", {})
        kernels.append({"name": e.get("name", "?"), "us": e.get("dur"), "grid": a.get("grid"),
                        "block": a.get("block"), "registers": a.get("registers per thread"),
                        "shared_bytes": a.get("shared memory"), "warps_per_sm": a.get("warps per SM"),
                        "occupancy_pct": a.get("est. achieved occupancy %")})
    return sorted(kernels, key=lambda k: -(k["us"] or 0))


def rel_l2(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def check_case(case, spec, inputs, ref, vkc):
    """'ok' or 'MISMATCH ...' plus the measured error. Floats: rel L2 <= 1e-4 against PyTorch fp32
    (TF32 off); im2col exactly; topk/sort: values exactly, and the indices must point at those
    values (so ties may pick either index)."""
    op = spec["op"]
    if op in ("conv", "conv_transpose", "matmul", "global_avg_pool", "sdpa", "gelu_matmul"):
        if not torch.isfinite(vkc["y"]).all():
            return "MISMATCH (non-finite)", None
        err = rel_l2(vkc["y"], ref["y"])
        return ("ok" if err <= 1e-4 else "MISMATCH"), err
    if op == "relu":  # exact: no rounding anywhere
        same = torch.equal(vkc["y"], ref["y"])
        return ("ok" if same else "MISMATCH"), 0.0 if same else rel_l2(vkc["y"], ref["y"])
    if op == "im2col":
        same = torch.equal(vkc["y"], ref["y"].transpose(1, 2))
        return ("ok" if same else "MISMATCH"), 0.0 if same else rel_l2(vkc["y"], ref["y"].transpose(1, 2))
    x = inputs["x"]
    if op == "topk":
        v, i = vkc["values"], vkc["indices"].long()
        if not torch.equal(v, ref["values"]):
            return "MISMATCH values", None
        if not torch.equal(torch.gather(x, -1, i), v):
            return "MISMATCH indices", None
        s = torch.sort(i, dim=-1).values
        if not bool((s[..., 1:] != s[..., :-1]).all()):
            return "MISMATCH duplicate indices", None
        return "ok", 0.0
    if op == "sort":
        v, i = vkc["sorted"], vkc["order"].long()
        if not torch.equal(v, ref["sorted"]):
            return "MISMATCH values", None
        if not torch.equal(torch.gather(x, -1, i), v):
            return "MISMATCH order", None
        n = i.shape[-1]
        if not torch.equal(torch.sort(i, dim=-1).values, torch.arange(n, device=dev).expand_as(i)):
            return "MISMATCH order is not a permutation", None
        return "ok", 0.0
    return "unchecked", None


def load(entry):
    return torch.from_numpy(np.load(entry["file"])).to(dev)


def torch_peaks(runs):
    """PyTorch's own copy bandwidth and fp32 matmul rate, for context next to vkc's peaks."""
    n = 1 << 28
    a, b = torch.rand(n, device=dev), torch.empty(n, device=dev)
    ms, _ = time_op(lambda t: b.copy_(t["a"]), [{"a": a}], runs)
    copy_gbps = 2 * 4 * n / (ms * 1e6)
    del a, b
    m = 8192
    x, y = torch.rand(m, m, device=dev), torch.rand(m, m, device=dev)
    ms, _ = time_op(lambda t: t["x"] @ t["y"], [{"x": x, "y": y}], max(5, runs // 4))
    return {"copy_gbps": copy_gbps, "matmul_fp32_8192_gflops": 2 * m ** 3 / (ms * 1e6)}


def run_case(case, peaks, runs):
    spec = case["torch"]
    fn = op_function(spec)
    inputs = {k: load(v) for k, v in case["inputs"].items() if k != "pos"}
    vkc = {k: load(v) for k, v in case["outputs"].items()}
    fp16 = spec.get("dtype") == "f16"
    with torch.no_grad():
        if fp16:
            # The same float16 inputs, computed in fp32 (TF32 off); vkc's fp16 result must be
            # within 1e-2 relative (issue 9's bar for the tensor-core path).
            inputs = {k: v.float() for k, v in inputs.items()}
            ref = fn(inputs)
            err = rel_l2(vkc["y"].float(), ref["y"])
            ok = bool(torch.isfinite(vkc["y"]).all()) and err <= 1e-2
            status = "ok" if ok else "MISMATCH"
        else:
            ref = fn(inputs)
            status, err = check_case(case, spec, inputs, ref, vkc)
        del ref, vkc
        # Set 1: fresh data of the same distribution (vkc_bench's set 1 differs too).
        other = {k: torch.rand_like(v) * 2 - 1 for k, v in inputs.items()}
        sets = [inputs, other]
        t32, times32 = time_op(fn, sets, runs)
        t16 = None
        if spec["op"] in ("conv", "conv_transpose", "matmul", "sdpa", "gelu_matmul"):
            half = [{k: v.half() for k, v in s.items()} for s in sets]
            t16, _ = time_op(fn, half, runs)
            del half
    floor_ms = max(case["flops"] / (peaks["fma_gflops"] * 1e6), case["bytes"] / (peaks["copy_gbps"] * 1e6))
    vkc_ms = case["vkc"]["median_ms"]
    out = {"torch_fp32_ms": t32, "torch_fp32_runs": times32, "torch_fp16_ms": t16, "check": status,
           "rel_l2": err, "ratio": (t16 if fp16 else t32) / vkc_ms, "floor_ms": floor_ms,
           "vkc_roofline": floor_ms / vkc_ms, "torch_roofline": floor_ms / t32,
           "vkc_copy_fraction": case["bytes"] / (vkc_ms * 1e6) / peaks["copy_gbps"]}
    verdicts = []
    for kind, threshold in targets_for(case["name"]):
        value = out["ratio"] if kind == "ratio" else out["vkc_copy_fraction"]
        verdicts.append(f"{'meets' if value >= threshold else 'BELOW'} {kind}>={threshold}")
    out["targets"] = verdicts
    if any(v.startswith("BELOW") for v in verdicts):
        try:
            with torch.no_grad():
                out["torch_kernels"] = torch_kernels(fn, inputs)
        except Exception as e:  # context only; never lose the row for it
            out["torch_kernels_error"] = f"{type(e).__name__}: {e}"
    return out


def achieved(case):
    """vkc's rate in the term that bounds the case: TFLOP/s where it has arithmetic, else GB/s."""
    ms = case["vkc"]["median_ms"]
    if case["flops"]:
        return f"{case['flops'] / (ms * 1e9):.1f} TF/s"
    return f"{case['bytes'] / (ms * 1e6):.0f} GB/s"


def error_note(err):
    return "" if err in (None, 0.0) else f" ({err:.1e})"


def fmt(x, spec="{:.3f}"):
    return "-" if x is None else spec.format(x)


def side_by_side(by_name):
    """Rows below a target: vkc's dispatches (the driver's register counts) next to PyTorch's
    longest kernel (the profiler's), both from this call."""
    side = []
    try:
        for name, case in by_name.items():
            r = case.get("result", {})
            if not r.get("torch_kernels"):
                continue
            ours = []
            for d in case.get("dispatches", []):
                regs = next((s.split("=")[1] for s in d.get("pipeline_statistics", []) if s.startswith("Register Count=")), "?")
                size = d["workgroup_size"][0] * d["workgroup_size"][1] * d["workgroup_size"][2]
                ours.append(f"{d['kernel']} {regs} registers x {size}, {d['workgroup_memory_bytes']} B shared")
            k = r["torch_kernels"][0]
            block = k["block"] or [0]
            theirs = (f"{k['name'][:110]} {k['registers']} registers x {math.prod(block)}, {k['shared_bytes']} B shared, "
                      f"{k['warps_per_sm']} warps/SM, occupancy {k['occupancy_pct']}%")
            side.append(f"{name}: vkc {'; '.join(ours)}. PyTorch {theirs}")
    except Exception as e:  # context only; never lose the table for it
        side.append(f"(side-by-side failed: {type(e).__name__}: {e})")
    return side


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--out", default=None)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--runs", type=int, default=25)
    args = ap.parse_args()
    out_dir = args.out or args.dir
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(args.dir, "vkc.json")) as f:
        report = json.load(f)
    peaks = report["peaks"]
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        driver = "?"
    report["torch"] = {"version": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                       "device": torch.cuda.get_device_name(), "nvidia_driver": driver}
    report["commit"] = args.commit
    report["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        report["torch"]["peaks"] = torch_peaks(args.runs)
    except Exception as e:  # context only; never lose the cases for it
        report["torch"]["peaks_error"] = str(e)

    for case in report.get("cases", []):
        if "error" in case:
            continue
        try:
            case["result"] = run_case(case, peaks, args.runs)
        except Exception as e:
            case["result"] = {"error": f"{type(e).__name__}: {e}"}
        torch.cuda.empty_cache()
        print(f"{case['name']}: {json.dumps({k: v for k, v in case['result'].items() if k != 'torch_fp32_runs'})}",
              flush=True)

    with open(os.path.join(out_dir, "bench.json"), "w") as f:
        json.dump(report, f, indent=1)

    # The table: markdown, so the same rows go into bench/RESULTS.md.
    head = (f"### {report['date']} · {report['torch']['device']} · NVIDIA driver {driver} "
            f"(Vulkan: {report['driver']}) · vkc {args.commit[:12]} · torch {torch.__version__}\n\n"
            f"Measured ceilings (vkc kernels): copy {peaks['copy_gbps']:.0f} GB/s (read+write), "
            f"fp32 FMA {peaks['fma_gflops'] / 1e3:.1f} TFLOP/s")
    tp = report["torch"].get("peaks")
    if tp:
        head += (f"; PyTorch: copy {tp['copy_gbps']:.0f} GB/s, fp32 matmul 8192^3 "
                 f"{tp['matmul_fp32_8192_gflops'] / 1e3:.1f} TFLOP/s")
    if report.get("force_staging"):
        head += ("\n\nRun with vkc_bench --force-staging: vkc's buffers in plain device-local memory, not the "
                 "runtime's default device-local + host-visible (ReBAR) memory.")
    head += ("\n\nratio = PyTorch fp32 ms / vkc ms (> 1: vkc faster). roofline = max(flops / FMA peak, "
             "bytes / copy bandwidth) / time; not shown for *_fp16 rows, whose tensor-core products the fp32 "
             "FMA peak does not bound. Times: median GPU ms (vkc: sum of dispatch timestamps; "
             "PyTorch: CUDA events).\n\n")
    rows = ["| case | vkc ms | torch fp32 ms | ratio | torch fp16 ms | vkc achieved | vkc roofline | torch roofline | check | targets |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    conv_ratios = []
    for case in report.get("cases", []):
        r = case.get("result", {})
        if "error" in case or "error" in r:
            rows.append(f"| {case['name']} | - | - | - | - | - | - | - | ERROR: {(case.get('error') or r.get('error'))[:120]} | |")
            continue
        if case["group"] == "conv":
            conv_ratios.append(r["ratio"])
        fp16 = case["name"].endswith("_fp16")
        roof = "-" if fp16 else f"{100 * r['vkc_roofline']:.1f}%"
        torch_roof = "-" if fp16 else f"{100 * r['torch_roofline']:.1f}%"
        rows.append(f"| {case['name']} | {case['vkc']['median_ms']:.3f} | {r['torch_fp32_ms']:.3f} | "
                    f"{r['ratio']:.2f}x | {fmt(r['torch_fp16_ms'])} | {achieved(case)} | {roof} | "
                    f"{torch_roof} | {r['check']}{error_note(r['rel_l2'])} | "
                    f"{', '.join(r['targets'])} |")
    tail = ""
    by_name = {c["name"]: c for c in report.get("cases", []) if "error" not in c}
    fp16_lines = []
    for name, case in by_name.items():
        if not name.endswith("_fp16"):
            continue
        ms = case["vkc"]["median_ms"]
        own = by_name.get(name[:-len("_fp16")])
        if own:
            x = own["vkc"]["median_ms"] / ms
            fp16_lines.append(f"{name}: {x:.2f}x vkc's fp32 ({'meets' if x >= FP16_OVER_OWN_FP32 else 'BELOW'} "
                              f">= {FP16_OVER_OWN_FP32:.0f}x)")
        if name in GGML_CONV2D_TFLOPS:
            tf = case["flops"] / (ms * 1e9)
            g = GGML_CONV2D_TFLOPS[name]
            fp16_lines.append(f"{name}: {tf:.1f} TFLOP/s against ggml-vulkan's {g:.0f} "
                              f"({'meets' if tf >= g else 'BELOW'})")
    if fp16_lines:
        tail += "\nfloat16 (tensor cores; the ratio column of *_fp16 rows is against PyTorch fp16):\n" + \
            "\n".join(f"- {line}" for line in fp16_lines) + "\n"
    side = side_by_side(by_name)
    if side:
        tail += "\nRows below a target, vkc's kernels and PyTorch's longest one (same call):\n" + \
            "\n".join(f"- {line}" for line in side) + "\n"
    if conv_ratios:
        geo = math.exp(sum(math.log(x) for x in conv_ratios) / len(conv_ratios))
        report["conv_geomean_ratio"] = geo
        tail += (f"\nconv suite geomean ratio: {geo:.2f}x over {len(conv_ratios)} cases "
                f"({'meets' if geo >= 1.0 else 'BELOW'} the 1.0x target)\n")
    table = head + "\n".join(rows) + "\n" + tail
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "bench.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("\n" + table)


if __name__ == "__main__":
    sys.exit(main())
