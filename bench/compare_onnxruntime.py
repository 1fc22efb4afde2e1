#!/usr/bin/env python3
"""vk-run against ONNX Runtime (CPU) on the same models and inputs, through .npy files, for the
GPU machine (whose Python cannot import a vkc module built on the build machine, so vkc runs
through the vk-run CLI there).

    compare_onnxruntime.py [MODEL.onnx ...] [--vk-run PATH] [--input NAME=FILE.npy ...]
                           [--dim SYMBOL=N ...] [--seed S] [--rtol R] [--atol A] [--precision fp16]

For each model: inputs are the --input files, else random (floats uniform in [-1, 1), integers
in [0, 8), bools random; symbolic dims from --dim, else 1), saved as .npy; vk-run runs the model
with them (--output-dir), ONNX Runtime runs it on the CPU, and each output is compared:
|vkc - ort| <= atol + rtol * |ort| per element (integers and bools exactly; fp16: max abs error /
max abs output <= 5e-3). With no model, a small conv/relu/softmax/topk model made here. Prints
one line per output; exit code 1 when any differs. Where onnxruntime cannot be imported the ORT
side is skipped with a message saying so, and only vk-run's outputs are shown (so the script is
checked on the build machine too); that is the only case in which it skips.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

try:
    import onnxruntime
except ImportError as e:  # only the missing package is tolerated, with a message
    onnxruntime = None
    ORT_MISSING = str(e)

NP_OF_ONNX = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.INT64: np.int64,
              TensorProto.INT32: np.int32, TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8,
              TensorProto.BOOL: np.bool_}


def small_model(path):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.uniform(-0.5, 0.5, (8, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.uniform(-0.1, 0.1, (8,)).astype(np.float32), "b")
    k = numpy_helper.from_array(np.array([5], dtype=np.int64), "k")
    nodes = [helper.make_node("Conv", ["image", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Softmax", ["f"], ["probs"], axis=-1),
             helper.make_node("TopK", ["probs", "k"], ["top", "top_index"], axis=-1)]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                                             ["batch", 3, 16, 16])],
                              [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 8]),
                               helper.make_tensor_value_info("top", TensorProto.FLOAT, ["batch", 5]),
                               helper.make_tensor_value_info("top_index", TensorProto.INT64, ["batch", 5])],
                              [w, b, k])
    # IR version 8 (opset 17's): a newer onnx package writes its own latest IR version by default,
    # which an older onnxruntime refuses to load (seen: IR 14 against ORT's 13 on the GPU machine).
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def safe_file_name(name):
    """vk-run's file stem for an output name (tools/cli_common.cpp)."""
    s = "".join(c if c.isalnum() or c in "_.-" else "_" for c in name)
    return "_" + s if s in ("", ".", "..") else s


def make_inputs(model, given, dims, rng):
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if vi.name in given:
            feeds[vi.name] = np.load(given[vi.name])
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param, 1) for d in tt.shape.dim]
        dtype = NP_OF_ONNX[tt.elem_type]
        if np.issubdtype(dtype, np.floating):
            feeds[vi.name] = rng.uniform(-1, 1, shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[vi.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            feeds[vi.name] = rng.integers(0, 8, shape).astype(dtype)
    return feeds


def compare(vk, ref, rtol, atol, fp16):
    """(ok, detail)"""
    if vk.dtype != ref.dtype or vk.shape != ref.shape:
        return False, "vkc %s %s, ort %s %s" % (vk.dtype, vk.shape, ref.dtype, ref.shape)
    if ref.dtype.kind != "f":
        d = np.abs(vk.astype(np.int64) - ref.astype(np.int64)) if ref.dtype != np.bool_ else (vk != ref)
        bad = int((d != 0).sum())
        return bad == 0, "exact" if bad == 0 else "%d of %d elements differ, max difference %d" % (
            bad, d.size, int(d.max()))
    a, e = vk.astype(np.float64), ref.astype(np.float64)
    err = np.abs(a - e)
    scale = max(float(np.abs(e).max()) if e.size else 0.0, 1e-30)
    if fp16:
        rel = float(err.max()) / scale if e.size else 0.0
        return rel <= 5e-3, "max abs error / max abs output %.3g" % rel
    ok = bool((err <= atol + rtol * np.abs(e)).all()) if e.size else True
    return ok, "max abs error %.3g (max abs output %.3g)" % (float(err.max()) if e.size else 0.0, scale)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*")
    here = os.path.dirname(os.path.abspath(__file__))
    # $VK_RUN, else the GPU machine's carried binary (bench/run-gpu.sh), else a build here.
    candidates = [os.path.join(here, "..", "build", d) for d in ("gpu-carry/vk-run", "test/tools/vk-run")]
    ap.add_argument("--vk-run", default=os.environ.get("VK_RUN") or next(
        (c for c in candidates if os.path.exists(c)), candidates[0]))
    ap.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    ap.add_argument("--dim", action="append", default=[], help="SYMBOL=N for symbolic dims")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "fp16"])
    args = ap.parse_args()
    given = dict(s.split("=", 1) for s in args.input)
    dims = {k: int(v) for k, v in (s.split("=", 1) for s in args.dim)}
    if onnxruntime is None:
        print("onnxruntime is not importable here (%s): the ONNX Runtime side is skipped; "
              "run this on the GPU machine for the comparison" % ORT_MISSING)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="vkc-vs-ort-") as tmp:
        models = args.models
        if not models:
            models = [os.path.join(tmp, "small.onnx")]
            small_model(models[0])
        for path in models:
            model = onnx.load(path)
            feeds = make_inputs(model, given, dims, np.random.default_rng(args.seed))
            work = tempfile.mkdtemp(dir=tmp)
            cmd = [args.vk_run, path, "--output-dir", os.path.join(work, "out"), "--precision", args.precision]
            for name, value in feeds.items():
                f = os.path.join(work, safe_file_name(name) + ".npy")
                np.save(f, value)
                cmd += ["--input", "%s=%s" % (name, f)]
            t0 = time.perf_counter()
            run = subprocess.run(cmd, capture_output=True, text=True)
            vk_s = time.perf_counter() - t0
            if run.returncode != 0:
                print("%s: vk-run failed: %s" % (path, (run.stderr or run.stdout).strip()))
                failures += 1
                continue
            names = [o.name for o in model.graph.output]
            vk_out = {n: np.load(os.path.join(work, "out", safe_file_name(n) + ".npy")) for n in names}
            if onnxruntime is None:
                for n in names:
                    print("%s: %s: vkc %s %s (no ORT to compare with)" % (path, n, vk_out[n].dtype, vk_out[n].shape))
                continue
            sess = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
            t0 = time.perf_counter()
            ref = sess.run(names, feeds)
            ort_s = time.perf_counter() - t0
            for n, r in zip(names, ref):
                ok, detail = compare(vk_out[n], r, args.rtol, args.atol, args.precision == "fp16")
                failures += not ok
                print("%s: %s: %s (%s)" % (path, n, "same" if ok else "DIFFERENT", detail))
            print("%s: vk-run process %.2f s (start, compile, run), onnxruntime run %.3f s" % (path, vk_s, ort_s))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
