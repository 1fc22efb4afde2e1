#!/usr/bin/python3
"""Per-call overhead of vkc.InferenceSession.run against the C++ API on the same 1-dispatch
model, in the same run (issue 26's target: within 20 us on lavapipe).

One session, one device: blocks of --block calls of InferenceSession.run alternate with blocks of
the same run through the C++ API alone (the extension's Session.time_cpp_runs: a C++ loop calling
vkc::ModelSession::run with the inputs converted once), --blocks times each, so that load on the
machine and the driver's threads weigh on both alike. Prints the median and minimum per call of
each and the differences. With --cpp-bench (vkc-run-overhead-bench, bench/run_overhead_bench.cpp,
built with -DVKC_BUILD_BENCH=ON) it also runs the C++ API in a process of its own, for reference.

    PYTHONPATH=build/test/python VKC_DEVICE=llvmpipe /usr/bin/python3 bench/python_overhead.py \\
        [--blocks 20] [--block 200] [--elements 256] [--cpp-bench build/test/bench/vkc-run-overhead-bench]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import vkc


def relu_model(path, n):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def python_runs(sess, feed, runs):
    us = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        sess.run(None, feed)
        us.append((time.perf_counter_ns() - t0) / 1e3)
    return us


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--block", type=int, default=200)
    ap.add_argument("--elements", type=int, default=256)
    ap.add_argument("--cpp-bench", default="")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vkc-overhead-") as tmp:
        path = os.path.join(tmp, "relu.onnx")
        relu_model(path, args.elements)
        dispatches = vkc.compile(path).dispatch_count
        sess = vkc.InferenceSession(path)
        x = np.linspace(-1, 1, args.elements, dtype=np.float32)
        feed = {"x": x}
        np.testing.assert_array_equal(sess.run(None, feed)[0], np.maximum(x, 0))
        python_runs(sess, feed, 100)  # warm
        py, cpp, py_medians, cpp_medians = [], [], [], []
        for _ in range(args.blocks):
            p = python_runs(sess, feed, args.block)
            c = sess._session.time_cpp_runs(feed, args.block)
            py += p
            cpp += c
            py_medians.append(statistics.median(p))
            cpp_medians.append(statistics.median(c))
        print("device %s, Relu over f32[%d] (%d dispatch), %d blocks of %d calls each, alternating" % (
            sess.device_name(), args.elements, dispatches, args.blocks, args.block))
        p_med, c_med = statistics.median(py), statistics.median(cpp)
        print("python InferenceSession.run: median %.2f us, min %.2f us" % (p_med, min(py)))
        print("C++ ModelSession::run (same session): median %.2f us, min %.2f us" % (c_med, min(cpp)))
        print("overhead of python: median %+.2f us, min %+.2f us, median of the %d per-block differences %+.2f us" % (
            p_med - c_med, min(py) - min(cpp), args.blocks,
            statistics.median(a - b for a, b in zip(py_medians, cpp_medians))))
        if args.cpp_bench:
            out = subprocess.run([args.cpp_bench, path, "--runs", str(args.block * args.blocks), "--repeats", "1"],
                                 check=True, capture_output=True, text=True).stdout
            print("C++ API in its own process (%s): %s" % (os.path.basename(args.cpp_bench), out.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
