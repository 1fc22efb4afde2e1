#!/usr/bin/env python3
"""Makes ONNX test cases whose expected outputs come from ONNX Runtime (CPU), for ops Debian's
libonnx-testdata has no node test for (issue 23: GroupNormalization, Mish). Runs on the GPU
machine, which has onnxruntime; the cases are checked in under tests/conformance/ort_cases/ and
run by vk-conformance like the node tests (model.onnx + test_data_set_0/{input,output}_N.pb).

Usage: make_ort_cases.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def write_case(out, name, model, inputs):
    d = os.path.join(out, "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        # GroupNormalization-18 is deprecated by this onnx package (opset 21 replaced it), yet
        # exporters still write it and onnxruntime still runs it: keep the case if ORT does.
        if "deprecated" not in str(e):
            raise
    onnx.save(model, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: v for i, v in zip(sess.get_inputs(), inputs)}
    outs = sess.run(None, feeds)
    for k, (n, v) in enumerate(feeds.items()):
        t = numpy_helper.from_array(v, n)
        open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb").write(t.SerializeToString())
    for k, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
        t = numpy_helper.from_array(v, o.name)
        open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb").write(t.SerializeToString())
    print(f"{name}: ok (onnxruntime {ort.__version__}), output {outs[0].shape}")


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
    out = sys.argv[1]
    cases = {
        "ort_group_normalization_opset18_3groups": lambda: group_norm(18, (2, 6, 5, 4), 3, False),
        "ort_group_normalization_opset18_1group": lambda: group_norm(18, (1, 4, 7), 1, False, seed=1),
        "ort_group_normalization_opset21_2groups": lambda: group_norm(21, (2, 6, 5, 4), 2, True, seed=2),
        "ort_group_normalization_opset21_eps": lambda: group_norm(21, (3, 8, 9), 4, True, eps=0.1, seed=3),
        "ort_mish": lambda: unary("Mish", 18, (3, 4, 5)),
    }
    for name, make in cases.items():
        try:
            write_case(out, name, *make())
        except Exception as e:  # an op this onnxruntime lacks: say so, make the others
            print(f"{name}: not made: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    # One archive: the device tool returns only shallow files.
    import tarfile
    with tarfile.open(out.rstrip("/") + ".tar", "w") as tar:
        tar.add(out, arcname=os.path.basename(out.rstrip("/")))


if __name__ == "__main__":
    main()
