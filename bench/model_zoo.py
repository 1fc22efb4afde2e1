#!/usr/bin/env python3
"""Whole torchvision models on the GPU machine: vkc against PyTorch eager and a CUDA-graph replay
(issue 21), every number from the same process run on one card.

Per model, batch and precision (fp32 with TF32 off, the model converted to fp16, "fp16-mode": the
fp32 model compiled by vkc with `--precision fp16`, checked against PyTorch fp32 and timed against
PyTorch's fp16 model, or "fp16x3": the fp32 model compiled with `--precision fp16x3`, its float32
products on tensor cores as float16 pieces, checked and timed against PyTorch fp32 like fp32):
  - the model (random weights, seeded) is exported to ONNX (opset 17, TorchScript exporter);
  - PyTorch eager and a CUDA-graph replay of it, input already on the GPU, synchronized after each
    run ("resident" columns), and eager from a host array to a host array ("host" column);
  - vk-run on the ONNX file: `--benchmark N --device-io` gives both the resident time (inputs and
    outputs in device memory, submit + wait) and the host-to-host time (upload + run + download);
  - vkc's output against PyTorch's: max abs error / max abs output (targets 1e-4 fp32, 2e-3 fp16).
Each case appends one JSON line to OUT/results.jsonl, so the list can be split over several device
calls (each command is limited to 10 minutes): `--models` and `--batches` pick the part.

With `--profile-worst K`, the K cases of this call with the highest vkc / CUDA graph ratio get
vkc's per-dispatch profile grouped by kernel beside the PyTorch profiler's kernels (OUT/profiles.md).

usage (GPU machine, repository root; binaries as bench/run-gpu.sh unpacks them):
    python3 bench/model_zoo.py BIN_DIR OUT [--models a,b] [--batches 1,32] [--precisions fp32,fp16]
                               [--runs N] [--profile-worst K]
    python3 bench/model_zoo.py --table OUT     # results.jsonl -> OUT/table.md (and prints it)
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

# name -> (input shape without the batch, batches, how to build it). Segmentation models return a
# dict; their "out" is compared.
IMAGE = (3, 224, 224)
MODELS = {
    "resnet50": (IMAGE, (1, 32, 128)),
    "resnext50_32x4d": (IMAGE, (1, 32)),
    "mobilenet_v3_large": (IMAGE, (1, 32, 128)),
    "efficientnet_b0": (IMAGE, (1, 32)),
    "regnet_y_400mf": (IMAGE, (1, 32)),
    "shufflenet_v2_x1_0": (IMAGE, (1, 32)),
    "squeezenet1_1": (IMAGE, (1, 32)),
    "densenet121": (IMAGE, (1, 32)),
    "inception_v3": ((3, 299, 299), (1, 32)),
    "mnasnet1_0": (IMAGE, (1, 32)),
    "googlenet": (IMAGE, (1, 32)),
    "fcn_resnet50": ((3, 320, 320), (1, 32)),
    "deeplabv3_mobilenet_v3_large": ((3, 320, 320), (1, 32)),
    "lraspp_mobilenet_v3_large": ((3, 320, 320), (1, 32)),
    "r3d_18": ((3, 16, 112, 112), (1, 32)),
    "r2plus1d_18": ((3, 16, 112, 112), (1, 32)),
    # Transformers (issue 23): torchvision's, and HF BERT-base / GPT-2-small shapes with random
    # weights, fed token ids [batch, 128] (an "ids" input: int64 in [0, vocab)).
    "vit_b_16": (IMAGE, (1, 8)),
    "swin_t": (IMAGE, (1, 8)),
    "convnext_tiny": (IMAGE, (1, 8)),
    "bert_base": ((128,), (1, 8)),
    "gpt2_small": ((128,), (1,)),
    # A LLaMA-style decoder at GPT-2-small's size: RMSNorm, rotary embeddings, 12 query heads over
    # 4 key/value heads (grouped-query attention), SwiGLU; random weights.
    "llama_small": ((128,), (1, 8)),
}
TOKEN_MODELS = {"bert_base": 30522, "gpt2_small": 50257, "llama_small": 32000}  # name -> vocabulary size
TOLERANCE = {"fp32": 1e-4, "fp16": 2e-3, "fp16-mode": 5e-3, "fp16x3": 1e-4}


def vkc_flags(prec):
    """vk-run's options for a precision column: the fp32 model in vkc's own precision modes."""
    return {"fp16-mode": ["--precision", "fp16"], "fp16x3": ["--precision", "fp16x3"]}.get(prec, [])


def build(name):
    """The model with random weights and batch-norm statistics set from one seeded batch."""
    import torch
    model = build_random(name)
    # With torchvision's random init and the default running statistics (mean 0, variance 1),
    # the activations of the deeper CNNs shrink layer by layer: mobilenet_v3_large's logits are
    # ~1e-10, below float16's range, so no fp16 result (vkc's or PyTorch's) can be checked
    # against them. Statistics from a forward pass in training mode keep every layer's output
    # near unit scale, as trained weights would. Same seed, same statistics, on every call.
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if norms and name not in TOKEN_MODELS:
        for m in norms:
            m.reset_running_stats()
            m.momentum = None  # a cumulative average: after one batch, that batch's statistics
        g = torch.Generator().manual_seed(2)
        with torch.no_grad():
            model.train()(torch.randn((2,) + MODELS[name][0], generator=g))
        model.eval()
    return model


def build_random(name):
    import torch
    import torchvision.models as tm
    import torchvision.models.segmentation as ts
    import torchvision.models.video as tv

    class Out(torch.nn.Module):  # segmentation models: the "out" entry of their dict
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    if name in TOKEN_MODELS:
        import transformers

        class Hidden(torch.nn.Module):  # the last hidden state, for one tensor to compare
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, ids):
                if isinstance(self.m, transformers.LlamaModel):
                    # With no mask, transformers' mask code calls torch.diff, which the TorchScript
                    # exporter lacks; an all-ones mask (the same result) exports.
                    return self.m(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
                return self.m(input_ids=ids).last_hidden_state

        if name == "bert_base":
            cfg = transformers.BertConfig(attn_implementation="eager")
            return Hidden(transformers.BertModel(cfg, add_pooling_layer=False))
        if name == "llama_small":
            cfg = transformers.LlamaConfig(vocab_size=32000, hidden_size=768, intermediate_size=2048,
                                           num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4,
                                           max_position_embeddings=1024, use_cache=False,
                                           attn_implementation="eager")
            return Hidden(transformers.LlamaModel(cfg))
        cfg = transformers.GPT2Config(attn_implementation="eager")
        return Hidden(transformers.GPT2Model(cfg))
    if name in ("fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"):
        kw = {} if name.startswith("lraspp") else {"aux_loss": False}
        return Out(getattr(ts, name)(weights=None, weights_backbone=None, **kw))
    if name in ("r3d_18", "r2plus1d_18"):
        return getattr(tv, name)(weights=None)
    if name == "inception_v3":
        return tm.inception_v3(weights=None, aux_logits=False, init_weights=True)
    if name == "googlenet":
        # Its own init (truncated normal, std 0.01) collapses the random-weight logits to one
        # value, against which any output "matches": PyTorch's default init keeps them apart.
        return tm.googlenet(weights=None, aux_logits=False, init_weights=False)
    if name == "vit_b_16":
        # Its classifier is zero-initialized, so random-weight logits would all equal the bias
        # and any output would "match": give it PyTorch's default Linear init instead.
        m = tm.vit_b_16(weights=None)
        m.heads.head.reset_parameters()
        return m
    return getattr(tm, name)(weights=None)


def model_input(name, batch, shape):
    """The seeded input: token ids for the language models, an image (or clip) for the others."""
    import torch
    g = torch.Generator().manual_seed(1)
    if name in TOKEN_MODELS:
        return torch.randint(0, TOKEN_MODELS[name], (batch,) + shape, generator=g).cuda()
    return torch.randn((batch,) + shape, generator=g).cuda()


def export_onnx(model, x, path):
    """The model as vk-run reads it: opset 17, the TorchScript exporter, tensors "input" / "output"."""
    import torch
    # nn.MultiheadAttention's inference fast path (ViT) has no ONNX export.
    torch.backends.mha.set_fastpath_enabled(False)
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"], output_names=["output"],
                          dynamo=False)
    torch.backends.mha.set_fastpath_enabled(True)  # PyTorch's own timings keep it


def host_ms(fn, runs, warmup=5):
    """Median host-clock ms of fn() (which synchronizes)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def float64_output(model, x):
    """The model's output computed in float64 on the GPU (a copy of the model; token ids stay ids)."""
    import copy
    import torch
    with torch.no_grad():
        m = copy.deepcopy(model).double()
        out = m(x.double() if torch.is_floating_point(x) else x).cpu().numpy().astype(np.float64)
    del m
    torch.cuda.empty_cache()
    return out


def torch_times(model, x, runs):
    import torch
    sync = torch.cuda.synchronize
    with torch.no_grad():
        def eager():
            model(x)
            sync()
        eager_ms = host_ms(eager, runs)
        x_host = x.cpu()

        def eager_host():
            model(x_host.cuda()).cpu()
        eager_host_ms = host_ms(eager_host, runs)
        # The CUDA graph: captured after warm-up on a side stream, as PyTorch's docs do it.
        static_x = x.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                static_y = model(static_x)

            def replay():
                graph.replay()
                sync()
            graph_ms = host_ms(replay, runs)
            del static_y
        except RuntimeError:
            # HF models build small CPU tensors in forward, which capture refuses: no graph row.
            graph_ms = None
        reference = model(x).float().cpu().numpy()
    del graph
    return eager_ms, eager_host_ms, graph_ms, reference


def run_vkc(bin_dir, onnx_path, npy, out_dir, runs, profile=False, extra=(), env=None, timeout=400):
    """vk-run's output and wall seconds; `env` adds to the environment (bench/model_ab.py's variants)."""
    cmd = [os.path.join(bin_dir, "vk-run"), onnx_path, "--input", f"input={npy}", "--output-dir", out_dir,
           "--benchmark", str(runs)] + list(extra)
    cmd += ["--profile"] if profile else ["--device-io"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout) else "vk-run failed")
    return p.stdout, wall


def median_of(text, label):
    m = re.search(re.escape(label) + r": \d+ runs, median ([0-9.]+) ms", text)
    return float(m.group(1)) if m else None


def torch_profile(model, x, top=12):
    import torch
    with torch.no_grad():
        model(x)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            model(x)
            torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if t:
            rows.append((t / 1e3, e.count, e.key))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows) or 1.0
    return [(ms, n, key[:90], ms / total) for ms, n, key in rows[:top]]


def vkc_profile_by_kernel(text):
    groups = {}
    for m in re.finditer(r"^\s+d\d+_(\S+)\s+([0-9.]+) ms", text, re.M):
        k = groups.setdefault(m.group(1), [0, 0.0])
        k[0] += 1
        k[1] += float(m.group(2))
    total = sum(v[1] for v in groups.values()) or 1.0
    return sorted(((v[1], v[0], k, v[1] / total) for k, v in groups.items()), reverse=True)


def run_cases(args):
    import torch
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    models = args.models.split(",") if args.models else list(MODELS)
    batches = [int(b) for b in args.batches.split(",")] if args.batches else None
    done = []
    for name in models:
        shape, model_batches = MODELS[name]
        for batch in (b for b in model_batches if batches is None or b in batches):
            for prec in args.precisions.split(","):
                row = {"model": name, "batch": batch, "precision": prec,
                       "input": "x".join(str(d) for d in (batch,) + shape),
                       "device": torch.cuda.get_device_name(), "commit": args.commit}
                try:
                    torch.manual_seed(0)
                    model = build(name).eval().cuda()
                    x = model_input(name, batch, shape)
                    if prec == "fp16":
                        model = model.half()
                        x = x if name in TOKEN_MODELS else x.half()
                    stem = f"{name}_b{batch}_{prec}"
                    if prec == "fp16-mode":
                        # vkc's precision mode (issue 22): the fp32 model compiled with
                        # `--precision fp16`, checked against PyTorch fp32 (bound 5e-3), timed
                        # against PyTorch's fp16 model (its eager and CUDA graph).
                        half = build(name).eval().cuda()
                        half.load_state_dict(model.state_dict())
                        half = half.half()
                        xh = x if name in TOKEN_MODELS else x.half()
                    onnx_path = os.path.join(work, stem + ".onnx")
                    t0 = time.perf_counter()
                    export_onnx(model, x, onnx_path)
                    row["export_s"] = round(time.perf_counter() - t0, 1)
                    eager, eager_host, graph, ref = torch_times(model, x, args.runs)
                    if prec == "fp16-mode":
                        eager, eager_host, graph, half_out = torch_times(half, xh, args.runs)
                        del half
                        # PyTorch's own fp16 model against its fp32 one: the error any fp16
                        # execution of these weights has, beside vkc's.
                        hw, rw = half_out.astype(np.float64), ref.astype(np.float64)
                        row["torch_fp16_error"] = float(np.max(np.abs(hw - rw)) / max(np.max(np.abs(rw)), 1e-30))
                    row.update(eager_ms=eager, eager_host_ms=eager_host, graph_ms=graph)
                    npy = os.path.join(work, stem + "_input.npy")
                    np.save(npy, x.cpu().numpy())
                    outdir = os.path.join(work, stem + "_out")
                    text, wall = run_vkc(args.bin, onnx_path, npy, outdir, args.runs,
                                         extra=vkc_flags(prec))
                    row["vkc_process_s"] = round(wall, 2)
                    row["vkc_host_ms"] = median_of(text, "benchmark")
                    row["vkc_resident_ms"] = median_of(text, "benchmark (device-resident inputs and outputs)")
                    m = re.search(r"ran (\d+) dispatches", text)
                    b = re.search(r"\((\d+) barriers, arena ([0-9.]+) MiB\)", text)
                    row["barriers"] = int(b.group(1)) if b else None
                    row["arena_mib"] = float(b.group(2)) if b else None
                    row["dispatches"] = int(m.group(1)) if m else None
                    got = np.load(os.path.join(outdir, "output.npy")).astype(np.float64)
                    want = ref.astype(np.float64)
                    row["error"] = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)) \
                        if got.shape == want.shape else f"shape {got.shape} != {want.shape}"
                    if isinstance(row["error"], float) and float(np.ptp(want)) <= 1e-6 * max(np.max(np.abs(want)), 1e-30):
                        row["error"] = "PyTorch's output is constant: the check says nothing"
                    row["ok"] = isinstance(row["error"], float) and row["error"] <= TOLERANCE[prec]
                    if prec in ("fp32", "fp16x3") and isinstance(row["error"], float) and not args.skip_fp64:
                        # Both fp32 results against PyTorch in float64: whether a difference from
                        # PyTorch fp32 is vkc's rounding or cuDNN's (their sums run in other orders).
                        exact = float64_output(model, x)
                        scale = max(np.max(np.abs(exact)), 1e-30)
                        row["error_vs_fp64"] = float(np.max(np.abs(got - exact)) / scale)
                        row["torch_error_vs_fp64"] = float(np.max(np.abs(want - exact)) / scale)
                    if graph:
                        row["vkc_over_graph"] = row["vkc_resident_ms"] / graph
                    row["vkc_over_eager"] = row["vkc_resident_ms"] / eager
                except Exception as e:  # one failing model must not cost the others' numbers
                    row["failure"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"[:300]
                print(json.dumps(row), flush=True)
                with open(os.path.join(args.out, "results.jsonl"), "a") as f:
                    f.write(json.dumps(row) + "\n")
                done.append(row)
                torch.cuda.empty_cache()
    if args.profile_worst:
        # HF models cannot be captured in a CUDA graph: they are ranked by their ratio to eager.
        ratio = lambda r: r.get("vkc_over_graph", r.get("vkc_over_eager"))
        worst = sorted((r for r in done if ratio(r)), key=lambda r: -ratio(r))
        with open(os.path.join(args.out, "profiles.md"), "a") as f:
            for r in worst[:args.profile_worst]:
                stem = f"{r['model']}_b{r['batch']}_{r['precision']}"
                text, _ = run_vkc(args.bin, os.path.join(work, stem + ".onnx"), os.path.join(work, stem + "_input.npy"),
                                  os.path.join(work, stem + "_prof"), 5, profile=True,
                                  extra=vkc_flags(r["precision"]))
                torch.manual_seed(0)
                model = build(r["model"]).eval().cuda()
                x = model_input(r["model"], r["batch"], MODELS[r["model"]][0])
                if r["precision"] in ("fp16", "fp16-mode"):
                    model = model.half()
                    x = x if r["model"] in TOKEN_MODELS else x.half()
                ref = (f"CUDA graph {r['graph_ms']:.3f} ms" if "vkc_over_graph" in r else
                       f"eager {r['eager_ms']:.3f} ms")
                f.write(f"\n### {stem}: vkc {r['vkc_resident_ms']:.3f} ms resident, {ref} "
                        f"({ratio(r):.2f}x)\n\n| vkc kernel | dispatches | ms | share |\n|---|---:|---:|---:|\n")
                for ms, n, k, share in vkc_profile_by_kernel(text)[:10]:
                    f.write(f"| {k} | {n} | {ms:.3f} | {share:.0%} |\n")
                f.write("\n| PyTorch kernel | calls | ms | share |\n|---|---:|---:|---:|\n")
                for ms, n, k, share in torch_profile(model, x):
                    f.write(f"| {k} | {n} | {ms:.3f} | {share:.0%} |\n")
        print(open(os.path.join(args.out, "profiles.md")).read())


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(out):
    rows = [json.loads(line) for line in open(os.path.join(out, "results.jsonl")) if line.strip()]
    lines = ["| model | input | prec | dispatches | vkc resident ms | CUDA graph ms | eager ms | vkc / graph "
             "| vkc host ms | eager host ms | vkc / eager (host) | error |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['model']} | {r['input']} | {r['precision']} | | | | | | | | | FAILED: {r['failure']} |")
            continue
        err = r["error"] if isinstance(r["error"], str) else f"{r['error']:.1e}{'' if r['ok'] else ' (over)'}"
        if "error_vs_fp64" in r:
            err += f" (vs float64: vkc {r['error_vs_fp64']:.1e}, PyTorch {r['torch_error_vs_fp64']:.1e})"
        if "torch_fp16_error" in r:
            err += f" (PyTorch fp16: {r['torch_fp16_error']:.1e})"
        graph_ms = f"{r['graph_ms']:.3f}" if r.get("graph_ms") else "- (not capturable)"
        over = f"{r['vkc_over_graph']:.2f}" if "vkc_over_graph" in r else "-"
        disp = f"{r['dispatches']}" + (f" ({r['barriers']} barriers, arena {r['arena_mib']:.1f} MiB)"
                                       if r.get("barriers") is not None else "")
        lines.append(f"| {r['model']} | {r['input']} | {r['precision']} | {disp} | {r['vkc_resident_ms']:.3f} "
                     f"| {graph_ms} | {r['eager_ms']:.3f} | {over} | {r['vkc_host_ms']:.3f} "
                     f"| {r['eager_host_ms']:.3f} | {r['vkc_host_ms'] / r['eager_host_ms']:.2f} | {err} |")
    ok = [r for r in rows if "failure" not in r and "vkc_over_graph" in r]
    lines.append("")
    for prec in ("fp32", "fp16", "fp16-mode"):
        for batch in sorted({r["batch"] for r in ok}):
            sel = [r for r in ok if r["precision"] == prec and r["batch"] == batch]
            if sel:
                lines.append(f"- {prec} batch {batch}: {len(sel)} models, geomean vkc / CUDA graph "
                             f"{geomean([r['vkc_over_graph'] for r in sel]):.2f} (worst "
                             f"{max(sel, key=lambda r: r['vkc_over_graph'])['model']} "
                             f"{max(r['vkc_over_graph'] for r in sel):.2f}), vkc / eager host-to-host "
                             f"{geomean([r['vkc_host_ms'] / r['eager_host_ms'] for r in sel]):.2f}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin", nargs="?")
    ap.add_argument("out")
    ap.add_argument("--models")
    ap.add_argument("--batches")
    ap.add_argument("--precisions", default="fp32")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--profile-worst", type=int, default=0)
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--skip-fp64", action="store_true",
                    help="skip the float64 run that tells vkc's rounding from PyTorch's (fp32; slow for transformers)")
    args = ap.parse_args()
    if args.table:
        table(args.out)
        return
    if not args.bin:
        sys.exit("usage: model_zoo.py BIN_DIR OUT [...] (see --help)")
    unknown = [m for m in (args.models or "").split(",") if m and m not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {unknown}; known: {', '.join(MODELS)}")
    run_cases(args)
    table(args.out)


if __name__ == "__main__":
    main()
