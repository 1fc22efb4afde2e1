#!/usr/bin/env python3
"""Makes ONNX test cases whose expected outputs come from ONNX Runtime (CPU): for ops Debian's
libonnx-testdata has no node test for (issue 23: GroupNormalization, Mish), and int8 convs and
matmuls whose outputs are the 8-bit (or int32) tensors, compared exactly (issue 22, item 5:
QDQ Conv / MatMul, QLinearConv / QLinearMatMul, ConvInteger / MatMulInteger; bench/int8_cases.py).
Runs on the GPU machine, which has onnxruntime (`bash bench/run-gpu.sh ort-cases`); the cases are
checked in under tests/conformance/ort_cases/ and run by vk-conformance like the node tests
(model.onnx + test_data_set_0/{input,output}_N.pb).

Usage: make_ort_cases.py OUTDIR [--only REGEX] [--numpy-expected] [--no-tar]

For an int8 case ORT's outputs are also compared with bench/int8_cases.py's numpy formula (MLAS's
requantization), with ORT's graph optimizations on (the QDQ form fused into QLinearConv /
QLinearMatMul, as ORT runs it by default; these are the expected outputs written) and off (the
float form op by op): one line each, "formula: exact" or the count of differing elements.
--numpy-expected: no ORT; the int8 cases' expected outputs are the formula's (for a check where
onnxruntime is not installed: tests/conformance/CMakeLists.txt's onnx.conformance_int8_formula);
cases without a formula are left out.
"""
import argparse
import glob
import os
import re
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int8_cases  # noqa: E402


def differences(got, want):
    """'exact', or how many elements differ and by how much at most."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} against {want.dtype}{list(want.shape)}"
    d = np.abs(got.astype(np.int64) - want.astype(np.int64))
    bad = int((d != 0).sum())
    return "exact" if bad == 0 else f"{bad} of {d.size} elements differ (max difference {int(d.max())})"


def run_ort(model, inputs, optimize=True):
    import onnxruntime as ort
    so = ort.SessionOptions()
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = {i.name: v for i, v in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feeds)


def write_case(out, name, model, inputs, expected=None, numpy_only=False):
    """expected: the int8 formula, (inputs) -> ([outputs], ties), or None."""
    d = os.path.join(out, "test_" + name)
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        # GroupNormalization-18 is deprecated by this onnx package (opset 21 replaced it), yet
        # exporters still write it and onnxruntime still runs it: keep the case if ORT does.
        if "deprecated" not in str(e):
            raise
    formula, ties = expected(inputs) if expected else (None, 0)
    if numpy_only:
        outs, source = formula, "numpy formula, no onnxruntime"
    else:
        import onnxruntime as ort
        outs, source = run_ort(model, inputs), f"onnxruntime {ort.__version__}"
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)  # only for a case that ran
    onnx.save(model, os.path.join(d, "model.onnx"))
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    for k, (n, v) in enumerate(zip(names, inputs)):
        t = numpy_helper.from_array(v, n)
        open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb").write(t.SerializeToString())
    for k, (o, v) in enumerate(zip(model.graph.output, outs)):
        t = numpy_helper.from_array(v, o.name)
        open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb").write(t.SerializeToString())
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
    print(f"{name}: ok ({source}), output {outs[0].dtype}{list(outs[0].shape)}, {size // 1024} KB"
          + (f", {ties} rounding ties, {np.unique(formula[0]).size} distinct values" if expected else ""))
    if expected and not numpy_only:
        # Whether ORT follows the formula: with its graph optimizations (QDQ fused into QLinear*,
        # the outputs written) and without (each op on its own, the QDQ form in float).
        print(f"{name}: ORT (optimized) against the formula: {differences(outs[0], formula[0])}")
        plain = run_ort(model, inputs, optimize=False)
        print(f"{name}: ORT (optimizations off) against the formula: {differences(plain[0], formula[0])}")


def group_norm(opset, shape, groups, per_channel, eps=1e-5, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1]
    n = c if per_channel else groups
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    scale = rng.standard_normal(n).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=groups, epsilon=eps)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)),
                                        helper.make_tensor_value_info("scale", TensorProto.FLOAT, [n]),
                                        helper.make_tensor_value_info("bias", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 21 else 10
    return m, [x, scale, bias]


def unary(op, opset, shape, seed=0):
    x = (np.random.default_rng(seed).standard_normal(shape) * 4).astype(np.float32)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m, [x]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--only", default="", help="make only the cases whose name matches this regex")
    ap.add_argument("--numpy-expected", action="store_true",
                    help="no onnxruntime: the int8 cases with the numpy formula's outputs")
    ap.add_argument("--no-tar", action="store_true", help="do not write OUT.tar")
    args = ap.parse_args()
    out = args.out
    cases = {
        "ort_group_normalization_opset18_3groups": lambda: group_norm(18, (2, 6, 5, 4), 3, False),
        "ort_group_normalization_opset18_1group": lambda: group_norm(18, (1, 4, 7), 1, False, seed=1),
        "ort_group_normalization_opset21_2groups": lambda: group_norm(21, (2, 6, 5, 4), 2, True, seed=2),
        "ort_group_normalization_opset21_eps": lambda: group_norm(21, (3, 8, 9), 4, True, eps=0.1, seed=3),
        "ort_mish": lambda: unary("Mish", 18, (3, 4, 5)),
    }
    int8 = {"ort_int8_" + k: v for k, v in int8_cases.cases().items()}
    cases.update(int8)
    # The int8 set is made whole: cases of an earlier set that this one no longer has go.
    if any(re.search(args.only, n) for n in int8):
        for old in glob.glob(os.path.join(out, "test_ort_int8_*")):
            shutil.rmtree(old)
    failed = 0
    for name, make in cases.items():
        if not re.search(args.only, name) or (args.numpy_expected and name not in int8):
            continue
        try:
            write_case(out, name, *make(), numpy_only=args.numpy_expected)
        except Exception as e:  # an op this onnxruntime lacks: say so, make the others
            print(f"{name}: not made: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            failed += 1
    if args.numpy_expected:
        return 1 if failed else 0
    if args.no_tar:
        return 0
    # One archive: the device tool returns only shallow files.
    import tarfile
    with tarfile.open(out.rstrip("/") + ".tar", "w") as tar:
        tar.add(out, arcname=os.path.basename(out.rstrip("/")))


if __name__ == "__main__":
    sys.exit(main())
